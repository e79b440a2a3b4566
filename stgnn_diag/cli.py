"""The ``stgnn-diag`` command line: ``models``, ``train``, ``evaluate``, ``bench``, ``sensitivity``."""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Dict, List, Optional



def _models(args) -> int:
    from .zoo import get_entry, list_models
    from .zoo.cards import parameter_count, render_card

    if args.card:
        if ":" in args.card:
            raise ValueError(f"{args.card!r} is an integration entry (its library documents it): no card here.")
        get_entry(args.card)  # an unknown name: one line with the closest names
        print(render_card(args.card), end="")
        return 0
    names = list_models(args.pattern)
    if not names:
        print(f"stgnn-diag models: no zoo entry matches {args.pattern!r} (`stgnn-diag models` lists them all)",
              file=sys.stderr)
        return 2
    width = max((len(n) for n in names), default=10)
    print(f"{'name':{width}s}  {'params':>8s}  summary")
    for n in names:
        if ":" in n:
            print(f"{n:{width}s}  {'-':>8s}  (integration entry)")
            continue
        print(f"{n:{width}s}  {parameter_count(n):8d}  {get_entry(n).summary}")
    return 0


def _train(args) -> int:
    from .baselines import BASELINES
    from .bench.grid import parse_key_values
    from .datasets.registry import DEFAULT_DATASET, check_dataset_name, dataset_slug
    from .training import TrainConfig, evaluate, train
    from .training.budgets import budget_overrides

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
                      resume=args.resume, overwrite=args.overwrite, diag_schedule=args.diag_schedule)
    result = train(cfg)
    if not result:  # non-zero DDP rank
        return 0
    rows = [result]
    if not args.no_baselines:
        for b in BASELINES:
            rows.append(evaluate(b, data_root=args.data_root, dataset=dataset, protocol=args.protocol, horizon=args.horizon,
                                 window=args.window, max_windows=args.max_windows, progress=False))
    print(f"\nrun folder: {out}  (metrics.json, metrics.csv, loss_curve.png, checkpoints/)")
    length = (f", --max-time {args.max_time}: {result['global_steps']} steps (repeat with --max-steps "
              f"{result['schedule_steps']})") if args.max_time else ""
    from .datasets.registry import display_name

    print(f"test set of {display_name(dataset)}, protocol {args.protocol}, horizon {args.horizon}, budget {args.budget}{length}, "
          f"trained {result['train_time_s']} s:\n")
    from .tables import format_metrics_table

    print(format_metrics_table(rows, horizon=args.horizon))
    return 0


def _evaluate(args) -> int:
    from .tables import format_metrics_table, format_step_table
    from .training import evaluate

    steps = _parse_steps(args.steps)
    result = evaluate(args.model, args.checkpoint, data_root=args.data_root, dataset=args.dataset,
                      protocol=args.protocol,
                      horizon=args.horizon, split=args.split, max_windows=args.max_windows,
                      window=args.window, align_window=args.align_window,
                      progress=not args.no_progress, steps=steps, pretrained=args.pretrained or False,
                      save_predictions=args.save_predictions)
    if args.save_predictions:
        print(f"wrote {args.save_predictions} (predictions [windows, horizon, nodes] in mph, window_starts)")
    if steps == "all":
        print(format_step_table(result))
    else:
        print(format_metrics_table([result], horizon=result["horizon"], steps=steps))
    if result["constant_steps"]:
        print(f"\nnote: the prediction is one constant at step(s) {result['constant_steps']} (every window and node): "
              f"the model no longer uses its input there (e.g. a read-out whose ReLU units are all inactive)")
    if args.json:
        from .training.run_dir import write_json

        write_json(Path(args.json), {**result["metrics"], "model": result["model"], "dataset": result["dataset"],
                                     "protocol": result["protocol"],
                                     "horizon": result["horizon"], "split": result["split"],
                                     "constant_steps": result["constant_steps"]})
        print(f"wrote {args.json}")
    return 0


