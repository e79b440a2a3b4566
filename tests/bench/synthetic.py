"""Synthetic bench result files (no training) for aggregation and rendering tests."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Optional

from stgnn_diag.bench.aggregation import metric_columns
from stgnn_diag.bench.unit import Unit, is_cpu_budget
from stgnn_diag.bench.store import RESULT_JSON, SCHEMA
from stgnn_diag.training.budgets import budget_overrides, get_budget

MACHINE = {"summary": "synthetic machine, 2 CPU cores", "cpu_count": 2}


def make_result(model: str, seed: Optional[int], values: Dict[str, float], *, kind: str = "model",
                budget: str = "cpu-small", overrides: Optional[dict] = None, model_overrides: Optional[dict] = None,
                protocol: str = "dcrnn", horizon: int = 12, windows: int = 100, default: float = 5.0,
                parameters: int = 1000, train_time_s: float = 10.0, rss_mb: float = 500.0,
                steps: int = 150, window: int = 12) -> dict:
    """A schema-conforming result; metric columns not in ``values`` get ``default``."""
    overrides = dict(overrides or {})
    unit = Unit(model, kind, protocol, horizon, window, budget, seed if kind == "model" else None,
                tuple(sorted(overrides.items())), tuple(sorted((model_overrides or {}).items())))
    metrics = {c: float(values.get(c, default)) for c in metric_columns(horizon)}
    return {
        "schema": SCHEMA, "unit_id": unit.unit_id, "settings": json.loads(json.dumps(unit.settings())),
        "model": model, "kind": kind, "protocol": protocol, "horizon": horizon, "window": window, "budget": budget,
        "budget_label": unit.budget_label, "cpu_budget": is_cpu_budget(budget),
        "full_budget": not is_cpu_budget(budget) and not overrides, "overrides": overrides,
        "model_overrides": dict(model_overrides or {}), "seed": unit.seed,
        "budget_resolved": get_budget(budget).with_overrides(**budget_overrides(overrides)).to_dict(),
        "metrics": metrics, "windows": windows, "parameters": parameters if kind == "model" else 0,
        "train_time_s": train_time_s if kind == "model" else None, "epochs": 3,
        "global_steps": steps if kind == "model" else None,
        "resumed": False, "wall_time_s": train_time_s + 1,
        "peak_memory": {"rss_mb": rss_mb, "rss_exact": True, "cuda_max_allocated_mb": None},
        "environment": {"git_commit": "0123456789abcdef"}, "git_commit": "0123456789abcdef", "git_dirty": False,
        "machine": MACHINE, "accelerator": "cpu", "devices": 1, "isolated": True,
    }


def write_results(folder: Path, *results: dict) -> Path:
    """Write each result to ``folder/<unit id>/result.json``."""
    for r in results:
        path = Path(folder) / r["unit_id"] / RESULT_JSON
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(r))
    return Path(folder)
