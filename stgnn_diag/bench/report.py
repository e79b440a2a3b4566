"""Bench reports: markdown tables (with their protocol, budget, seeds and machine), CSV, PNG plots.

Every table holds one protocol, horizon and budget label (see :mod:`.aggregate`); its header says
which, lists the seeds and the machine, and a CPU-budget or otherwise reduced table says in bold that
its numbers are not full-budget numbers. The paper's published rows are added only on request, in
their own labelled table with the protocol difference stated (:mod:`.paper_table`).
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Union

from .aggregation import METRICS, Row, Table, aggregate, build_tables, collect, overrides_suffix
from .calibration import mismatch_message, same_compute
from .ordering import ordering_markdown
from .windows import window_gains_markdown
from .figures import new_figure
from .paper_table import DATASET as PAPER_DATASET
from .paper_table import LABEL as PAPER_LABEL
from .paper_table import paper_rows, paper_rows_markdown
from .time_to_accuracy import collect_curves, plot_time_to_accuracy

__all__ = ["PROTOCOL_TEXT", "ReportFiles", "budget_text", "plot_diag_variants", "plot_metric_vs_step",
           "report_markdown", "table_markdown", "write_csv", "write_report"]

PROTOCOL_TEXT: Dict[str, str] = {
    "dcrnn": "canonical DCRNN protocol: all windows split 70/10/20 by count, one global scaler fit on the training "
             "inputs (as DCRNN, Graph WaveNet, STAEformer)",
    "paper": "the ESANN authors' protocol: the raw timeline split 70/10/20, windows cut inside each part, "
             "a per-node scaler",
}

_UPPER = {"mae": "MAE", "rmse": "RMSE", "mape": "MAPE%"}


def _col_title(c: str) -> str:
    m, s = c.split("@")
    return f"{_UPPER[m]}@{s}"


def budget_text(row: Row) -> str:
    """The budget in words, from the resolved budget stored with the results."""
    b = row.budget_resolved or {}
    epochs = b.get("max_epochs")
    batches = b.get("limit_train_batches")
    unit = "epoch" if epochs == 1 else "epochs"
    length = (f"{epochs} {unit}" + (f" × {batches} batches" if batches else " over the whole training split")
              + f" of {b.get('batch_size')}" if epochs else "")
    if row.overrides.get("max_time"):  # the clock, not the epochs, decides the length (see training.wall_clock)
        length = (f"{row.overrides['max_time']} of training per unit, batches of {b.get('batch_size')} (the steps "
                  f"that fit, measured after the warm-up, with the learning-rate schedule fitted to them)")
    parts = [length,
             f"lr {b['lr']:g}" if b.get("lr") is not None else "",
             f"patience {b['patience']}" if b.get("patience") else "no early stopping",
             ("model defaults " + ", ".join(f"{k}={v}" for k, v in b["model_overrides"].items())
              + " (model overrides below take precedence)") if b.get("model_overrides") else ""]
    return ", ".join(p for p in parts if p)


def _kv(d: Dict) -> str:
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in d.items())


def _train_time_cell(row: Row, label: bool) -> str:
    """``"904.1"``; with ``label`` (a table whose seeds trained on different kinds of machine) ``"CPU 904.1 ×2
    · GPU 98.3 ×1"``; ``"—"`` without a training time (baselines)."""
    if not row.train_time_s:
        return "—"
    if not label:
        return f"{next(iter(row.train_time_s.values())).mean:.1f}"
    return " · ".join(f"{k} {st.mean:.1f} ×{st.n}" for k, st in row.train_time_s.items())


