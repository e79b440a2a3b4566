"""``stgnn-diag train``: train a zoo model on a data set, test it, compare it with the baselines."""
from __future__ import annotations

import argparse

from .common import add_data_args


def run(args) -> int:
    from ..baselines import BASELINES
    from .._values import parse_key_values
    from ..datasets.registry import DEFAULT_DATASET, check_dataset_name, dataset_slug
    from ..training import TrainConfig, evaluate, train
    from ..training.budgets import budget_overrides

    overrides = parse_key_values(args.set)
    if args.hidden_size is not None:
        overrides["hidden_size"] = args.hidden_size
    dataset = check_dataset_name(args.dataset or DEFAULT_DATASET)
    where = "" if dataset == DEFAULT_DATASET else f"{dataset_slug(dataset)}-"
    w = "" if args.window == 12 else f"-w{args.window}"
    out = args.out or f"runs/{args.model}-{where}{args.protocol}-h{args.horizon}{w}-{args.budget}-s{args.seed}"
    cfg = TrainConfig(model=args.model, out=out, dataset=dataset, protocol=args.protocol, horizon=args.horizon, window=args.window,
                      align_window=args.align_window,
                      budget=args.budget, seed=args.seed, covariates=args.covariates, data_root=args.data_root,
                      model_overrides=overrides or None, max_windows=args.max_windows,
                      **budget_overrides(args), max_steps=args.max_steps, max_time=args.max_time,
                      accelerator=args.accelerator, devices=args.devices,
                      strategy=args.strategy, num_nodes=args.num_nodes, progress=not args.no_progress,
                      resume=args.resume, overwrite=args.overwrite, diag_schedule=args.diag_schedule,
                      checkpoint_every_n_steps=args.checkpoint_every)
    result = train(cfg)
    if not result:  # non-zero DDP rank
        return 0
    rows = [result]
    if not args.no_baselines:
        for b in BASELINES:
            rows.append(evaluate(b, data_root=args.data_root, dataset=dataset, protocol=args.protocol, horizon=args.horizon,
                                 window=args.window, align_window=args.align_window, max_windows=args.max_windows,
                                 progress=False))
    print(f"\nrun folder: {out}  (metrics.json, metrics.csv, loss_curve.png, checkpoints/)")
    length = (f", --max-time {args.max_time}: {result['global_steps']} steps (repeat with --max-steps "
              f"{result['schedule_steps']})") if args.max_time else ""
    from ..datasets.registry import display_name

    print(f"test set of {display_name(dataset)}, protocol {args.protocol}, horizon {args.horizon}, budget {args.budget}{length}, "
          f"trained {result['train_time_s']} s:\n")
    from ..tables import format_metrics_table

    print(format_metrics_table(rows, horizon=args.horizon))
    return 0


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``train`` on an ``argparse`` sub-parser collection."""
    from ..training.budgets import add_budget_arguments

    p = subparsers.add_parser("train", help="train a zoo model on a data set, test it, compare with the baselines",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--model", required=True, help="zoo name (see `stgnn-diag models`)")
    p.add_argument("--budget", default="cpu-small", help="preset: cpu-small (smoke test, <= 10 min on 2 cores), "
                   "cpu-15min (about 15 min of training on 2 cores) or paper (GPU)")
    p.add_argument("--protocol", default="dcrnn", help="dcrnn (canonical) or paper (the ESANN authors' split)")
    p.add_argument("--horizon", type=int, default=12, help="predicted steps (12 or 36)")
    p.add_argument("--window", type=int, default=12, help="input steps")
    p.add_argument("--align-window", type=int, metavar="T", help="score on the target windows of inputs of T "
                   "steps (T >= --window): runs at different --window compare on identical targets")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--covariates", default="auto", help="none, tod, tod_dow, or auto (the entry's choice)")
    p.add_argument("--out", help="run folder (default runs/<model>-[<dataset>-]<protocol>-h<H>-<budget>-s<seed>)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its last checkpoint")
    p.add_argument("--overwrite", action="store_true", help="start over in an --out that holds a run")
    p.add_argument("--checkpoint-every", type=int, default=25, metavar="STEPS",
                   help="refresh checkpoints/last.ckpt every this many steps (and at every epoch's end): what a killed "
                   "run can lose; a resume may change it")
    add_budget_arguments(p)
    p.add_argument("--max-steps", type=int, help="train exactly this many steps (the schedule's length; repeats "
                   "a --max-time run with the steps its metrics.json records)")
    p.add_argument("--max-time", metavar="DURATION", help="wall-clock budget, e.g. 15m, 90s, 1h30m: the steps that "
                   "fit are fixed after a short calibration and recorded (schedule_steps in metrics.json)")
    p.add_argument("--hidden-size", type=int)
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="any other model override (repeatable)")
    p.add_argument("--diag-schedule", metavar="PARAM:START:END:EPOCHS[:SHAPE]",
                   help="ramp diag_p or diag_penalty over epochs, e.g. diag_p:0:0.3:5 (linear/cosine)")
    p.add_argument("--accelerator", default="cpu", help="Lightning accelerator: cpu, gpu, auto")
    p.add_argument("--devices", default=1, type=lambda s: s if s == "auto" else int(s))
    p.add_argument("--strategy", default="auto", help="Lightning strategy, e.g. ddp")
    p.add_argument("--num-nodes", type=int, default=1, help="machines for multi-node DDP")
    p.add_argument("--no-baselines", action="store_true", help="do not evaluate the baselines after training")
    add_data_args(p)
    p.set_defaults(func=run)
    return p
