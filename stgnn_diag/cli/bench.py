"""``stgnn-diag bench``: run a grid of units (resumable), then write the report.

Wire it into a parser with :func:`add_parser`; :func:`run` executes parsed arguments::

    p = argparse.ArgumentParser(); sub = p.add_subparsers()
    add_parser(sub)
    args = p.parse_args(["bench", "--models", "tts_attn_*", "--dry-run"]); args.func(args)
"""
from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any, Dict

from ..training.budgets import add_budget_arguments
from ..bench.grid import GridSpec
from ..bench.unit import BUDGET_OVERRIDE_KEYS, GridError
from .._values import parse_key_values

__all__ = ["add_parser", "grid_from_args", "run"]

#: Relative to the current directory: the bench never writes into the installed package.
DEFAULT_RESULTS = "results/bench"

EPILOG = """examples:
  stgnn-diag bench --models 'tas_attn_*' 'tts_attn_*' last_value historical_average --seeds 0 1 2 \\
      --budgets cpu-small --protocols dcrnn --horizons 12 --results results/table1 --paper-rows
  stgnn-diag bench --results results/table1 --report-only --paper-rows
  stgnn-diag bench --grid grid.json --results results/mine --dry-run

The results folder is one experiment: README.md (tables and plots; text between <!-- notes --> and
<!-- /notes --> is kept when it is rewritten), results.csv (one row per unit), tables.csv, plots/, and
units.tar.gz (every unit's raw files; the unit folders are git-ignored). A finished unit, on disk or in the
archive, is skipped; a unit interrupted mid-training resumes from its checkpoint.
Exit status: 0 all units done, 1 some failed (error.json in their folders) or busy (trained by another
process at the time: nothing recorded), 130 interrupted.
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``bench`` sub-command on an ``argparse`` sub-parsers object; returns its parser."""
    p = subparsers.add_parser(
        "bench", help="run a resumable grid (models x seeds x budgets x data sets x protocols x horizons), "
                      "write tables",
        description="Run a grid of training / baseline units, each resumable and stored as "
                    "<results>/<unit id>/result.json, then write the folder's README.md, results.csv, plots and "
                    "units.tar.gz.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("grid")
    g.add_argument("--grid", metavar="FILE.json", help="grid as JSON (keys: models, seeds, budgets, datasets, "
                   "protocols, horizons, window, overrides, model_overrides); command-line values replace its keys")
    g.add_argument("--models", nargs="+", metavar="NAME", help="zoo names, shell patterns ('tas_attn_*', "
                   "'tsl:*') and baselines (last_value, last_value_ffill, historical_average)")
    g.add_argument("--seeds", nargs="+", type=int, metavar="S", help="training seeds (default 0)")
    g.add_argument("--budgets", nargs="+", metavar="B",
                   help="budget presets: cpu-small, cpu-15min, paper (default cpu-small)")
    g.add_argument("--datasets", nargs="+", metavar="D", help="registered data sets: metr_la, pems_bay, ... "
                   "(default metr_la)")
    g.add_argument("--protocols", nargs="+", metavar="P", help="dcrnn and / or paper (default dcrnn)")
    g.add_argument("--horizons", nargs="+", type=int, metavar="H", help="predicted steps (default 12)")
    g.add_argument("--window", nargs="+", type=int, metavar="T", help="input steps, one or several (default 12); "
                   "several are scored on the target windows of the longest (--align-window)")
    o = p.add_argument_group("budget overrides (they enter the budget label: never averaged with the preset)")
    add_budget_arguments(o)
    o.add_argument("--max-windows", type=int, help="keep at most this many windows per split (tiny grids)")
    o.add_argument("--align-window", type=int, metavar="T", help="score every unit on the target windows of inputs "
                   "of T steps (default: the longest --window when there are several)")
    o.add_argument("--max-time", metavar="DURATION", help="wall-clock training budget per unit, e.g. 15m (the "
                   "equal-time comparison): the steps that fit, measured after the warm-up, recorded in result.json")
    o.add_argument("--set", action="append", metavar="KEY=VALUE", help="model override for every trained model "
                   "(repeatable), e.g. hidden_size=8")
    o.add_argument("--set-for", action="append", nargs=2, metavar=("PATTERN", "KEY=VALUE"),
                   help="model override for the models matching PATTERN (repeatable), e.g. 'tts_*' spatial_layers=1")
    r = p.add_argument_group("running")
    r.add_argument("--results", default=None, help=f"results folder (default {DEFAULT_RESULTS})")
    r.add_argument("--isolate", action="store_true", help="run each unit in its own process (a crash or OOM "
                   "loses only that unit; peak memory is then per unit)")
    r.add_argument("--reuse", nargs="+", metavar="FOLDER", default=[], help="other results folders: a unit "
                   "finished there with the same settings is copied (result.json says reused_from), not run again")
    r.add_argument("--dry-run", action="store_true", help="list the units and their state; run nothing")
    r.add_argument("--report-only", action="store_true", help="write the report from the results folder; run "
                   "nothing (grid arguments are ignored)")
    r.add_argument("--no-report", action="store_true", help="do not write the report after the grid")
    r.add_argument("--fail-fast", action="store_true", help="stop at the first failed unit")
    r.add_argument("--accelerator", default="cpu", help="Lightning accelerator: cpu, gpu, auto (one device per "
                   "unit; for multi-GPU DDP training use `stgnn-diag train --strategy ddp`)")
    r.add_argument("--data-root", help="folder holding the data set folders, e.g. metr_la/ (default: "
                   "$STGNN_DIAG_DATA, then datasets/)")
    r.add_argument("--no-progress", action="store_true", help="no progress bars")
    rep = p.add_argument_group("report")
    rep.add_argument("--report-dir", help="where README.md, results.csv, tables.csv, plots/ go (default <results>)")
    rep.add_argument("--paper-rows", action="store_true", help="show the paper's published Table 1 rows under "
                     "the horizon-12 tables, labelled, with the protocol difference")
    rep.add_argument("--bar-metric", default="mae", choices=("mae", "rmse", "mape"),
                     help="metric of the diagonal-variant bar chart")
    p.set_defaults(func=run)
    return p


def grid_from_args(args: argparse.Namespace) -> GridSpec:
    """The grid of ``--grid`` (if any) with the command-line values laid over it."""
    base: Dict[str, Any] = GridSpec.read_json(args.grid) if args.grid else {}
    for key in ("models", "seeds", "budgets", "datasets", "protocols", "horizons", "window"):
        value = getattr(args, key)
        if value is not None:
            base[key] = value
    if not base.get("models"):
        raise GridError("Give --models (names, patterns, baselines) or a --grid file.")
    overrides = dict(base.get("overrides") or {})
    for key in BUDGET_OVERRIDE_KEYS:
        value = getattr(args, key)
        if value is not None:
            overrides[key] = value
    base["overrides"] = overrides
    model_overrides = {k: dict(v) for k, v in (base.get("model_overrides") or {}).items()}
    if args.set:
        model_overrides.setdefault("*", {}).update(parse_key_values(args.set, error=GridError))
    for pattern, kv in args.set_for or []:
        model_overrides.setdefault(pattern, {}).update(parse_key_values([kv], error=GridError))
    base["model_overrides"] = model_overrides
    return GridSpec.from_dict(base)


def _report(args, results: Path) -> None:
    from ..bench.report import write_report

    files = write_report(results, args.report_dir, paper=args.paper_rows, metric=args.bar_metric)
    print(files.text)
    print(f"wrote {files.markdown}, {files.units_csv}, {files.csv}, {len(files.plots)} plot(s)"
          + (f" and {files.archive}" if files.archive else ""))


def run(args: argparse.Namespace) -> int:
    """Execute ``stgnn-diag bench``; returns the exit status (0 ok, 1 failed or busy units, 130 interrupted).

    Raises:
        GridError / ValueError: invalid grid, settings mismatch with stored results, nothing to report.
    """
    from ..bench.runner import run_grid

    results = Path(args.results or DEFAULT_RESULTS)
    argv = getattr(args, "argv", None)
    if argv and not (args.report_only or args.dry_run):  # the page shows the command that made its units
        from ..bench.page import record_command

        record_command(results, "stgnn-diag " + shlex.join(argv))
    if args.report_only:
        _report(args, results)
        return 0
    grid = grid_from_args(args)
    outcome = run_grid(grid, results, data_root=args.data_root, isolate=args.isolate, accelerator=args.accelerator,
                       progress=not args.no_progress, fail_fast=args.fail_fast, dry_run=args.dry_run,
                       reuse=args.reuse)
    if args.dry_run:
        width = max((len(o.unit.unit_id) for o in outcome.outcomes), default=10)
        for o in outcome.outcomes:
            print(f"{o.unit.unit_id:{width}s}  {o.state}")
        states = [o.state for o in outcome.outcomes]
        print(f"{len(states)} units: " + ", ".join(f"{states.count(s)} {s}" for s in
                                                   ("done", "trained", "partial", "stale", "reusable", "new")
                                                   if s in states)
              + f"  (results: {results})")
        return 0
    print(f"bench: {outcome.summary()}  (results: {results})")
    for o in outcome.failed:
        print(f"  failed: {o.unit.unit_id}: {o.error}", file=sys.stderr)
    for o in outcome.busy:
        print(f"  busy: {o.unit.unit_id}: {o.error}; run the same command again once it is done", file=sys.stderr)
    if outcome.interrupted:
        print("bench: interrupted; run the same command again to resume.", file=sys.stderr)
        return 130
    if not args.no_report and any(o.result for o in outcome.outcomes):
        _report(args, results)
    return 1 if outcome.failed or outcome.busy else 0
