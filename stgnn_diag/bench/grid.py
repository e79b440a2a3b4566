"""A benchmark grid: models x seeds x budgets x data sets x protocols x horizons, expanded into units.

A grid is given as a Python dict, a JSON file or command-line arguments (no YAML)::

    {
      "models": ["tas_attn_*", "tts_attn_*", "historical_average"],   # names, shell patterns, baselines
      "seeds": [0, 1, 2],
      "budgets": ["cpu-small"],
      "datasets": ["metr_la"],                                      # registered data sets (default: metr_la)
      "protocols": ["dcrnn"],
      "horizons": [12],
      "window": [12, 48, 288],                                      # input steps (one or several)
      "overrides": {"max_epochs": 1, "max_windows": 300},          # budget / evaluation overrides
      "model_overrides": {"tts_attn_*": {"hidden_size": 8}}         # per model pattern; every matching
    }                                                               # pattern applies, later ones win

Model patterns are expanded with :func:`stgnn_diag.list_models` (so ``tsl:*`` and ``pygt:*`` work);
names in :data:`stgnn_diag.baselines.BASELINES` are baselines: they are evaluated, not trained, and
being deterministic they get one unit per (data set, protocol, horizon, budget) instead of one per seed.

Every unit has an id naming its folder in the results directory::

    tts_attn_penalty__dcrnn__h12__cpu-small__s0          a trained model, seed 0
    historical_average__dcrnn__h12__cpu-small            a baseline
    tts_attn_none__dcrnn__h12__cpu-small+e1-tb2-w300__s1 a reduced budget (overrides in the label)
    tts_attn_none__pems_bay__dcrnn__h12__cpu-small__s0   another data set than the default one

Several windows score on the same target windows: ``align_window`` (an override, ``+a<T>`` in the label)
defaults to the longest window of the grid (:func:`stgnn_diag.datasets.make_splits`).

The budget part of the id is the *budget label*: the preset name, plus the overrides when there are
any, so results of different effective budgets never share a label (and are never averaged together).
"""
from __future__ import annotations

import difflib
import fnmatch
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Tuple, Union

from ..datasets.registry import DEFAULT_DATASET
from .unit import BUDGET_OVERRIDE_KEYS, GridError, Unit

__all__ = ["GridSpec", "expand_models", "overrides_for"]

_PATTERN_CHARS = set("*?[")


def _is_pattern(name: str) -> bool:
    return any(c in _PATTERN_CHARS for c in name)


def expand_models(names: Iterable[str]) -> Tuple[List[str], List[str]]:
    """Split and expand model names / shell patterns into ``(trained models, baselines)``.

    Order is kept (first occurrence wins); a pattern expands in :func:`list_models` order.

    Raises:
        GridError: a pattern matching nothing, or a name that is neither a zoo model nor a baseline
            (with close matches).
    """
    from ..baselines import BASELINES
    from ..zoo import list_models

    zoo = list_models()
    models: List[str] = []
    baselines: List[str] = []
    for name in names:
        if not isinstance(name, str) or not name:
            raise GridError(f"Model names must be non-empty strings, got {name!r}.")
        if _is_pattern(name):
            hits = [n for n in zoo if fnmatch.fnmatchcase(n, name)]
            hits += [b for b in BASELINES if fnmatch.fnmatchcase(b, name)]
            if not hits:
                raise GridError(f"Model pattern {name!r} matches no zoo model and no baseline "
                                f"(see `stgnn-diag models`).")
        elif name in BASELINES or name in zoo:
            hits = [name]
        else:
            close = difflib.get_close_matches(name, zoo + sorted(BASELINES), n=5, cutoff=0.5)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise GridError(f"Unknown model {name!r}: neither a zoo model nor a baseline "
                            f"({', '.join(sorted(BASELINES))}).{hint}")
        for h in hits:
            target = baselines if h in BASELINES else models
            if h not in target:
                target.append(h)
    return models, baselines


def _int_list(name: str, values: Any) -> List[int]:
    if isinstance(values, (int, str)):
        values = [values]
    out = []
    for v in values:
        try:
            iv = int(v)
        except (TypeError, ValueError):
            raise GridError(f"{name} must be integers, got {v!r}.") from None
        if isinstance(v, float) and v != iv:
            raise GridError(f"{name} must be integers, got {v!r}.")
        out.append(iv)
    if not out:
        raise GridError(f"The grid needs at least one value in {name}.")
    return out


