"""``stgnn-diag bench``: resumable benchmark grids, aggregation over seeds, honest tables and plots.

* :mod:`.grid` — :class:`GridSpec` (models / patterns / baselines x seeds x budgets x protocols x
  horizons) and its :class:`Unit` s with ids like ``tts_attn_penalty__dcrnn__h12__cpu-small__s0``;
* :mod:`.runner` — :func:`run_grid` / :func:`run_unit`: one ``result.json`` per finished unit, skipped
  when present, resumed from checkpoints when interrupted, optionally one process per unit;
* :mod:`.aggregate` — mean ± sample std over seeds per (model, protocol, horizon, budget label);
* :mod:`.report` — markdown tables with protocol / budget / seeds / machine, CSV, PNG plots;
* :mod:`.paper_table` — the paper's published Table 1, shown only on request and labelled;
* the ``stgnn-diag bench`` sub-command itself is :mod:`stgnn_diag.cli.bench`.
"""
from .._lazy import lazy_exports

#: exported name -> the submodule defining it (imported on first use)
_WHERE = {
    "AggregationError": "aggregate",
    "Row": "aggregate",
    "Stat": "aggregate",
    "Table": "aggregate",
    "aggregate": "aggregate",
    "build_tables": "aggregate",
    "collect": "aggregate",
    "summarize": "aggregate",
    "GridError": "grid",
    "GridSpec": "grid",
    "Unit": "grid",
    "budget_label": "grid",
    "expand_models": "grid",
    "write_report": "report",
    "GridRun": "runner",
    "Outcome": "runner",
    "load_result": "runner",
    "run_grid": "runner",
    "run_unit": "runner",
    "unit_state": "runner",
}
__all__ = list(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
