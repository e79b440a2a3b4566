"""Where a model's error comes from: MAE at chosen steps on the test windows split by missing readings
(0 mph) in each node's input window.

For each model (a zoo entry's shipped weights, ``NAME:TAG``, or a checkpoint) and each step, the masked
MAE over every scored (window, node) pair, then over four groups of them: the node's last input step
is missing, every input step is, some input step is, none is; with each group's share of the scored pairs and its
contribution to the overall MAE (its error summed over all scored pairs: the contributions of "some"
and "none" add up to the MAE). Predictions are written to ``--cache`` and reused.

A second table bounds what a seasonal prior could add: the MAE when the historical average (weekday x
slot x node mean of the training readings, :func:`stgnn_diag.baselines.historical_average`) replaces the
forecast on the pairs whose whole input window is missing, where the model has nothing of the node to go
on, and when the model's forecast everywhere else is blended with it at weight ``w``. A third table compares the
seasonal tables such a prior could use there: the mean, and the median pooled over ``p`` slots either side
(:func:`stgnn_diag.baselines.historical_median`; ``seasonal_fallback`` uses ``MEDIAN_POOL``, chosen with
``--split val``): their MAE on those pairs and the model's MAE with each in place there.

Usage::

    python benchmarks/missing_input_breakdown.py tas_attn_none:metr_la_cpu_e10
    python benchmarks/missing_input_breakdown.py tas_attn_none:metr_la_cpu15 \\
        results/<experiment>/<unit>/run/checkpoints/last.ckpt --steps 3 12
    python benchmarks/missing_input_breakdown.py tas_attn_none:metr_la_e10_mask_skip_p1 --split val
"""
from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import numpy as np

from stgnn_diag.baselines import MEDIAN_POOL, historical_average, historical_median
from stgnn_diag.datasets import DEFAULT_DATASET, get_dataset, make_splits
from stgnn_diag.training.scoring import evaluate


def predictions(spec: str, cache: Path, split: str = "test") -> np.ndarray:
    """``[windows, horizon, nodes]`` predictions (mph) on ``split`` of ``NAME:TAG`` or a checkpoint path."""
    cache.mkdir(parents=True, exist_ok=True)
    f = cache / f"{hashlib.sha1(spec.encode()).hexdigest()[:12]}{'' if split == 'test' else '-' + split}.npz"
    if not f.exists():
        if Path(spec).exists():
            kw = dict(checkpoint=spec)
        else:
            name, _, tag = spec.partition(":")
            kw = dict(model=name, pretrained=tag or True)
        evaluate(save_predictions=f, split=split, **kw)
    return np.load(f)["predictions"]


def groups(x: np.ndarray) -> dict:
    """Per (window, node): masks of the groups, from the raw input windows ``x [windows, T, nodes]``."""
    some = (x == 0).any(1)
    return {"last missing": x[:, -1] == 0, "all missing": (x == 0).all(1), "some missing": some,
            "none missing": ~some}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="+", help="NAME:TAG (shipped weights) or a checkpoint path")
    p.add_argument("--steps", type=int, nargs="+", default=[3, 6, 12])
    p.add_argument("--split", choices=("val", "test"), default="test")
    p.add_argument("--pools", type=int, nargs="+", default=[0, 1, 2, 3], help="median tables' slots either side")
    p.add_argument("--cache", type=Path, default=Path("runs/missing_input_breakdown"))
    args = p.parse_args(argv)
    splits = make_splits(get_dataset(DEFAULT_DATASET, None, progress=False), "dcrnn", window=12, horizon=12)
    part = splits[args.split]
    speed = part.speed.numpy()
    x = speed[part.starts[:, None] + np.arange(part.window)]
    y = part.targets()
    g = groups(x)
    print("| model | step | MAE | " + " | ".join(f"{k}: share / MAE / contribution" for k in g) + " |")
    print("|---|---|---|" + "---|" * len(g))
    preds = {spec: predictions(spec, args.cache, args.split) for spec in args.models}
    for spec, pred in preds.items():
        for s in args.steps:
            err, scored = np.abs(pred[:, s - 1] - y[:, s - 1]), y[:, s - 1] > 0
            n = scored.sum()
            cells = []
            for mask in g.values():
                m = scored & mask
                cells.append(f"{m.sum() / n:.1%} / {err[m].mean():.3f} / {err[m].sum() / n:.3f}")
            print(f"| {spec} | {s} | {err[scored].mean():.3f} | " + " | ".join(cells) + " |")
    ha, blind = historical_average(splits, args.split), g["all missing"]
    weights = (0.0, 0.02, 0.05, 0.1)
    print("\nThe historical average in place of the forecast where the whole input window is missing, and blended "
          "in at weight w elsewhere:\n\n| model | step | MAE | " + " | ".join(f"w = {w}" for w in weights) + " |")
    print("|---|---|---|" + "---|" * len(weights))
    for spec, pred in preds.items():
        for s in args.steps:
            f, h, t = pred[:, s - 1], ha[:, s - 1], y[:, s - 1]
            scored = t > 0
            cells = [f"{np.abs(np.where(blind, h, (1 - w) * f + w * h) - t)[scored].mean():.4f}" for w in weights]
            print(f"| {spec} | {s} | {np.abs(f - t)[scored].mean():.4f} | " + " | ".join(cells) + " |")
    tables = {"mean": ha, **{f"median ±{pool}": historical_median(splits, args.split, pool) for pool in args.pools}}
    print(f"\nSeasonal tables where the whole input window is missing ({args.split}; MEDIAN_POOL = {MEDIAN_POOL}): "
          "MAE of the table on those pairs / the model's MAE with it in place there:\n\n| model | step | "
          + " | ".join(tables) + " |")
    print("|---|---|" + "---|" * len(tables))
    for spec, pred in preds.items():
        for s in args.steps:
            f, t = pred[:, s - 1], y[:, s - 1]
            scored = t > 0
            cells = [f"{np.abs(tab[:, s - 1] - t)[scored & blind].mean():.3f} / "
                     f"{np.abs(np.where(blind, tab[:, s - 1], f) - t)[scored].mean():.4f}" for tab in tables.values()]
            print(f"| {spec} | {s} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
