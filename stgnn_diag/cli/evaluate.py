"""``stgnn-diag evaluate``: test-set metrics of a checkpoint, of a zoo entry's shipped weights or of a baseline."""
from __future__ import annotations

import argparse
from pathlib import Path

from .common import add_data_args


def run(args) -> int:
    from ..tables import format_metrics_table, format_step_table
    from ..training import evaluate

    steps = parse_steps(args.steps)
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
        from ..training.run_dir import write_json

        write_json(Path(args.json), {**result["metrics"], "model": result["model"], "dataset": result["dataset"],
                                     "protocol": result["protocol"],
                                     "horizon": result["horizon"], "split": result["split"],
                                     "constant_steps": result["constant_steps"]})
        print(f"wrote {args.json}")
    return 0


def parse_steps(values):
    """``--steps``: None (the protocol's), ``"all"`` or a list of 1-based steps."""
    if not values:
        return None
    if values == ["all"]:
        return "all"
    try:
        return [int(v) for v in values]
    except ValueError:
        raise ValueError(f"--steps takes 'all' or step numbers, not {' '.join(values)!r}") from None


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``evaluate`` on an ``argparse`` sub-parser collection."""
    p = subparsers.add_parser("evaluate", help="test-set metrics of a checkpoint or a baseline")
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
    add_data_args(p, dataset_default="the checkpoint's, else metr_la")
    p.set_defaults(func=run)
    return p
