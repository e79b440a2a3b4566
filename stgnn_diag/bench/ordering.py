"""Does the paper's ordering of the diagonal variants (a)-(e) hold in a table? Pairwise, with the seed noise.

The paper ranks its T&S variants by MAE at step 12 ((d) < (e) < (b) < (c) < (a)). For each arrangement of a
table (T&S: ``tas_attn_<variant>``, TTS: ``tts_attn_<variant>``) this module orders the variants present by
their mean over seeds at the table's last step and counts the pairs ordered as published.

Whether a pair's difference means anything is judged seed by seed: with one seed, every variant starts from
the same initial weights (the penalty's own buffer aside) and sees the same batches, so a seed that is good or
bad for one variant is so for all, and that shared part cancels in the difference. A pair is *separated* when
a paired t-test on its differences over the seeds both rows have (at least two) rejects "no difference" at the
two-sided 5 % level (``|mean(d)| > t_{0.975, n-1} * std(d, ddof=1) / sqrt(n)``: 12.7 standard errors with two
seeds, 4.3 with three); the other pairs are within the seed noise.
"""
from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from itertools import combinations
from typing import Dict, List, Optional

from .aggregation import Row, Table
from .paper_table import VARIANT_OF, paper_rows

__all__ = ["ARRANGEMENTS", "VariantOrder", "variant_orders", "ordering_markdown", "seeds_separated"]

#: Model-name prefix -> arrangement label.
ARRANGEMENTS: Dict[str, str] = {"tas_attn": "T&S", "tts_attn": "TTS"}

_LETTER = {v: row.split(")")[0] + ")" for row, v in VARIANT_OF.items()}  # "noresid" -> "(a)"
_ORDER = list(VARIANT_OF.values())  # noresid, none, mask, dropout, penalty


@dataclass
class VariantOrder:
    """The variants of one arrangement in one table, best first.

    Attributes:
        arrangement: ``"T&S"`` or ``"TTS"``.
        metric: the column ranked (``"mae@12"``...).
        ranked: ``[(variant, Stat), ...]``, lowest mean first (``variant`` = ``"noresid"``, ``"none"``...).
        pairs: number of variant pairs.
        agree: pairs ordered as published (``None`` without published numbers for ``metric``).
        separated: pairs whose seed-by-seed differences pass a paired t-test (two-sided, 5 %).
        separated_agree: of those, the pairs ordered as published.
        separated_pairs: those pairs as ``(lower variant, higher variant)``.
    """

    arrangement: str
    metric: str
    ranked: List[tuple]
    pairs: int
    agree: Optional[int]
    separated: int
    separated_agree: Optional[int]
    separated_pairs: List[tuple]


def _published(metric: str) -> Optional[Dict[str, float]]:
    rows = paper_rows()
    if metric not in rows[0]["metrics"]:
        return None
    return {r["variant"]: r["metrics"][metric][0] for r in rows}


def seeds_separated(a: Row, b: Row, metric: str) -> bool:
    """Paired t-test (``scipy.stats.ttest_rel``) over the seeds both rows have (``n >= 2``), two-sided, 5 %."""
    from scipy.stats import ttest_rel

    va = dict(zip(a.seeds, a.metrics[metric].values))
    vb = dict(zip(b.seeds, b.metrics[metric].values))
    common = [s for s in va if s in vb]
    if len(common) < 2:
        return False
    with warnings.catch_warnings():  # identical rows: no test (p = nan), not a warning in the report
        warnings.simplefilter("ignore", RuntimeWarning)
        p = ttest_rel([va[s] for s in common], [vb[s] for s in common]).pvalue
    return bool(p < 0.05)


def variant_orders(table: Table, metric: Optional[str] = None) -> List[VariantOrder]:
    """One :class:`VariantOrder` per arrangement with at least two variants in ``table``.

    Args:
        table: from :func:`~stgnn_diag.bench.aggregation.build_tables`.
        metric: the column to rank (default: MAE at the table's last step).
    """
    metric = metric or f"mae@{table.horizon}"
    published = _published(metric)
    out = []
    for prefix, label in ARRANGEMENTS.items():
        # only variants trained with the same model overrides are compared (the largest such set), so that
        # the rows differ in the variant alone
        by_overrides: Dict[str, Dict[str, Row]] = {}
        for r in table.rows:
            variant = r.model.split(" [")[0][len(prefix) + 1:]
            if r.kind == "model" and r.model.startswith(prefix + "_") and variant in _ORDER and metric in r.metrics:
                key = json.dumps(r.model_overrides, sort_keys=True)
                by_overrides.setdefault(key, {})[variant] = r
        found: Dict[str, Row] = max(by_overrides.values(), key=len, default={})
        if len(found) < 2:
            continue
        stats = {v: r.metrics[metric] for v, r in found.items()}
        ranked = sorted(stats.items(), key=lambda kv: (kv[1].mean, _ORDER.index(kv[0])))
        pairs = list(combinations(stats, 2))
        agree = sep = sep_agree = 0
        sep_pairs = []
        for i, j in pairs:
            same = published is not None and (stats[i].mean - stats[j].mean) * (published[i] - published[j]) > 0
            agree += same
            if seeds_separated(found[i], found[j], metric):
                sep += 1
                sep_pairs.append((i, j) if stats[i].mean < stats[j].mean else (j, i))
                sep_agree += same
        out.append(VariantOrder(label, metric, ranked, len(pairs), agree if published else None, sep,
                                sep_agree if published else None, sep_pairs))
    return out


def ordering_markdown(table: Table, digits: int = 3) -> str:
    """A short markdown section: each arrangement's variants in order, against the published order."""
    orders = variant_orders(table)
    if not orders:
        return ""
    metric = orders[0].metric
    title = metric.upper()
    published = _published(metric)
    lines = [f"**Order of the diagonal variants at {title}** (lowest mean first; [n] = seeds)."]
    if table.horizon == 36:
        lines[0] += (" The paper reports the penalty (e) as the best variant at this horizon, without numbers; "
                     "held against that, a line says whether (e) comes first.")
    if published:
        pub = " < ".join(f"{_LETTER[v]} {m:.3f}" for v, m in sorted(published.items(), key=lambda kv: kv[1]))
        lines[0] += (f" Published order (T&S, authors' protocol, full budget): {pub}; the paper has no TTS rows, so "
                     f"TTS is held against the same order.")
    for o in orders:
        seq = " < ".join(f"{_LETTER[v]} {s.mean:.{digits}f} [{s.n}]" for v, s in o.ranked)
        text = f"- {o.arrangement}: {seq}."
        if table.horizon == 36 and "penalty" in dict(o.ranked):
            text += f" (e) penalty {'comes first' if o.ranked[0][0] == 'penalty' else 'does not come first'}."
        if o.agree is not None:
            text += f" Ordered as published: {o.agree} of {o.pairs} pairs."
        text += (f" Separated beyond the seed noise (paired t-test on the seed-by-seed differences, two-sided 5 %, "
                 f"≥ 2 common seeds): {o.separated} of {o.pairs} pairs")
        if o.separated:
            text += " (" + ", ".join(f"{_LETTER[a]} < {_LETTER[b]}" for a, b in o.separated_pairs) + ")"
        text += (f", {o.separated_agree} of them as published." if o.separated_agree is not None and o.separated
                 else ".")
        lines.append(text)
    return "\n".join(lines)
