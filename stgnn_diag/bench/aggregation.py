"""Collect bench result files and aggregate them: mean ± sample std over seeds, best per column.

Results are grouped per (model, protocol, horizon, window, budget label); every table holds one
(protocol, horizon, window, budget label), so numbers of different budgets or protocols are never
averaged together nor placed in one table. Within a group the settings must agree (apart from the
seed) and every seed must appear once; within a table every row must have been tested on the same
number of test windows. Anything else is an :class:`AggregationError`.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

import numpy as np

from ..datasets.registry import DEFAULT_DATASET, recorded_dataset
from ..metrics import default_steps
from .calibration import mismatch_message, same_compute
from .unit import result_settings
from .store import RESULT_JSON, load_result

__all__ = ["AggregationError", "METRICS", "Row", "Stat", "Table", "aggregate", "build_tables", "collect",
           "metric_columns", "overrides_suffix", "row_names", "summarize", "trained_on"]

#: Metric families, in table order.
METRICS = ("mae", "rmse", "mape")


class AggregationError(ValueError):
    """Results that cannot honestly be averaged or tabulated together."""


@dataclass(frozen=True)
class Stat:
    """Mean and sample standard deviation (ddof=1) of one quantity over seeds.

    Attributes:
        mean: arithmetic mean.
        std: sample standard deviation (``None`` when ``n == 1``).
        n: number of values.
        values: the values, in seed order.
    """

    mean: float
    std: Optional[float]
    n: int
    values: Tuple[float, ...]

    def format(self, digits: int = 3) -> str:
        """``"2.966 ± 0.022"``, or ``"2.966"`` for a single value."""
        if not math.isfinite(self.mean):
            return "nan"
        return f"{self.mean:.{digits}f}" if self.std is None else f"{self.mean:.{digits}f} ± {self.std:.{digits}f}"


def summarize(values: Sequence[float]) -> Stat:
    """:class:`Stat` of ``values`` (sample std, ddof=1)."""
    arr = np.asarray(list(values), dtype=np.float64)
    if arr.size == 0:
        raise AggregationError("No values to summarize.")
    std = float(np.std(arr, ddof=1)) if arr.size > 1 else None
    return Stat(float(np.mean(arr)), std, int(arr.size), tuple(float(v) for v in arr))


def metric_columns(horizon: int) -> List[str]:
    """``mae@3, mae@6, mae@12, mae@avg, rmse@3, ...`` for ``horizon`` (steps 3/6/12[/24/36] and avg)."""
    steps = list(default_steps(horizon)) + ["avg"]
    return [f"{m}@{s}" for m in METRICS for s in steps]


@dataclass
class Row:
    """One model's aggregate in one table (``model``: see :func:`row_names`)."""

    model: str
    kind: str
    dataset: str
    protocol: str
    horizon: int
    window: int
    budget: str
    budget_label: str
    cpu_budget: bool
    full_budget: bool
    seeds: List[Optional[int]]
    metrics: Dict[str, Stat]
    windows: int
    parameters: Optional[int]
    train_time_s: Dict[str, Stat]  # per kind of machine the seeds trained on ("CPU" / "GPU"), see trained_on
    peak_rss_mb: Optional[float]
    rss_exact: bool
    cuda_max_allocated_mb: Optional[float]
    resumed: bool
    train_time_partial: bool
    overrides: Dict[str, Any]
    model_overrides: Dict[str, Any]
    budget_resolved: Optional[Dict[str, Any]]
    machines: List[str]
    git_commits: List[str]
    git_dirty: bool
    unit_ids: List[str]
    reused_from: List[str] = field(default_factory=list)  # results folders the copied units came from
    steps: Optional[Stat] = None  # optimizer steps trained (None for baselines); a --max-time unit's own count
    cut_by_clock: bool = False  # a --max-time seed hit the time limit before the steps its calibration fixed
    speeds: List[float] = field(default_factory=list)  # machine.gemm_gflops of the seeds that recorded one

    @property
    def timed(self) -> bool:
        """An equal-time row: a wall-clock budget (``--max-time``), not the steps, set its length."""
        return bool(self.overrides.get("max_time"))

    @property
    def n(self) -> int:
        return len(self.seeds)


