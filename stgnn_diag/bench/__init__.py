"""``stgnn-diag bench``: resumable benchmark grids, aggregation over seeds, honest tables and plots.

* :mod:`.grid` — :class:`GridSpec` (models / patterns / baselines x seeds x budgets x protocols x
  horizons) and its :class:`Unit` s with ids like ``tts_attn_penalty__dcrnn__h12__cpu-small__s0``;
* :mod:`.runner` — :func:`run_grid`, the grid loop: skips finished units, reuses, runs, records failures;
* :mod:`.unit_run` — :func:`run_unit`: one unit in this process, resumed from its checkpoints;
* :mod:`.store` — where a unit's ``result.json`` / ``error.json`` / run folder live, :func:`unit_state`;
* :mod:`.staleness` — when a stored result or run folder still counts as a unit's;
* :mod:`.isolation` / :mod:`.worker` — a unit in its own process, and the signals around it;
* :mod:`.aggregation` — mean ± sample std over seeds per (model, protocol, horizon, budget label);
* :mod:`.report` — markdown tables with protocol / budget / seeds / machine, CSV, PNG plots;
* :mod:`.paper_table` — the paper's published Table 1, shown only on request and labelled;
* the ``stgnn-diag bench`` sub-command itself is :mod:`stgnn_diag.cli.bench`.
"""
from .._lazy import lazy_exports

#: exported name -> the submodule defining it (imported on first use)
_WHERE = {
    "AggregationError": "aggregation",
    "Row": "aggregation",
    "Stat": "aggregation",
    "Table": "aggregation",
    "aggregate": "aggregation",
    "build_tables": "aggregation",
    "collect": "aggregation",
    "summarize": "aggregation",
    "GridError": "grid",
    "GridSpec": "grid",
    "Unit": "grid",
    "budget_label": "grid",
    "expand_models": "grid",
    "write_report": "report",
    "GridRun": "runner",
    "Outcome": "runner",
    "load_result": "store",
    "run_grid": "runner",
    "run_unit": "unit_run",
    "unit_state": "store",
}
__all__ = list(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
