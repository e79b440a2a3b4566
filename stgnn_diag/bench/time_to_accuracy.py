"""Time to accuracy: validation MAE at the horizon's last step against training seconds, per bench unit.

Every training run logs ``train_seconds`` (training time so far, over all its attempts) and
``val_mae_last`` (masked validation MAE at the last horizon step) at each validation, in its
``metrics.csv`` (:class:`~stgnn_diag.training.wall_clock.ElapsedTime`). This module reads those curves
from a results folder and draws them on one axis: the comparison "which model is best after t seconds
on this machine" that equal steps cannot show.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Union

from .aggregation import collect, row_names
from .calibration import same_compute, speed_spread
from .figures import new_figure

#: A run folder's merged per-epoch log (:mod:`stgnn_diag.training.logs`).
METRICS_CSV = "metrics.csv"


@dataclass
class Curve:
    """One unit's validation error over training time.

    Attributes:
        model, seed: the unit's model and seed.
        seconds: training seconds at each validation ``[V]``.
        val_mae_last: masked validation MAE (mph) at the horizon's last step, at the same validations ``[V]``.
        threads: torch threads the unit trained with (None if not recorded).
        end_seconds, test_mae_last: the unit's whole training time and its masked test MAE at the horizon's
            last step (the full test split, scored after training; None if not recorded).
        gemm_gflops: the compute the unit trained with (:mod:`~stgnn_diag.bench.calibration`; None if not
            recorded).
    """

    model: str
    seed: Optional[int]
    seconds: List[float]
    val_mae_last: List[float]
    threads: Optional[int] = None
    end_seconds: Optional[float] = None
    test_mae_last: Optional[float] = None
    gemm_gflops: Optional[float] = None


def read_curve(metrics_csv: Union[str, Path]) -> List[tuple]:
    """``[(train_seconds, val_mae_last), ...]`` from a run's ``metrics.csv``, in training order
    (rows without both values are skipped)."""
    points = []
    with open(metrics_csv) as f:
        for r in csv.DictReader(f):
            if r.get("train_seconds") and r.get("val_mae_last"):
                points.append((float(r["train_seconds"]), float(r["val_mae_last"])))
    return sorted(points)


def collect_curves(results_dir: Union[str, Path]) -> List[Curve]:
    """The curve of every trained unit of ``results_dir`` that logged one (baselines have none)."""
    out = []
    results = collect(results_dir)
    names = row_names(results)  # one colour per model and set of model overrides
    for r in results:
        if r.get("kind") != "model" or not r.get("run_dir"):
            continue
        log = Path(results_dir) / r["unit_id"] / r["run_dir"] / METRICS_CSV
        if not log.is_file():
            continue
        points = read_curve(log)
        test = (r.get("metrics") or {}).get(f"mae@{r.get('horizon')}")
        if points or test is not None:  # a unit stopped before its first validation still has its end point
            env = r.get("environment") or {}
            out.append(Curve(names[r["unit_id"]], r.get("seed"), [p[0] for p in points],
                             [p[1] for p in points], env.get("threads"), r.get("train_time_s"), test,
                             (r.get("machine") or {}).get("gemm_gflops")))
    return out


def plot_time_to_accuracy(curves: List[Curve], path: Union[str, Path], title: str = "") -> Optional[Path]:
    """One line per unit (one colour per model, seeds alike), validation MAE@last step against training
    minutes, and a star per unit at the end of its training: its test MAE@last step; returns the PNG path, or
    None without curves. Units that trained with different compute (:mod:`~stgnn_diag.bench.calibration`)
    are drawn, with the spread of their speeds in the axis label.
    """
    if not curves:
        return None

    fig = new_figure(6.4, 4.2)
    ax = fig.subplots()
    colours: Dict[str, str] = {}
    cycle = iter(f"C{i}" for i in range(1000))
    for c in sorted(curves, key=lambda c: (c.model, c.seed if c.seed is not None else -1)):
        first = c.model not in colours
        colour = colours.setdefault(c.model, next(cycle))
        ax.plot([s / 60 for s in c.seconds], c.val_mae_last, "o-", ms=3, lw=1.1, color=colour,
                label=c.model if first else None)
        if c.end_seconds is not None and c.test_mae_last is not None:
            ax.plot([c.end_seconds / 60], [c.test_mae_last], "*", ms=9, color=colour, mec="black", mew=0.5)
    if any(c.test_mae_last is not None for c in curves):
        ax.plot([], [], "*", ms=9, color="white", mec="black", mew=0.5, label="test MAE, end of training")
    threads = {c.threads for c in curves}
    each = f", {threads.pop()} torch thread(s) each" if len(threads) == 1 and None not in threads else ""
    lo, hi = speed_spread(c.gemm_gflops for c in curves)
    spread = "" if same_compute([lo, hi]) else f"; units' compute {lo:g}-{hi:g} GFLOP/s: not one machine"
    ax.set_xlabel(f"training time (minutes{each}{spread})")
    ax.set_ylabel("MAE at the last step (mph): validation, test (*)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title(title or "time to accuracy", fontsize=9)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path