def table_markdown(table: Table, *, digits: int = 3, paper: bool = False) -> str:
    """One table as markdown: a heading, its honesty header, the rows, footnotes.

    Args:
        table: from :func:`~stgnn_diag.bench.aggregation.build_tables`.
        digits: decimals of the metrics.
        paper: add the published Table 1 rows (horizon 12 only) under ours, labelled.
    """
    rows = table.rows
    cols = table.columns
    best = table.best()
    trained = [r for r in rows if r.kind == "model"]
    ref = trained[0] if trained else rows[0]
    seeds = table.seeds()
    out = [f"### {table.dataset_name} · protocol `{table.protocol}` · horizon {table.horizon}"
           + (f" · window {table.window}" if table.window != 12 else "") + f" · budget `{table.budget_label}`", ""]
    out.append(f"- **Protocol:** `{table.protocol}` — {PROTOCOL_TEXT.get(table.protocol, table.protocol)}; test "
               f"split, {ref.windows:,} windows; masked metrics (targets equal to 0 left out) at single steps "
               f"{', '.join(c.split('@')[1] for c in cols if c.startswith('mae@') and c != 'mae@avg')} and pooled "
               f"over the horizon (avg).")
    kind = "CPU budget" if table.cpu_budget else ("full budget" if table.full_budget else "reduced budget")
    line = f"- **Budget:** `{table.budget_label}` ({kind}: {budget_text(ref) or 'see the result files'})"
    if ref.overrides:
        line += f"; overrides of the `{table.budget}` preset: {_kv(ref.overrides)}"
    out.append(line + ".")
    if not table.full_budget:
        out.append(f"  **{'CPU-budget' if table.cpu_budget else 'Reduced-budget'} numbers: not comparable with "
                   f"full-budget (`paper` budget) numbers.**")
    out.append(f"- **Seeds:** {', '.join(map(str, seeds)) or '—'}; cells are mean ± sample std (ddof=1) over the "
               f"n seeds of the row; baselines are deterministic (n = 1). Best (lowest) mean per column in bold.")
    commits = table.git_commits()
    dirty = any(r.git_dirty for r in rows)
    out.append(f"- **Machine:** {'; '.join(table.machines()) or 'unknown'}. **Code:** "
               f"{', '.join(commits) or 'unknown commit'}{' (with uncommitted changes)' if dirty else ''}.")
    reused = [r for r in rows if r.reused_from]
    if reused:
        src = sorted({f for r in reused for f in r.reused_from})
        out.append("- **Reused units** (copied with `--reuse` from " + ", ".join(f"`{f}`" for f in src)
                   + ": same settings, trained once): " + "; ".join(
                       f"`{r.model}` {len(r.reused_from)} of {r.n}" for r in reused) + ".")
    mo = {r.model: r.model_overrides for r in rows  # named with them already where the model has several sets
          if r.model_overrides and not r.model.endswith(overrides_suffix(r.model_overrides))}
    if mo:
        out.append("- **Model overrides:** " + "; ".join(f"`{m}` {_kv(v)}" for m, v in mo.items()) + ".")
    out.append("")
    head = "| model | n | " + " | ".join(_col_title(c) for c in cols) + " | params | steps | train s | peak RSS MB |"
    out += [head, "|" + "---|" * (len(cols) + 6)]
    any_resumed = any_bound = any_cut = False
    mixed = len({k for r in rows for k in r.train_time_s}) > 1  # seeds trained on a GPU and on a CPU
    for r in rows:
        cells = []
        for c in cols:
            s = r.metrics[c].format(digits)
            cells.append(f"**{s}**" if r.model in best.get(c, ()) else s)
        t = _train_time_cell(r, label=mixed) + ("†" if r.train_time_partial and r.train_time_s else "")
        any_resumed |= r.train_time_partial
        if r.peak_rss_mb is None:
            mem = "—"
        else:
            mem = ("" if r.rss_exact else "≤") + f"{r.peak_rss_mb:.0f}"
            any_bound |= not r.rss_exact
        if r.cuda_max_allocated_mb is not None:
            mem += f" (GPU {r.cuda_max_allocated_mb:.0f})"
        params = "—" if r.parameters is None else (f"{r.parameters:,}" if r.kind == "model" else "0")
        name = f"`{r.model}`" + (" (baseline)" if r.kind == "baseline" else "")
        steps = "—" if r.steps is None else (f"{r.steps.mean:,.0f}" if not r.steps.std else
                                             f"{r.steps.mean:,.0f} ± {r.steps.std:,.0f}")
        steps += "‡" if r.cut_by_clock else ""
        any_cut |= r.cut_by_clock
        out.append(f"| {name} | {r.n} | " + " | ".join(cells) + f" | {params} | {steps} | {t} | {mem} |")
    notes = ["steps: optimizer steps trained (mean over seeds; a `--max-time` unit's steps are what fitted in its "
             "time); train s: Lightning fit time (mean over seeds" + ("; seeds trained on a GPU and on a CPU are "
             "averaged apart: `CPU 904.1 ×2` = mean of 2 seeds trained on the CPU" if mixed else "")
             + "); peak RSS: the process's peak resident memory "
             "(see `peak_memory` in the result files)."]
    if any_resumed:
        notes.append("†: at least one seed was resumed and its earlier attempts left no record of their time; the "
                     "training time counts only the part after resuming.")
    if any_cut:
        notes.append("‡: at least one seed reached the time limit before the number of steps fixed after its "
                     "warm-up (the machine slowed down later in the run): `global_steps` < `schedule_steps` in its "
                     "result.json, its learning-rate schedule not quite at its end.")
    if any_bound:
        notes.append("≤: run in-process after other units; the process's high-water mark is an upper bound "
                     "(`--isolate` measures each unit alone).")
    out += ["", *[f"<sub>{n}</sub>" for n in notes]]
    order = ordering_markdown(table, digits)
    if order:
        out += ["", order]
    if paper and table.horizon == 12 and table.dataset == PAPER_DATASET:
        out += ["", f"**{PAPER_LABEL}** — not run here, shown for reference:", "", paper_rows_markdown(cols)]
    return "\n".join(out)