@dataclass
class Table:
    """Rows sharing data set, protocol, horizon, window and budget label (one markdown table)."""

    protocol: str
    horizon: int
    window: int
    budget: str
    budget_label: str
    rows: List[Row] = field(default_factory=list)
    dataset: str = DEFAULT_DATASET

    @property
    def dataset_name(self) -> str:
        """The data set's display name (``"METR-LA"``); the registry key if it is not registered here."""
        from ..datasets.registry import display_name

        return display_name(self.dataset)

    @property
    def columns(self) -> List[str]:
        return metric_columns(self.horizon)

    @property
    def key(self) -> Tuple[str, str, int, int, str]:
        return (self.dataset, self.protocol, self.horizon, self.window, self.budget_label)

    @property
    def cpu_budget(self) -> bool:
        return self.rows[0].cpu_budget if self.rows else False

    @property
    def full_budget(self) -> bool:
        return all(r.full_budget for r in self.rows if r.kind == "model") and bool(self.rows)

    def seeds(self) -> List[int]:
        return sorted({s for r in self.rows for s in r.seeds if s is not None})

    def machines(self) -> List[str]:
        return sorted({m for r in self.rows for m in r.machines})

    def git_commits(self) -> List[str]:
        return sorted({c for r in self.rows for c in r.git_commits})

    def best(self) -> Dict[str, Set[str]]:
        """Per column, the model(s) with the lowest mean (ties all count); empty with fewer than 2 rows."""
        out: Dict[str, Set[str]] = {}
        if len(self.rows) < 2:
            return {c: set() for c in self.columns}
        for c in self.columns:
            vals = [(r.metrics[c].mean, r.model) for r in self.rows if c in r.metrics
                    and math.isfinite(r.metrics[c].mean)]
            lo = min((v for v, _ in vals), default=None)
            out[c] = {m for v, m in vals if lo is not None and v == lo}
        return out



def trained_on(result: Dict[str, Any]) -> str:
    """``"GPU"`` or ``"CPU"``: where a unit spent its training time.

    The attempt with the longest fit decides (a unit trained on a GPU whose test pass ran on a CPU after a
    lease's deadline counts as GPU); a result without attempt records goes by its machine.
    """
    attempts = [a for a in result.get("attempts") or [] if a.get("fit_s") is not None]
    if attempts:
        device = str(max(attempts, key=lambda a: a["fit_s"]).get("device", "cpu"))
        return "GPU" if device.startswith("cuda") else "CPU"
    return "GPU" if (result.get("machine") or {}).get("uses_gpu") else "CPU"


def _environments(results: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The code provenance of each result and of every recorded training attempt in it (a unit trained under
    one commit and resumed under another names both)."""
    envs = []
    for r in results:
        envs.append({"git_commit": r.get("git_commit"), "git_dirty": r.get("git_dirty")})
        envs += [a["environment"] for a in r.get("attempts") or [] if isinstance(a.get("environment"), dict)]
    return envs

def collect(results_dir: Union[str, Path]) -> List[Dict[str, Any]]:
    """Every ``<results_dir>/<unit id>/result.json``, sorted by unit id.

    Raises:
        FileNotFoundError: ``results_dir`` does not exist.
        ValueError: a file that is not a bench result.
    """
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise FileNotFoundError(f"No results folder {results_dir}.")
    return [load_result(p) for p in sorted(results_dir.glob(f"*/{RESULT_JSON}"))]


def _order(model: str, kind: str) -> tuple:
    from ..zoo.attention_variants import ARRANGEMENTS, VARIANTS

    arrangements, variants = list(ARRANGEMENTS), list(VARIANTS)
    for ai, arch in enumerate(arrangements):
        for vi, v in enumerate(variants):
            if model == f"{arch}_{v}":
                return (kind == "baseline", 0, ai, vi, model)
    return (kind == "baseline", 1, 0, 0, model)


def _settings_without_seed(r: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in (result_settings(r) or {}).items() if k != "seed"}


def _dataset(r: Dict[str, Any]) -> str:
    return recorded_dataset(result_settings(r) or {})


def overrides_suffix(model_overrides: Dict[str, Any]) -> str:
    """``{"hidden_size": 48}`` -> ``" [hidden_size=48]"``: what :func:`row_names` appends to a model's name."""
    return " [" + ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(model_overrides.items())) + "]"


