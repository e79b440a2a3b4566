"""An experiment's page and its per-unit CSV: what ``stgnn-diag bench`` leaves in a results folder.

A results folder is one experiment::

    <results>/
      README.md        the page: the notes (kept across regenerations), the commands, the tables, the plots
      results.csv      one row per unit: settings, metrics, steps, seconds, commit, machine
      tables.csv       one row per table row (mean and std over seeds)
      plots/*.png
      experiment.json  the commands that ran the grid (``stgnn-diag bench`` records them)
      units.tar.gz     every unit's raw files (:mod:`.archive`); the unit folders themselves are not committed

The page is generated: everything outside the ``<!-- notes -->`` ... ``<!-- /notes -->`` block is rewritten by
every report, and what is inside it (the question, what the tables show) is kept as the author wrote it.
"""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

from .aggregation import METRICS, Table, row_names, trained_on

__all__ = ["EXPERIMENT_JSON", "NOTES_END", "NOTES_START", "UNIT_FIELDS", "page_markdown", "read_commands",
           "read_notes", "record_command", "write_units_csv"]

EXPERIMENT_JSON = "experiment.json"
NOTES_START, NOTES_END = "<!-- notes -->", "<!-- /notes -->"

#: The columns of ``results.csv`` before the metric columns.
UNIT_FIELDS = ("unit_id", "row", "model", "kind", "dataset", "protocol", "horizon", "window", "budget",
               "budget_label", "seed", "overrides", "model_overrides")
#: The columns after them.
TAIL_FIELDS = ("windows", "parameters", "steps", "train_time_s", "trained_on", "peak_rss_mb", "git_commit",
               "git_dirty", "machine", "gemm_gflops", "finished_at", "reused_from", "model_kwargs")


def record_command(results_dir: Union[str, Path], command: str) -> None:
    """Add ``command`` (a full ``stgnn-diag bench ...`` line) to ``experiment.json`` unless it is there."""
    path = Path(results_dir) / EXPERIMENT_JSON
    data = json.loads(path.read_text()) if path.is_file() else {}
    commands = data.setdefault("commands", [])
    if command not in commands:
        commands.append(command)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2) + "\n")


def read_commands(results_dir: Union[str, Path]) -> List[str]:
    """The commands recorded in ``experiment.json`` (empty when there is none)."""
    path = Path(results_dir) / EXPERIMENT_JSON
    return list(json.loads(path.read_text()).get("commands", [])) if path.is_file() else []


def read_notes(readme: Union[str, Path]) -> Optional[str]:
    """The text between the notes markers of an existing page, or ``None``."""
    path = Path(readme)
    if not path.is_file():
        return None
    m = re.search(re.escape(NOTES_START) + r"\n?(.*?)\n?" + re.escape(NOTES_END), path.read_text(), re.S)
    return m.group(1) if m else None


def _metric_columns(results: Sequence[Dict[str, Any]]) -> List[str]:
    cols = {c for r in results for c in r.get("metrics", {})}

    def key(c):
        m, s = c.split("@")
        return (METRICS.index(m) if m in METRICS else 9, 10 ** 6 if s == "avg" else int(s) if s.isdigit() else 0, c)

    return sorted(cols, key=key)


def write_units_csv(results: Sequence[Dict[str, Any]], path: Union[str, Path]) -> Path:
    """``results.csv``: one row per unit (``row`` is the name of its table row, see
    :func:`~stgnn_diag.bench.aggregation.row_names`); dictionaries are JSON, metrics have a column each."""
    results = list(results)
    names = row_names(results)
    metrics = _metric_columns(results)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[*UNIT_FIELDS, *metrics, *TAIL_FIELDS])
        w.writeheader()
        for r in results:
            machine = r.get("machine") or {}
            line = {k: r.get(k) for k in ("unit_id", "model", "kind", "dataset", "protocol", "horizon", "budget",
                                          "budget_label", "seed", "windows", "parameters", "train_time_s",
                                          "git_commit", "git_dirty", "finished_at", "reused_from")}
            line.update(row=names[r["unit_id"]], window=r.get("window", 12), dataset=r.get("dataset", "metr_la"),
                        overrides=json.dumps(r.get("overrides") or {}, sort_keys=True),
                        model_overrides=json.dumps(r.get("model_overrides") or {}, sort_keys=True),
                        steps=r.get("global_steps"), trained_on=trained_on(r) if r.get("kind") == "model" else "",
                        peak_rss_mb=(r.get("peak_memory") or {}).get("rss_mb"), machine=machine.get("summary"),
                        gemm_gflops=machine.get("gemm_gflops"),
                        model_kwargs=json.dumps((r.get("model_config") or {}).get("model_kwargs") or {},
                                                sort_keys=True))
            line.update({c: r["metrics"].get(c) for c in metrics})
            w.writerow(line)
    return path


def _dates(results: Sequence[Dict[str, Any]]) -> str:
    days = sorted({str(r["finished_at"])[:10] for r in results if r.get("finished_at")})
    if not days:
        return "undated"
    return days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"


def _commits(tables: Sequence[Table]) -> List[str]:
    return sorted({c for t in tables for c in t.git_commits()})


def page_markdown(results_dir: Union[str, Path], tables: Sequence[Table], results: Sequence[Dict[str, Any]],
                  tables_text: Sequence[str], plots: Sequence[Path], *, notes: Optional[str] = None,
                  commands: Sequence[str] = ()) -> str:
    """The experiment page (``README.md``).

    Args:
        results_dir: the experiment folder (plots are linked relative to it).
        tables: the aggregated tables; ``tables_text`` their markdown, in the same order.
        results: every unit's result (for the unit count and the dates).
        plots: the plot files.
        notes: the kept notes; a placeholder naming the folder when ``None``.
        commands: the commands that ran the grid.
    """
    results_dir = Path(results_dir)
    if notes is None:
        notes = (f"# {results_dir.name}\n\n*What question this experiment answers and what its tables show: "
                 f"write it here, between the notes markers; regenerating the page keeps it.*")
    trained = sum(1 for r in results if r.get("kind") == "model")
    out = [NOTES_START, notes.strip("\n"), NOTES_END, "",
           "<!-- everything below is written by `stgnn-diag bench`; edit the notes above -->", "",
           "## How it was run", ""]
    if commands:
        out += ["```bash", *[c for c in commands], "```", ""]
    else:
        out += ["*(no command recorded in `experiment.json`)*", ""]
    out += [f"{len(results)} units ({trained} trained, {len(results) - trained} baselines), finished "
            f"{_dates(results)}; code at commit(s) {', '.join(f'`{c}`' for c in _commits(tables)) or 'unknown'}. "
            "A command run again skips the finished units (they are unpacked from `units.tar.gz`) and resumes "
            "interrupted ones.", "",
            "Files: [`results.csv`](results.csv) (one row per unit), [`tables.csv`](tables.csv) (the tables below), "
            "`units.tar.gz` (every unit's `result.json`, run configuration, metrics and logs).", ""]
    out += ["## Tables", ""]
    for text in tables_text:
        out += [text, ""]
    if plots:
        out += ["## Plots", ""]
        for p in plots:
            rel = Path(p).resolve().relative_to(results_dir.resolve()).as_posix()
            out += [f"![{Path(p).stem}]({rel})", ""]
    return "\n".join(out).rstrip() + "\n"