def report_markdown(tables: Iterable[Table], *, paper: bool = False, source: str = "") -> str:
    """All tables, one section each, under a title naming the result files they come from."""
    tables = list(tables)
    head = ["# Benchmark results", "",
            f"Every number below comes from a `result.json` under `{source}`." if source else
            "Every number below comes from a bench `result.json` file.",
            "Tables never mix budgets, protocols or horizons.", ""]
    return "\n".join(head + [table_markdown(t, paper=paper) + "\n" for t in tables]).rstrip() + "\n"


def write_csv(tables: Iterable[Table], path: Union[str, Path], *, paper: bool = False) -> Path:
    """One line per aggregated row (``<col>_mean`` / ``<col>_std`` per metric column, std empty for n = 1).

    With ``paper``, the published rows follow with ``source`` = the published label.
    """
    tables = list(tables)
    cols = sorted({c for t in tables for c in t.columns}, key=lambda c: (METRICS.index(c.split("@")[0]),
                                                                         _step_key(c.split("@")[1])))
    fields = ["source", "dataset", "protocol", "horizon", "window", "budget", "budget_label", "cpu_budget", "full_budget",
              "model", "kind", "n", "seeds", *[f"{c}_{s}" for c in cols for s in ("mean", "std")], "windows",
              "parameters", "steps_mean", "steps_std",
              *[f"train_time_s_{k}_{s}" for k in ("cpu", "gpu") for s in ("mean", "std", "n")],
              "peak_rss_mb", "rss_exact",
              "cuda_max_allocated_mb", "resumed", "machine", "git_commits", "git_dirty", "overrides",
              "model_overrides", "unit_ids"]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for t in tables:
            for r in t.rows:
                line = {"source": "run here", "dataset": r.dataset, "protocol": r.protocol, "horizon": r.horizon, "window": r.window,
                        "budget": r.budget, "budget_label": r.budget_label, "cpu_budget": r.cpu_budget,
                        "full_budget": r.full_budget, "model": r.model, "kind": r.kind, "n": r.n,
                        "seeds": ";".join("" if s is None else str(s) for s in r.seeds), "windows": r.windows,
                        "parameters": r.parameters, "steps_mean": None if r.steps is None else r.steps.mean,
                        "steps_std": None if r.steps is None else r.steps.std,
                        "peak_rss_mb": r.peak_rss_mb, "rss_exact": r.rss_exact,
                        "cuda_max_allocated_mb": r.cuda_max_allocated_mb, "resumed": r.resumed,
                        "machine": " | ".join(r.machines), "git_commits": ";".join(r.git_commits),
                        "git_dirty": r.git_dirty, "overrides": json.dumps(r.overrides, sort_keys=True),
                        "model_overrides": json.dumps(r.model_overrides, sort_keys=True),
                        "unit_ids": ";".join(r.unit_ids)}
                for k, st in r.train_time_s.items():
                    line.update({f"train_time_s_{k.lower()}_mean": st.mean, f"train_time_s_{k.lower()}_std": st.std,
                                 f"train_time_s_{k.lower()}_n": st.n})
                for c, s in r.metrics.items():
                    line[f"{c}_mean"], line[f"{c}_std"] = s.mean, s.std
                w.writerow(line)
        if paper:
            for p in paper_rows():
                line = {"source": PAPER_LABEL, "dataset": PAPER_DATASET, "protocol": "authors' (raw timeline split)",
                        "horizon": 12, "window": 12, "budget": "authors' 150 epochs", "full_budget": True, "cpu_budget": False,
                        "model": p["row"] + " (T&S)", "kind": "published"}
                for c, (m, s) in p["metrics"].items():
                    line[f"{c}_mean"], line[f"{c}_std"] = m, s
                w.writerow(line)
    return path