def row_names(results: Sequence[Dict[str, Any]]) -> Dict[str, str]:
    """``{unit id: the name its row goes by}``: the model, followed by its model overrides
    (``tas_attn_none [hidden_size=48]``) where the model appears in ``results`` with more than one set of them,
    so that one entry run with different settings gives rows of their own."""
    def over(r):
        return json.dumps(r.get("model_overrides") or {}, sort_keys=True)

    variants: Dict[str, set] = {}
    for r in results:
        variants.setdefault(r["model"], set()).add(over(r))
    names = {}
    for r in results:
        mo = r.get("model_overrides") or {}
        several = len(variants[r["model"]]) > 1
        names[r["unit_id"]] = r["model"] + (overrides_suffix(mo) if several and mo else "")
    return names


def aggregate(results: Iterable[Dict[str, Any]]) -> List[Row]:
    """One :class:`Row` per (model, data set, protocol, horizon, window, budget label), seeds aggregated; a
    model run with different model overrides gives a row for each (named by :func:`row_names`).

    Raises:
        AggregationError: one seed twice in a group, or results with different settings in a group.
    """
    results = list(results)
    names = row_names(results)
    groups: Dict[tuple, List[Dict[str, Any]]] = {}
    for r in results:
        key = (names[r["unit_id"]], r["protocol"], int(r["horizon"]), int(r.get("window", 12)), r["budget_label"],
               _dataset(r))
        groups.setdefault(key, []).append(r)
    rows = []
    for key, rs in groups.items():
        rs = sorted(rs, key=lambda r: (r["seed"] is None, r["seed"] if r["seed"] is not None else 0))
        seeds = [r["seed"] for r in rs]
        if len(set(seeds)) != len(seeds):
            raise AggregationError(f"{key[0]} ({key[1]}, h{key[2]}, {key[4]}): seed(s) "
                                   f"{sorted({s for s in seeds if seeds.count(s) > 1}, key=str)} appear in more "
                                   f"than one result ({[r['unit_id'] for r in rs]}).")
        ref = _settings_without_seed(rs[0])
        for r in rs[1:]:
            if _settings_without_seed(r) != ref:
                raise AggregationError(f"{rs[0]['unit_id']} and {r['unit_id']} were run with different settings "
                                       f"({ref} vs {_settings_without_seed(r)}); they cannot be averaged.")
        for f in ("budget", "cpu_budget", "kind", "windows"):
            if len({str(r.get(f)) for r in rs}) > 1:
                raise AggregationError(f"The results {[r['unit_id'] for r in rs]} differ in {f!r}; they cannot "
                                       f"be averaged.")
        budgets = {json.dumps(r["budget_resolved"], sort_keys=True) for r in rs if r.get("budget_resolved")}
        if len(budgets) > 1:  # the preset was changed between seeds (older results recorded none: not checked)
            raise AggregationError(f"The results {[r['unit_id'] for r in rs]} were trained under different "
                                   f"settings of budget {rs[0]['budget']!r} ({' vs '.join(sorted(budgets))}); "
                                   f"they cannot be averaged.")
        models = {json.dumps(r["model_config"], sort_keys=True) for r in rs if r.get("model_config")}
        if len(models) > 1:  # the zoo entry changed between seeds (older results recorded none: not checked)
            raise AggregationError(f"The results {[r['unit_id'] for r in rs]} were trained with different "
                                   f"configurations of {rs[0]['model']!r} ({' vs '.join(sorted(models))}); they "
                                   f"cannot be averaged.")
        speeds = [(r.get("machine") or {}).get("gemm_gflops") for r in rs]
        if (rs[0].get("overrides") or {}).get("max_time") and not same_compute(speeds):
            raise AggregationError(mismatch_message(f"The equal-time seeds {[r['unit_id'] for r in rs]}", speeds))
        cols = metric_columns(key[2])
        missing = [c for c in cols if any(c not in r["metrics"] for r in rs)]
        if missing:
            raise AggregationError(f"{rs[0]['unit_id']}: metrics {missing} missing from a result file.")
        times: Dict[str, List[float]] = {}
        for r in rs:  # never averaged across kinds of machine: a GPU fit is ~10x shorter than a CPU one
            if r.get("train_time_s") is not None:
                times.setdefault(trained_on(r), []).append(r["train_time_s"])
        rss = [r["peak_memory"].get("rss_mb") for r in rs if (r.get("peak_memory") or {}).get("rss_mb") is not None]
        cuda = [r["peak_memory"].get("cuda_max_allocated_mb") for r in rs
                if (r.get("peak_memory") or {}).get("cuda_max_allocated_mb") is not None]
        params = {r.get("parameters") for r in rs}
        steps = [r.get("global_steps") for r in rs]
        rows.append(Row(
            model=key[0], kind=rs[0]["kind"], dataset=key[5], protocol=key[1], horizon=key[2], window=key[3], budget=rs[0]["budget"],
            budget_label=key[4], cpu_budget=bool(rs[0]["cpu_budget"]),
            full_budget=all(bool(r.get("full_budget")) for r in rs), seeds=seeds,
            metrics={c: summarize([r["metrics"][c] for r in rs]) for c in cols}, windows=int(rs[0]["windows"]),
            parameters=params.pop() if len(params) == 1 else None,
            steps=summarize(steps) if None not in steps else None,
            speeds=[float(v) for v in speeds if v],
            cut_by_clock=any(r.get("schedule_steps") and r.get("global_steps") is not None
                             and r["global_steps"] < r["schedule_steps"] for r in rs),
            train_time_s={k: summarize(v) for k, v in sorted(times.items())}, peak_rss_mb=max(rss) if rss else None,
            rss_exact=bool(rss) and all(r["peak_memory"].get("rss_exact") for r in rs),
            cuda_max_allocated_mb=max(cuda) if cuda else None, resumed=any(r.get("resumed") for r in rs),
            # a resumed unit whose earlier attempts left no record of their time (older results: none did)
            train_time_partial=any(r.get("resumed") and not r.get("train_time_complete") for r in rs),
            overrides=dict(rs[0].get("overrides") or {}), model_overrides=dict(rs[0].get("model_overrides") or {}),
            budget_resolved=rs[0].get("budget_resolved"),
            machines=sorted({(r.get("machine") or {}).get("summary", "unknown machine") for r in rs}),
            git_commits=sorted({str(e.get("git_commit"))[:10] for e in _environments(rs) if e.get("git_commit")}),
            git_dirty=any(e.get("git_dirty") for e in _environments(rs)), unit_ids=[r["unit_id"] for r in rs],
            reused_from=[str(Path(r["reused_from"]).parent) for r in rs if r.get("reused_from")]))
    rows.sort(key=lambda r: (r.dataset, r.protocol, r.horizon, r.window, r.budget_label, _order(r.model, r.kind)))
    return rows


def build_tables(rows: Iterable[Row]) -> List[Table]:
    """Group rows into tables of one (data set, protocol, horizon, window, budget label) each.

    Raises:
        AggregationError: rows of one table tested on different numbers of windows.
    """
    tables: Dict[tuple, Table] = {}
    for r in rows:
        key = (r.dataset, r.protocol, r.horizon, r.window, r.budget_label)
        if key not in tables:
            tables[key] = Table(r.protocol, r.horizon, r.window, r.budget, r.budget_label, dataset=r.dataset)
        tables[key].rows.append(r)
    for t in tables.values():
        windows = {r.windows for r in t.rows}
        if len(windows) > 1:
            raise AggregationError(f"Table {t.key}: rows were tested on different numbers of windows "
                                   f"{ {r.model: r.windows for r in t.rows} }; they are not comparable.")
        timed = [r for r in t.rows if r.timed]
        if not same_compute(v for r in timed for v in r.speeds):
            raise AggregationError(mismatch_message(f"Table {t.key}: the equal-time rows "
                                                    f"{[r.model for r in timed]}", [v for r in timed for v in r.speeds]))
        t.rows.sort(key=lambda r: _order(r.model, r.kind))
    return [tables[k] for k in sorted(tables)]
