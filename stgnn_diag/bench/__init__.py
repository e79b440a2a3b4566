"""``stgnn-diag bench``: resumable benchmark grids, aggregation over seeds, honest tables and plots.

* :mod:`.grid` — :class:`GridSpec` (models / patterns / baselines x seeds x budgets x protocols x
  horizons) and its :class:`Unit` s with ids like ``tts_attn_penalty__dcrnn__h12__cpu-small__s0``;
* :mod:`.runner` — :func:`run_grid` / :func:`run_unit`: one ``result.json`` per finished unit, skipped
  when present, resumed from checkpoints when interrupted, optionally one process per unit;
* :mod:`.aggregate` — mean ± sample std over seeds per (model, protocol, horizon, budget label);
* :mod:`.report` — markdown tables with protocol / budget / seeds / machine, CSV, PNG plots;
* :mod:`.paper_table` — the paper's published Table 1, shown only on request and labelled;
* :mod:`.cli` — ``add_parser(subparsers)`` and ``run(args)`` for the ``bench`` sub-command.
"""
from .aggregate import AggregationError, Row, Stat, Table, aggregate, build_tables, collect, summarize
from .grid import GridError, GridSpec, Unit, budget_label, expand_models
from .report import write_report
from .runner import GridRun, Outcome, load_result, run_grid, run_unit, unit_state

__all__ = ["AggregationError", "GridError", "GridRun", "GridSpec", "Outcome", "Row", "Stat", "Table", "Unit",
           "aggregate", "budget_label", "build_tables", "collect", "expand_models", "load_result", "run_grid",
           "run_unit", "summarize", "unit_state", "write_report"]