def _str_list(name: str, values: Any) -> List[str]:
    if isinstance(values, str):
        values = [values]
    values = list(values or [])
    if not values:
        raise GridError(f"The grid needs at least one value in {name}.")
    return [str(v) for v in values]


def overrides_for(patterns: Mapping[str, Mapping[str, Any]], model: str) -> Dict[str, Any]:
    """Merge the overrides of every shell pattern (``{'tts_*': {...}, ...}``) that matches ``model``, in order
    (later patterns win)."""
    out: Dict[str, Any] = {}
    for pattern, kv in patterns.items():
        if fnmatch.fnmatchcase(model, pattern):
            out.update(kv)
    return out


@dataclass
class GridSpec:
    """A benchmark grid (see the module docstring).

    Attributes:
        models: zoo names, shell patterns (``"tas_attn_*"``, ``"tsl:*"``) and baseline names.
        seeds: training seeds (baselines ignore them).
        budgets: budget presets (``cpu-small``, ``paper``).
        protocols: ``dcrnn`` and / or ``paper``.
        datasets: registered data set names (default: the default data set).
        horizons: predicted steps (12, 36).
        window: input steps: one or several (an axis; several are aligned on the targets of the longest).
        overrides: budget / evaluation overrides for every unit; keys in :data:`BUDGET_OVERRIDE_KEYS`.
        model_overrides: ``{model pattern: {key: value}}``; every matching pattern applies, in order.
    """

    models: List[str]
    seeds: List[int] = field(default_factory=lambda: [0])
    budgets: List[str] = field(default_factory=lambda: ["cpu-small"])
    protocols: List[str] = field(default_factory=lambda: ["dcrnn"])
    datasets: List[str] = field(default_factory=lambda: [DEFAULT_DATASET])
    horizons: List[int] = field(default_factory=lambda: [12])
    window: Union[int, List[int]] = 12
    overrides: Dict[str, Any] = field(default_factory=dict)
    model_overrides: Dict[str, Dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.models = _str_list("models", self.models)
        self.seeds = _int_list("seeds", self.seeds)
        self.budgets = _str_list("budgets", self.budgets)
        self.protocols = _str_list("protocols", self.protocols)
        self.datasets = _str_list("datasets", self.datasets)
        self.horizons = _int_list("horizons", self.horizons)
        self.windows = _int_list("window", self.window)
        self.window = self.windows[0]
        self.overrides = {k: v for k, v in dict(self.overrides or {}).items() if v is not None}
        if len(set(self.windows)) > 1 and "align_window" not in self.overrides:
            self.overrides["align_window"] = max(self.windows)  # like with like: the same test targets
        self.model_overrides = {str(k): dict(v) for k, v in dict(self.model_overrides or {}).items()}

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "GridSpec":
        """From a plain dict (the JSON file's content); unknown keys are an error."""
        known = {"models", "seeds", "budgets", "protocols", "datasets", "horizons", "window", "overrides", "model_overrides"}
        extra = set(d) - known
        if extra:
            raise GridError(f"Unknown grid keys {sorted(extra)}; valid: {sorted(known)}.")
        if "models" not in d:
            raise GridError("A grid needs 'models'.")
        return cls(**dict(d))

    @classmethod
    def from_json(cls, path: Union[str, Path]) -> "GridSpec":
        """From a JSON file holding the dict of :meth:`from_dict`."""
        return cls.from_dict(cls.read_json(path))

    @staticmethod
    def read_json(path: Union[str, Path]) -> Dict[str, Any]:
        """The raw dict of a grid file, not yet validated (a partial grid that the command line
        completes, e.g. only ``model_overrides``, is allowed here)."""
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise GridError(f"No grid file at {path}.") from None
        except json.JSONDecodeError as e:
            raise GridError(f"{path} is not valid JSON: {e}") from None
        if not isinstance(data, dict):
            raise GridError(f"{path} must hold a JSON object.")
        return data

    def to_dict(self) -> Dict[str, Any]:
        return {"models": list(self.models), "seeds": list(self.seeds), "budgets": list(self.budgets),
                "protocols": list(self.protocols), "datasets": list(self.datasets), "horizons": list(self.horizons),
                "window": self.windows[0] if len(self.windows) == 1 else list(self.windows),
                "overrides": dict(self.overrides), "model_overrides": {k: dict(v) for k, v in
                                                                         self.model_overrides.items()}}

    # -- validation and expansion ---------------------------------------------------------------
    def validate(self) -> Tuple[List[str], List[str]]:
        """Check every name; returns the expanded ``(trained models, baselines)``.

        Raises:
            GridError: unknown model / pattern / budget / protocol / override key, bad numbers.
        """
        from ..datasets.protocols import PROTOCOLS
        from ..training.budgets import BUDGETS

        for b in self.budgets:
            if b not in BUDGETS:
                close = difflib.get_close_matches(b, BUDGETS, n=2)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                raise GridError(f"Unknown budget {b!r}; choose from {sorted(BUDGETS)}.{hint}")
        for p in self.protocols:
            if p not in PROTOCOLS:
                close = difflib.get_close_matches(p, PROTOCOLS, n=1)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                raise GridError(f"Unknown protocol {p!r}; choose from {sorted(PROTOCOLS)}.{hint}")
        from ..datasets import check_dataset_name

        for d in self.datasets:
            try:
                check_dataset_name(d)
            except ValueError as e:
                raise GridError(str(e)) from None
        for h in self.horizons:
            if h < 1:
                raise GridError(f"Horizons must be >= 1, got {h}.")
        if min(self.windows) < 1:
            raise GridError(f"window must be >= 1, got {min(self.windows)}.")
        align = self.overrides.get("align_window")
        if align is not None and (not isinstance(align, int) or align < max(self.windows)):
            raise GridError(f"align_window must be an integer >= every window ({max(self.windows)}), got {align!r}.")
        bad = set(self.overrides) - set(BUDGET_OVERRIDE_KEYS)
        if bad:
            raise GridError(f"Unknown budget overrides {sorted(bad)}; valid: {sorted(BUDGET_OVERRIDE_KEYS)}. "
                            f"Model settings (hidden_size, heads ...) go in model_overrides.")
        if "max_time" in self.overrides:
            from ..training.wall_clock import parse_duration

            if not isinstance(self.overrides["max_time"], str):
                raise GridError(f"max_time must be a duration string such as '15m', got "
                                f"{self.overrides['max_time']!r}.")
            try:
                parse_duration(self.overrides["max_time"])
            except ValueError as e:
                raise GridError(str(e)) from None
        models, baselines = expand_models(self.models)
        for pattern in self.model_overrides:
            if not any(fnmatch.fnmatchcase(m, pattern) for m in models):
                raise GridError(f"model_overrides pattern {pattern!r} matches none of the grid's trained "
                                f"models {models}.")
        from ..zoo import check_model_arguments, get_entry

        for m in models:  # a misspelt override fails here (and in --dry-run), not after hours of other units
            if get_entry(m).native:
                try:
                    check_model_arguments(m, self.overrides_for(m))
                except ValueError as e:
                    raise GridError(f"model_overrides: {e}") from None
        return models, baselines

    def overrides_for(self, model: str) -> Dict[str, Any]:
        """The merged ``model_overrides`` of every pattern matching ``model`` (later patterns win)."""
        return overrides_for(self.model_overrides, model)

    def units(self) -> List[Unit]:
        """All units, in run order: per budget, protocol and horizon, the baselines first, then the
        trained models seed by seed (so a partial grid already holds complete seed-0 rows)."""
        models, baselines = self.validate()
        ov = tuple(sorted(self.overrides.items()))
        out: List[Unit] = []
        for dataset in self.datasets:
            for budget in self.budgets:
                for protocol in self.protocols:
                    for horizon in self.horizons:
                        for window in self.windows:
                            for b in baselines:
                                out.append(Unit(b, "baseline", protocol, horizon, window, budget, None, ov,
                                                dataset=dataset))
                        for seed in self.seeds:
                            for window in self.windows:
                                for m in models:
                                    mo = tuple(sorted(self.overrides_for(m).items()))
                                    out.append(Unit(m, "model", protocol, horizon, window, budget, seed, ov, mo,
                                                    dataset=dataset))
        ids = [u.unit_id for u in out]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:  # e.g. two model names with the same slug
            raise GridError(f"Two units share the ids {dup}.")
        return out
