"""Does a longer input window help? Each model against its own shortest window, seed by seed.

A bench grid over ``--window 12 48 288`` scores every unit on the same target windows (``--align-window``), so
a model's rows at two windows differ in the input length alone. For every model trained at two or more
windows of one (data set, protocol, horizon, budget label), :func:`window_gains` takes the difference of its
MAE at steps 3 / 6 / last between each longer window and the shortest, seed by seed over the seeds both rows
have, and the paired t-test of :func:`~stgnn_diag.bench.ordering.seeds_separated` (two-sided, 5 %, at least
two common seeds) says whether it is beyond the seeds' spread.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, List, Tuple

from .aggregation import Stat, Table, summarize
from .ordering import seeds_separated

__all__ = ["WindowGain", "window_gains", "window_gains_markdown"]


@dataclass
class WindowGain:
    """One model at one longer window against its shortest.

    Attributes:
        model: the row's model name (with its overrides suffix, if any).
        window, base_window: the longer and the shortest input window.
        budget_label: the tables' budget label.
        diffs: ``{metric: Stat}`` of ``metric(window) - metric(base_window)`` over the common seeds (negative:
            the longer window is better).
        separated: ``{metric: bool}``, the paired t-test's verdict.
    """

    model: str
    window: int
    base_window: int
    budget_label: str
    diffs: Dict[str, Stat]
    separated: Dict[str, bool]


def _steps(horizon: int) -> List[str]:
    """``mae@3, mae@6, mae@<horizon>`` (the steps the window question is asked at)."""
    return [f"mae@{s}" for s in sorted({3, 6, horizon}) if s <= horizon]


def window_gains(tables: Iterable[Table]) -> List[WindowGain]:
    """:class:`WindowGain` of every model row present at two or more windows of the same table group."""
    groups: Dict[Tuple, Dict[int, Table]] = {}
    for t in tables:
        groups.setdefault((t.dataset, t.protocol, t.horizon, t.budget_label), {})[t.window] = t
    out = []
    for (_, _, horizon, label), by_window in groups.items():
        if len(by_window) < 2:
            continue
        base_w = min(by_window)
        base = {r.model: r for r in by_window[base_w].rows if r.kind == "model"}
        for w in sorted(by_window)[1:]:
            for r in by_window[w].rows:
                b = base.get(r.model)
                if b is None:
                    continue
                diffs, sep = {}, {}
                for m in _steps(horizon):
                    if m not in r.metrics or m not in b.metrics:
                        continue
                    va, vb = dict(zip(r.seeds, r.metrics[m].values)), dict(zip(b.seeds, b.metrics[m].values))
                    common = [s for s in va if s in vb]
                    if common:
                        diffs[m] = summarize([va[s] - vb[s] for s in common])
                        sep[m] = seeds_separated(r, b, m)
                if diffs:
                    out.append(WindowGain(r.model, w, base_w, label, diffs, sep))
    return out


def window_gains_markdown(tables: Iterable[Table], digits: int = 3) -> str:
    """A markdown section: per model and longer window, the MAE differences against the shortest window."""
    gains = window_gains(tables)
    if not gains:
        return ""
    metrics = sorted({m for g in gains for m in g.diffs}, key=lambda m: int(m.split("@")[1]))
    lines = ["### Each model against its own shortest window", "",
             "MAE at the longer window minus MAE at the shortest, seed by seed on the same target windows (negative: "
             "the longer window forecasts better); mean ± sample std over the n seeds both have; * the paired "
             "t-test separates it from zero (two-sided 5 %, ≥ 2 seeds).", "",
             "| model | budget | windows | n | " + " | ".join(f"ΔMAE@{m.split('@')[1]}" for m in metrics) + " |",
             "|---|---|---|---|" + "---|" * len(metrics)]
    for g in sorted(gains, key=lambda g: (g.budget_label, g.model, g.window)):
        n = max(s.n for s in g.diffs.values())
        cells = []
        for m in metrics:
            s = g.diffs.get(m)
            cells.append("—" if s is None else f"{s.mean:+.{digits}f}" + (f" ± {s.std:.{digits}f}" if s.std else "")
                         + ("*" if g.separated.get(m) else ""))
        lines.append(f"| `{g.model}` | `{g.budget_label}` | {g.window} vs {g.base_window} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
