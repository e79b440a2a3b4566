"""Number and label formatting of the findings report's tables."""
from __future__ import annotations

import math


def short_source(src: str) -> str:
    """``"100 steps, loss 0.41"`` / ``"checkpoint"`` / ``"untrained"`` for the tables."""
    if src.startswith("brief training"):
        steps = src.split(":")[1].split("AdamW")[0].strip()
        loss = src.rsplit("loss", 1)[1].split("(")[0].strip()
        return f"{steps} steps, loss {loss}"
    if src.startswith("pretrained"):  # pretrained `<name>.<tag>` (<budget>, seed <s>, ...)
        tag = src.split("`")[1].split(".", 1)[1]
        return f"shipped {tag} s{src.split('seed ')[1].split(',')[0]}"
    if src.startswith("checkpoint"):  # a bench unit folder <model>__<protocol>__h<H>__<budget label>__s<seed>
        unit = next((c for c in src.split("`")[1].split("/") if c.count("__") >= 3), None) if "`" in src else None
        return "checkpoint" if unit is None else "checkpoint, " + " ".join(unit.split("__")[-2:])
    return "untrained"


def fmt(v, nd=3) -> str:
    """A table cell: floats with ``nd`` decimals (scientific when very large or small, ``n/a`` for NaN)."""
    if isinstance(v, float):
        if math.isnan(v):
            return "n/a"
        if v != 0 and (abs(v) >= 1e4 or abs(v) < 10 ** -nd):
            return f"{v:.2e}"
        return f"{v:.{nd}f}"
    return str(v)