def _step_key(s: str):
    return (1, 0) if s == "avg" else (0, int(s))


def _subtitle(table: Table) -> str:
    kind = "CPU budget" if table.cpu_budget else ("full budget" if table.full_budget else "reduced budget")
    return (f"{table.dataset_name}, protocol {table.protocol}, horizon {table.horizon}, budget {table.budget_label} "
            f"({kind}), seeds {','.join(map(str, table.seeds())) or '-'}")


def plot_metric_vs_step(table: Table, path: Union[str, Path]) -> Path:
    """MAE / RMSE / MAPE at each evaluation step (3, 6, 12[, 24, 36]) per model, error bars = sample std."""
    steps = [int(c.split("@")[1]) for c in table.columns if c.startswith("mae@") and c != "mae@avg"]
    fig = new_figure(4.2 * len(METRICS), 3.8)
    axes = fig.subplots(1, len(METRICS))
    for ax, m in zip(axes, METRICS):
        for r in table.rows:
            means = [r.metrics[f"{m}@{s}"].mean for s in steps]
            stds = [r.metrics[f"{m}@{s}"].std or 0.0 for s in steps]
            style = "--" if r.kind == "baseline" else "-"
            ax.errorbar(steps, means, yerr=stds, fmt="o" + style, capsize=3, ms=4, lw=1.2, label=r.model)
        ax.set_xticks(steps)
        ax.set_xlabel("horizon step (5 min)")
        ax.set_ylabel(_UPPER[m])
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, loc="upper left")
    fig.suptitle(_subtitle(table), fontsize=9)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path


def plot_diag_variants(table: Table, path: Union[str, Path], metric: str = "mae") -> Optional[Path]:
    """Grouped bars: the paper's variants (a)-(e) side by side for T&S and TTS, one panel per step.

    Returns None when the table holds none of the ``tas_attn_*`` / ``tts_attn_*`` variants.
    """
    from ..zoo.attention_variants import ARRANGEMENTS, VARIANTS

    labels = {"tas_attn": "T&S", "tts_attn": "TTS"}
    by_name = {r.model: r for r in table.rows}
    archs = [a for a in ARRANGEMENTS if any(f"{a}_{v}" in by_name for v in VARIANTS)]
    if not archs:
        return None
    variants = list(VARIANTS)
    steps = [c.split("@")[1] for c in table.columns if c.startswith(f"{metric}@")]
    fig = new_figure(3.6 * len(steps), 3.8)
    axes = fig.subplots(1, len(steps), squeeze=False)[0]
    width = 0.8 / len(archs)
    letters = "abcde"
    for ax, s in zip(axes, steps):
        for k, a in enumerate(archs):
            xs, hs, es = [], [], []
            for i, v in enumerate(variants):
                r = by_name.get(f"{a}_{v}")
                if r is None:
                    continue
                st = r.metrics[f"{metric}@{s}"]
                xs.append(i + (k - (len(archs) - 1) / 2) * width)
                hs.append(st.mean)
                es.append(st.std or 0.0)
            bars = ax.bar(xs, hs, width=width, yerr=es, capsize=3, label=labels.get(a, a))
            ax.bar_label(bars, labels=[f"{h:.3f}" for h in hs], fontsize=6, rotation=90, label_type="center",
                         color="white")
        ax.set_xticks(range(len(variants)))
        ax.set_xticklabels([f"({letters[i]}) {v}" for i, v in enumerate(variants)], rotation=30, fontsize=7)
        ax.set_title(f"{_UPPER[metric]}@{s}", fontsize=9)
        ax.margins(y=0.25)
        ax.grid(alpha=0.3, axis="y")
    axes[0].legend(fontsize=7)
    fig.suptitle("Diagonal regularizers — " + _subtitle(table), fontsize=9)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path


