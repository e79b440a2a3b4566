"""Plain-text / markdown metric tables."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from .metrics import default_steps


def format_metrics_table(rows: List[Dict], horizon: int = 12, steps: Optional[Sequence[int]] = None) -> str:
    """A markdown table: one row per result (``{"model": ..., "metrics": {"mae@3": ...}}``), columns
    MAE / RMSE / MAPE at ``steps`` and pooled over the horizon; the best value per column in bold."""
    steps = list(steps or default_steps(horizon)) + ["avg"]
    cols = [f"{m}@{s}" for m in ("mae", "rmse", "mape") for s in steps]
    best = {c: min(r["metrics"][c] for r in rows) for c in cols}
    head = "| model | " + " | ".join(c.upper().replace("MAPE", "MAPE%") for c in cols) + " |"
    lines = [head, "|" + "---|" * (len(cols) + 1)]
    for r in rows:
        cells = []
        for c in cols:
            v = f"{r['metrics'][c]:.3f}"
            cells.append(f"**{v}**" if len(rows) > 1 and r["metrics"][c] == best[c] else v)
        lines.append(f"| {r['model']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_step_table(result: Dict) -> str:
    """A markdown table with one row per scored step (``mae@1``, ``mae@2`` ...) and one for the pooled
    ``avg``: columns MAE / RMSE / MAPE%; a step in ``result["constant_steps"]`` is marked ``constant``."""
    m = result["metrics"]
    steps = sorted({int(k.split("@")[1]) for k in m if k.startswith("mae@") and k != "mae@avg"})
    const = set(result.get("constant_steps") or ())
    lines = [f"{result['model']}", "", "| step | MAE | RMSE | MAPE% | note |", "|---|---|---|---|---|"]
    for s in [*steps, "avg"]:
        note = "constant" if s in const else ""
        lines.append(f"| {s} | {m[f'mae@{s}']:.3f} | {m[f'rmse@{s}']:.3f} | {m[f'mape@{s}']:.3f} | {note} |")
    return "\n".join(lines)
