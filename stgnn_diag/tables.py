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
