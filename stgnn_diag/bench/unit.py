"""One unit of a benchmark grid (a model or baseline x seed x budget x data set x protocol x horizon x window),
its id, its budget label and the command-line flags that reproduce its overrides."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ..datasets.registry import DEFAULT_DATASET, dataset_slug, recorded_dataset
from ..training.budgets import OVERRIDABLE

__all__ = ["BUDGET_OVERRIDE_KEYS", "GridError", "Unit", "budget_label", "is_cpu_budget", "model_override_flags",
           "model_slug", "override_flags", "result_settings"]

#: Budget / evaluation overrides a grid may set for all its units, with their short form in labels: the
#: budget knobs (:data:`stgnn_diag.training.budgets.OVERRIDABLE`), ``max_windows`` (thins every split) and
#: ``max_time`` (a wall-clock training budget such as ``"15m"``: the equal-time comparison; the steps reached
#: are in each unit's result) and ``align_window`` (every window scored on the targets of this input length).
BUDGET_OVERRIDE_KEYS: Dict[str, str] = {**{k: short for k, (_, short) in OVERRIDABLE.items()}, "max_windows": "w",
                                        "max_time": "t", "align_window": "a"}

class GridError(ValueError):
    """A grid that cannot be run: unknown model / pattern / budget / protocol, bad values."""


def is_cpu_budget(budget: str) -> bool:
    """Whether a budget preset is a CPU budget (its name starts with ``cpu``; ``cpu-small``)."""
    return budget.startswith("cpu")


def budget_label(budget: str, overrides: Optional[Mapping[str, Any]] = None) -> str:
    """``budget`` alone, or ``budget+<key><value>-...`` when overrides change it.

    Example:
        ``budget_label("cpu-small", {"max_epochs": 1, "max_windows": 300}) == "cpu-small+e1-w300"``;
        ``budget_label("cpu-15min", {"max_time": "15m"}) == "cpu-15min+t15m"``.
    """
    parts = []
    for key, short in BUDGET_OVERRIDE_KEYS.items():
        value = (overrides or {}).get(key)
        if value is not None:
            parts.append(f"{short}{value:g}" if isinstance(value, float) else f"{short}{value}")
    return budget if not parts else f"{budget}+{'-'.join(parts)}"


def override_flags(overrides: Optional[Mapping[str, Any]]) -> List[str]:
    """The ``stgnn-diag bench`` flags that set ``overrides`` (``{"lr": 0.001}`` -> ``["--lr", "0.001"]``); keys
    outside :data:`BUDGET_OVERRIDE_KEYS` and None values are left out."""
    return [x for k, v in (overrides or {}).items() if k in BUDGET_OVERRIDE_KEYS and v is not None
            for x in (f"--{k.replace('_', '-')}", f"{v:g}" if isinstance(v, float) else str(v))]


def model_override_flags(model: str, model_overrides: Optional[Mapping[str, Any]]) -> List[str]:
    """The ``stgnn-diag bench`` flags that give ``model`` its ``model_overrides``
    (``{"input_mask": True}`` -> ``["--set-for", model, "input_mask=true"]``), values written so that
    :func:`stgnn_diag._values.parse_value` reads them back."""
    def text(v: Any) -> str:
        return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))

    return [x for k, v in (model_overrides or {}).items() for x in ("--set-for", model, f"{k}={text(v)}")]


def model_slug(model: str) -> str:
    """A file-name-safe form of a model name (``tsl:GraphWaveNetModel`` -> ``tsl-GraphWaveNetModel``)."""
    return model.replace(":", "-").replace("/", "-")


@dataclass(frozen=True)
class Unit:
    """One run of the grid.

    Attributes:
        model: zoo name or baseline name.
        kind: ``"model"`` (trained) or ``"baseline"`` (evaluated).
        protocol, horizon, window: data protocol and shapes.
        budget: budget preset name (see :data:`stgnn_diag.training.BUDGETS`).
        seed: training seed (``None`` for a baseline).
        overrides: budget / evaluation overrides shared by the grid (``max_epochs``, ``max_windows``...).
        model_overrides: zoo overrides for this model (``hidden_size``...), ``{}`` for none.
        dataset: registered data set name (:func:`stgnn_diag.datasets.list_datasets`).
    """

    model: str
    kind: str
    protocol: str
    horizon: int
    window: int
    budget: str
    seed: Optional[int]
    overrides: Tuple[Tuple[str, Any], ...] = ()
    model_overrides: Tuple[Tuple[str, Any], ...] = ()
    dataset: str = DEFAULT_DATASET

    @property
    def budget_label(self) -> str:
        """The budget preset plus its overrides (see :func:`budget_label`)."""
        return budget_label(self.budget, dict(self.overrides))

    @property
    def unit_id(self) -> str:
        """Folder name: ``<model>__[<dataset>__]<protocol>__h<H>__<budget label>[__m<hash>][__s<seed>]``; the
        data set is named unless it is the default (:data:`~stgnn_diag.datasets.DEFAULT_DATASET`); ``m<hash>``:
        the first 8 hex digits of the sha1 of the model overrides (JSON, sorted keys), so two units that differ
        only in them never share a folder."""
        parts = [model_slug(self.model)]
        if self.dataset != DEFAULT_DATASET:
            parts.append(dataset_slug(self.dataset))
        parts += [self.protocol, f"h{self.horizon}"]
        if self.window != 12:
            parts.append(f"w{self.window}")
        parts.append(self.budget_label)
        if self.model_overrides:
            blob = json.dumps(dict(self.model_overrides), sort_keys=True, default=str).encode()
            parts.append("m" + hashlib.sha1(blob).hexdigest()[:8])
        if self.seed is not None:
            parts.append(f"s{self.seed}")
        return "__".join(parts)

    def settings(self) -> Dict[str, Any]:
        """What must match for a stored result to count as this unit's (and for results to be averaged)."""
        return {"model": self.model, "kind": self.kind, "dataset": self.dataset, "protocol": self.protocol,
                "horizon": self.horizon,
                "window": self.window, "budget": self.budget, "overrides": dict(self.overrides),
                "model_overrides": dict(self.model_overrides), "seed": self.seed}

    def to_dict(self) -> Dict[str, Any]:
        """JSON form (for the isolated worker); inverse of :meth:`from_dict`."""
        return self.settings()

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Unit":
        return cls(model=d["model"], kind=d["kind"], protocol=d["protocol"], horizon=int(d["horizon"]),
                   window=int(d["window"]), budget=d["budget"], seed=d["seed"],
                   overrides=tuple(sorted(d.get("overrides", {}).items())),
                   model_overrides=tuple(sorted(d.get("model_overrides", {}).items())),
                   dataset=recorded_dataset(d))


def result_settings(result: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """A stored result's unit settings (:meth:`Unit.settings`); results written before the data set axis
    were runs on the default data set."""
    have = result.get("settings")
    return None if have is None else {**have, "dataset": recorded_dataset(have)}
