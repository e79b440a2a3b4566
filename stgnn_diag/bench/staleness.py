"""When a stored result or run folder still counts as a unit's: the same settings, the same budget preset as it
resolves today, the same model as the zoo builds today. Never a silent reuse of something else."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Union

from ..datasets.registry import recorded_dataset
from ..training.budgets import budget_overrides
from ..training.run_dir import changed_fields, model_kwargs_changes
from ..zoo import get_entry
from .unit import BUDGET_OVERRIDE_KEYS, GridError, Unit, result_settings
from .store import ERROR_JSON, RESULT_JSON, load_result, roundtrip, unit_dir, write_result_json

__all__ = ["budget_changes", "check_run_config", "check_stored_settings", "find_reusable", "model_changes", "reuse_unit",
           "unit_budget"]


def unit_budget(unit: Unit):
    """The :class:`~stgnn_diag.training.Budget` ``unit`` trains under today: its preset with the grid's overrides."""
    from ..training.budgets import get_budget

    return get_budget(unit.budget).with_overrides(**budget_overrides(dict(unit.overrides)))


def budget_changes(unit: Unit, stored: Dict[str, Any]) -> Dict[str, tuple]:
    """``{field: (stored, now)}`` where the budget a result (or run config) was trained under differs from the
    unit's preset as it is now (a preset's learning rate was changed, say); ``{}`` when they agree, for a
    baseline (it trains nothing) and for results that did not record their budget."""
    then = stored.get("budget_resolved")
    if unit.kind != "model" or not then:
        return {}
    return changed_fields(roundtrip(then), roundtrip(unit_budget(unit).to_dict()))


#: Model arguments that come from the data and the unit (not from the zoo entry): taken from the stored record.
DATA_MODEL_ARGUMENTS = ("n_nodes", "horizon", "window", "exog_size")


def model_changes(unit: Unit, stored: Dict[str, Any]) -> Dict[str, tuple]:
    """``{argument: (stored, now)}`` where the model a result (or run config) was trained with differs from
    what the unit's zoo entry builds today (its defaults changed: another number of layers, say); ``{}`` when
    they agree, for a baseline, an integration entry (its overrides are in the unit's settings) and for
    results that did not record their model's configuration."""
    then = (stored.get("model_config") or {}).get("model_kwargs")
    if unit.kind != "model" or not then or not get_entry(unit.model).native:
        return {}
    import torch

    from ..zoo import create_model
    from ..zoo.registry import constructor_defaults

    kwargs = {**dict(unit_budget(unit).model_overrides), **dict(unit.model_overrides),
              **{k: then[k] for k in DATA_MODEL_ARGUMENTS if k in then}}
    with torch.device("meta"):  # the configuration and defaults of the model, without allocating it
        model = create_model(unit.model, **kwargs)
    return model_kwargs_changes(roundtrip(then), roundtrip(model.config["model_kwargs"]),
                                roundtrip(constructor_defaults(model)))


def _changed(changes: Dict[str, tuple]) -> str:
    return ", ".join(f"{k}: {a!r} then, {b!r} now" for k, (a, b) in changes.items())


def check_stored_settings(unit: Unit, stored: Dict[str, Any], where: Path) -> None:
    want = roundtrip(unit.settings())
    have = result_settings(stored)
    if have != want:
        diff = {k: (have or {}).get(k) for k in want if (have or {}).get(k) != want[k]}
        raise GridError(f"{where} was made with other settings than unit {unit.unit_id} "
                        f"(stored {diff}, grid {{{', '.join(f'{k!r}: {want[k]!r}' for k in diff)}}}). "
                        f"Use another results folder, or delete {where.parent} to rerun it.")
    changed = budget_changes(unit, stored)
    if changed:
        raise GridError(f"{where} was trained under budget {unit.budget!r} as the preset was then; it has changed "
                        f"since ({_changed(changed)}), so this result is not a run of unit {unit.unit_id} today. "
                        f"Use another results folder, or delete {where.parent} to rerun it.")
    changed = model_changes(unit, stored)
    if changed:
        raise GridError(f"{where} was trained with another {unit.model!r} than the zoo builds today "
                        f"({_changed(changed)}), so this result is not a run of unit {unit.unit_id} today. Use another results folder, or "
                        f"delete {where.parent} to rerun it.")


def check_run_config(unit: Unit, run: Path) -> None:
    """A run folder made for other settings is never resumed into this unit."""
    from ..training.run_dir import CONFIG_JSON

    path = run / CONFIG_JSON
    if not path.is_file():
        return
    cfg = json.loads(path.read_text())
    cfg["dataset"] = recorded_dataset(cfg)
    ov = dict(unit.overrides)
    want = {"model": unit.model, "dataset": unit.dataset, "protocol": unit.protocol, "horizon": unit.horizon,
            "window": unit.window, "budget": unit.budget, "seed": unit.seed,
            "model_overrides": dict(unit.model_overrides) or None, **{k: ov.get(k) for k in BUDGET_OVERRIDE_KEYS}}
    want = roundtrip(want)
    diff = {k: (cfg.get(k), v) for k, v in want.items() if cfg.get(k) != v}
    diff.update({f"budget.{k}": v for k, v in budget_changes(unit, cfg).items()})  # the preset changed since
    diff.update({f"model.{k}": v for k, v in model_changes(unit, cfg).items()})  # the zoo entry changed since
    if diff:
        raise GridError(f"The run folder {run} was made with other settings than unit {unit.unit_id} "
                        f"(stored vs grid: {diff}). Delete it to rerun the unit.")


def find_reusable(unit: Unit, sources: Sequence[Union[str, Path]]) -> Optional[Path]:
    """The first ``<source>/<unit id>/`` holding a finished result made with exactly ``unit``'s settings.

    A unit is defined by its settings (model, overrides, protocol, horizon, window, budget, seed) and by what
    its budget preset resolves to (a result trained before the preset changed is not reused), so such a
    result is a run of this very unit: experiments that share units (the ecosystem comparison's best variant and
    baselines are Table 1 units) need not train them twice. On the CPU a rerun would repeat it exactly (training
    is deterministic there); a unit trained on a GPU keeps its machine in the copy, and the table says so.
    """
    want = roundtrip(unit.settings())
    for src in sources:
        path = unit_dir(Path(src), unit) / RESULT_JSON
        if path.is_file():
            stored = load_result(path)
            if result_settings(stored) == want and not budget_changes(unit, stored) and not model_changes(unit, stored):
                return path.parent
    return None


def reuse_unit(unit: Unit, source: Path, results_dir: Path) -> Dict[str, Any]:
    """Copy the finished unit folder ``source`` (without checkpoints) into ``results_dir``; the copy's
    ``result.json`` says where it came from (``reused_from``). Returns the result."""
    udir = unit_dir(results_dir, unit)
    if udir.exists():
        shutil.rmtree(udir)  # a "new" unit's folder holds nothing worth keeping (no result, no checkpoint)
    shutil.copytree(source, udir, ignore=shutil.ignore_patterns("checkpoints", ERROR_JSON))
    result = load_result(udir / RESULT_JSON)
    result["reused_from"] = os.path.relpath(source, results_dir)
    write_result_json(udir / RESULT_JSON, result)
    return result