def _parse_steps(values):
    """``--steps``: None (the protocol's), ``"all"`` or a list of 1-based steps."""
    if not values:
        return None
    if values == ["all"]:
        return "all"
    try:
        return [int(v) for v in values]
    except ValueError:
        raise ValueError(f"--steps takes 'all' or step numbers, not {' '.join(values)!r}") from None


def _add_data_args(p: argparse.ArgumentParser, dataset_default: str = "metr_la") -> None:
    p.add_argument("--dataset", help=f"registered data set: metr_la, pems_bay, ... (default: {dataset_default})")
    p.add_argument("--data-root", help="folder holding the data set folders, e.g. metr_la/ (default: "
                   "$STGNN_DIAG_DATA, then datasets/)")
    p.add_argument("--max-windows", type=int, help="keep at most this many windows per split (smoke runs)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def build_parser() -> argparse.ArgumentParser:
    from .training.budgets import add_budget_arguments

    parser = argparse.ArgumentParser(prog="stgnn-diag", description="Diagonal-regularized temporal attention "
                                     "for spatio-temporal GNNs: zoo, training, evaluation, sensitivity.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("models", help="list the zoo with parameter counts (for the nodes of each entry's "
                       "shipped weights; 207 without)")
    p.add_argument("pattern", nargs="?", help="shell-style filter, e.g. 'tts_*'")
    p.add_argument("--card", metavar="NAME", help="print the model card of one entry: defaults, shipped weights "
                   "and their test metrics, inputs, the command that trained them")
    p.set_defaults(func=_models)

    p = sub.add_parser("train", help="train a zoo model on a data set, test it, compare with the baselines",
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
    _add_data_args(p)
    p.set_defaults(func=_train)

    p = sub.add_parser("evaluate", help="test-set metrics of a checkpoint or a baseline")
    p.add_argument("--model", help="baseline name (last_value, last_value_ffill, historical_average, "
                   "historical_median), a zoo name with --pretrained, or the model expected in --checkpoint")
    p.add_argument("--checkpoint", help="a checkpoint written by `stgnn-diag train`")
    p.add_argument("--pretrained", nargs="?", const=True, metavar="TAG",
                   help="score the shipped weights of --model (its default tag, or TAG)")
    p.add_argument("--save-predictions", metavar="FILE.npz", help="write the predictions [windows, horizon, nodes] "
                   "(mph) and each window's start index")
    p.add_argument("--protocol", help="dcrnn or paper (default: the checkpoint's, else dcrnn)")
    p.add_argument("--horizon", type=int, help="default: the checkpoint's, else 12")
    p.add_argument("--window", type=int, help="input steps (default: the checkpoint's, else 12)")
    p.add_argument("--align-window", type=int, metavar="T", help="score on the target windows of inputs of T steps "
                   "(default: the checkpoint's alignment, else the protocol at --window)")
    p.add_argument("--split", default="test", choices=("train", "val", "test"))
    p.add_argument("--json", help="write the metrics (mae@3, rmse@12, mape@6, mae@avg, ...) to this file")
    p.add_argument("--steps", nargs="+", metavar="STEP", help="1-based steps to score (default: 3 6 12 [24 36]); "
                   "'all': every step, one row each (finds a step the model predicts as a constant)")
    _add_data_args(p, dataset_default="the checkpoint's, else metr_la")
    p.set_defaults(func=_evaluate)

    from .bench import cli as bench_cli
    from .sensitivity import cli as sensitivity_cli

    bench_cli.add_parser(sub)
    sensitivity_cli.add_parser(sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the command line, as the bench records it
    if args.command == "evaluate" and not (args.model or args.checkpoint):
        parser.error("evaluate needs --model BASELINE or --checkpoint PATH")
    try:
        return args.func(args)
    except (ValueError, TypeError, OSError, RuntimeError) as e:  # our clear errors: no traceback
        print(f"stgnn-diag {args.command}: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` & co.: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(f"\nstgnn-diag {args.command}: interrupted; resume a training run with --resume.", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
