"""One bench unit in this process: train it (or evaluate a baseline), resume it from its checkpoints, and write its
``result.json``."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Dict, Union

from ..training.budgets import budget_overrides
from .calibration import gemm_gflops
from .unit import GridError, Unit, is_cpu_budget
from .staleness import check_run_config, unit_budget
from .store import (ERROR_JSON, RESULT_JSON, RUN_DIR, SCHEMA, machine_info, now, peak_rss_mb, roundtrip, unit_dir,
                    unit_state, with_attempts, write_result_json)

__all__ = ["run_unit"]

_SPLITS_CACHE: Dict[tuple, Any] = {}


def baseline_splits(unit: Unit, data_root, progress: bool):
    from ..datasets import get_dataset, make_splits

    ov = dict(unit.overrides)
    key = (unit.dataset, str(data_root), unit.protocol, unit.window, unit.horizon, ov.get("max_windows"),
           ov.get("align_window"))
    if key not in _SPLITS_CACHE:
        data_key = ("data", unit.dataset, str(data_root))
        if data_key not in _SPLITS_CACHE:
            _SPLITS_CACHE.clear()
            _SPLITS_CACHE[data_key] = get_dataset(unit.dataset, data_root, progress=progress)
        _SPLITS_CACHE[key] = make_splits(_SPLITS_CACHE[data_key], unit.protocol, window=unit.window,
                                         horizon=unit.horizon, max_windows=ov.get("max_windows"),
                                         align_window=ov.get("align_window"))
    return _SPLITS_CACHE[key]


def train_config(unit: Unit, out: Path, *, data_root, accelerator, devices, progress, resume, overwrite):
    from ..training import TrainConfig

    ov = dict(unit.overrides)
    return TrainConfig(model=unit.model, out=str(out), dataset=unit.dataset, protocol=unit.protocol,
                       horizon=unit.horizon, window=unit.window, align_window=ov.get("align_window"),
                       budget=unit.budget, seed=unit.seed,
                       data_root=str(data_root) if data_root else None,
                       model_overrides=dict(unit.model_overrides) or None, max_windows=ov.get("max_windows"),
                       max_time=ov.get("max_time"), **budget_overrides(ov), accelerator=accelerator, devices=devices,
                       progress=progress, resume=resume,
                       overwrite=overwrite)


def _train(cfg):  # indirection: tests replace it
    from ..training import train

    return train(cfg)


def run_unit(unit: Unit, results_dir: Union[str, Path], *, data_root=None, accelerator: str = "cpu",
             devices: Any = 1, progress: bool = True, isolated: bool = False) -> Dict[str, Any]:
    """Run one unit in this process and write its ``result.json``; returns the result.

    Skips nothing: callers check :func:`unit_state` first (a ``done`` unit is rerun by nobody).
    ``isolated`` only says how the peak memory is to be read (this process runs nothing else).

    Raises:
        GridError: the unit's folder holds a run made with other settings.
        Any error of training / evaluation (the caller records it).
    """
    import torch

    from ..training.run_dir import METRICS_JSON
    from ..training.provenance import environment

    results_dir = Path(results_dir)
    udir = unit_dir(results_dir, unit)
    udir.mkdir(parents=True, exist_ok=True)
    state = unit_state(results_dir, unit)
    if state == "done":
        raise GridError(f"{udir / RESULT_JSON} already exists; {unit.unit_id} is done.")
    cuda = torch.cuda.is_available() and accelerator in ("gpu", "cuda", "auto")
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    rss_before = peak_rss_mb()
    t0 = time.perf_counter()
    speed = None
    ov = dict(unit.overrides)
    budget = unit_budget(unit)
    if unit.kind == "baseline":
        from ..training import evaluate

        splits = baseline_splits(unit, data_root, progress)
        res = evaluate(unit.model, data_root=data_root, protocol=unit.protocol, horizon=unit.horizon,
                       window=unit.window, max_windows=ov.get("max_windows"), progress=progress, splits=splits)
        run_part = {"metrics": res["metrics"], "windows": res["windows"], "parameters": 0, "train_time_s": None,
                    "epochs": None, "global_steps": None, "resumed": False, "environment": environment(),
                    "run_dir": None}
    else:
        run = udir / RUN_DIR
        if state == "trained":
            check_run_config(unit, run)
            metrics = json.loads((run / METRICS_JSON).read_text())
            resumed = True
        else:
            if state in ("partial", "stale"):
                check_run_config(unit, run)
            cfg = train_config(unit, run, data_root=data_root, accelerator=accelerator, devices=devices,
                                progress=progress, resume=state == "partial", overwrite=state == "stale")
            speed = gemm_gflops("cuda" if cuda else "cpu")  # the compute this unit trains with
            metrics = _train(cfg)
            speed = max(speed, gemm_gflops("cuda" if cuda else "cpu"))  # the better of before and after
            if not metrics:  # a non-zero DDP rank: rank 0 writes the result
                return {}
            resumed = state == "partial"
        budget_resolved = metrics.get("config", {}).get("budget_resolved")
        model_config = metrics.get("config", {}).get("model_config")
        run_part = {"metrics": metrics["metrics"], "windows": metrics["windows"], "parameters": metrics["parameters"],
                    "train_time_s": metrics["train_time_s"], "epochs": metrics.get("epochs"),
                    "global_steps": metrics.get("global_steps"), "schedule_steps": metrics.get("schedule_steps"),
                    "max_steps_repeats": metrics.get("max_steps_repeats"),
                    "resumed": bool(resumed or metrics.get("resumed")),
                    "train_time_complete": metrics.get("train_time_complete"), "attempts": metrics.get("attempts"),
                    "environment": metrics.get("environment") or environment(), "run_dir": RUN_DIR}
        if budget_resolved:
            run_part["budget_resolved"] = budget_resolved
        if model_config:
            run_part["model_config"] = model_config
    wall = time.perf_counter() - t0
    rss_after = peak_rss_mb()
    peak = {"rss_mb": rss_after, "rss_exact": bool(isolated or rss_after > rss_before),
            "rss_scope": ("peak of the unit's own process (imports and data included)" if isolated else
                          "process high-water mark after the unit (in-process run; an upper bound unless "
                          "rss_exact)"),
            "cuda_max_allocated_mb": (round(torch.cuda.max_memory_allocated() / 2 ** 20, 1) if cuda else None)}
    if state == "trained":  # nothing ran now: this attempt's memory says nothing about the training
        peak = {"rss_mb": None, "rss_exact": False, "rss_scope": "unknown (completed from a finished run folder)",
                "cuda_max_allocated_mb": None}
    env = run_part.pop("environment")
    budget_resolved = run_part.pop("budget_resolved", None) or budget.to_dict()
    result = {
        "schema": SCHEMA, "unit_id": unit.unit_id, "settings": roundtrip(unit.settings()),
        "model": unit.model, "kind": unit.kind, "dataset": unit.dataset, "protocol": unit.protocol, "horizon": unit.horizon,
        "window": unit.window, "budget": unit.budget, "budget_label": unit.budget_label,
        "cpu_budget": is_cpu_budget(unit.budget), "full_budget": not is_cpu_budget(unit.budget) and not ov,
        "overrides": ov, "model_overrides": dict(unit.model_overrides), "seed": unit.seed,
        "budget_resolved": budget_resolved,
        **run_part,
        "wall_time_s": round(wall, 1), "peak_memory": peak, "environment": env,
        "git_commit": env.get("git_commit"), "git_dirty": env.get("git_dirty"),
        "machine": with_attempts({**machine_info(accelerator), "gemm_gflops": speed}, run_part.get("attempts")),
        "accelerator": accelerator, "devices": devices,
        "isolated": isolated, "finished_at": now(),
    }
    from .. import __version__

    result["stgnn_diag_version"] = __version__
    write_result_json(udir / RESULT_JSON, roundtrip(result))
    (udir / ERROR_JSON).unlink(missing_ok=True)
    return result