@dataclass
class ReportFiles:
    """What :func:`write_report` wrote."""

    markdown: Path
    csv: Path
    plots: List[Path] = field(default_factory=list)
    tables: List[Table] = field(default_factory=list)
    text: str = ""
    units_csv: Optional[Path] = None
    archive: Optional[Path] = None


def write_report(results_dir: Union[str, Path], out_dir: Optional[Union[str, Path]] = None, *,
                 paper: bool = False, metric: str = "mae", pack: bool = True) -> ReportFiles:
    """Aggregate ``results_dir`` and write the experiment's outputs (see :mod:`.page`) to ``out_dir``:
    ``README.md`` (its notes kept), ``results.csv`` (one row per unit), ``tables.csv``, ``plots/*.png``; then pack
    the unit folders into ``<results_dir>/units.tar.gz``.

    Units that are only in ``units.tar.gz`` are unpacked first, so a fresh clone can rebuild every table.

    Args:
        results_dir: folder of unit folders holding ``result.json`` (and / or their archive).
        out_dir: where to write the outputs (default ``results_dir`` itself).
        paper: add the published Table 1 rows, labelled, under the horizon-12 tables.
        metric: the metric of the diagonal-variant bar chart (``mae``, ``rmse``, ``mape``).
        pack: write ``units.tar.gz``.

    Raises:
        FileNotFoundError: ``results_dir`` does not exist.
        ValueError: no result file in it, or results that cannot be tabulated together.
    """
    from .archive import pack_units, restore_units
    from .page import page_markdown, read_commands, read_notes, write_units_csv

    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}.")
    results_dir = Path(results_dir)
    if results_dir.is_dir():
        restore_units(results_dir)
    results = collect(results_dir)
    if not results:
        raise ValueError(f"No result files (*/result.json) under {results_dir}: run the grid first "
                         f"(`stgnn-diag bench ... --results {results_dir}`).")
    tables = build_tables(aggregate(results))
    out_dir = Path(out_dir) if out_dir is not None else results_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    text = report_markdown(tables, paper=paper, source=str(results_dir))
    tables_text = [table_markdown(t, paper=paper) for t in tables]
    gains = window_gains_markdown(tables)
    if gains:
        text += "\n" + gains + "\n"
        tables_text.append(gains)
    curves = collect_curves(results_dir)
    if not same_compute(c.gemm_gflops for c in curves):  # the plot's one time axis needs a caveat
        caveat = ("> **Time-to-accuracy plot:** " + mismatch_message("the trained units of this folder",
                                                                     [c.gemm_gflops for c in curves]))
        text += "\n" + caveat + "\n"
        tables_text.append(caveat)
    csv_path = write_csv(tables, out_dir / "tables.csv", paper=paper)
    units_csv = write_units_csv(results, out_dir / "results.csv")
    plots = []
    for t in tables:
        stem = f"{t.protocol}_h{t.horizon}" + (f"_w{t.window}" if t.window != 12 else "") + f"_{t.budget_label}"
        plots.append(plot_metric_vs_step(t, out_dir / "plots" / f"{stem}_metrics_vs_step.png"))
        bar = plot_diag_variants(t, out_dir / "plots" / f"{stem}_diag_variants_{metric}.png", metric=metric)
        if bar is not None:
            plots.append(bar)
    tta = plot_time_to_accuracy(curves, out_dir / "plots" / "time_to_accuracy.png",
                                title=f"MAE at the last step against training time: {results_dir.name}")
    if tta is not None:
        plots.append(tta)
    md = out_dir / "README.md"
    md.write_text(page_markdown(out_dir, tables, results, tables_text, plots, notes=read_notes(md),
                                commands=read_commands(results_dir)))
    archive = pack_units(results_dir) if pack else None
    return ReportFiles(md, csv_path, plots, tables, text, units_csv, archive)
