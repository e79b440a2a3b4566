"""Export a finished benchmark unit as a zoo entry's pretrained tag (``<out>/<name>.<tag>.{pt,json}``).

Usage::

    python -m stgnn_diag.bench.weights results/table1/tas_attn_penalty__dcrnn__h12__cpu-15min__s0 \\
        --tag my_tag --out weights
    STGNN_DIAG_WEIGHTS=weights python -c "import stgnn_diag; stgnn_diag.create_model('tas_attn_penalty', pretrained='my_tag')"

The package's own tags are exported with ``--out stgnn_diag/zoo/weights`` from a checkout.

The unit's ``run/checkpoints/last.ckpt`` gives the weights (tensors only) and the training
configuration, its ``result.json`` the test metrics; see :mod:`stgnn_diag.zoo.pretrained`.

``--seasonal-fallback`` ships a unit trained without ``seasonal_fallback`` with it switched on
(:func:`stgnn_diag.training.seasonal.add_seasonal_fallback`: the table fitted on the training split, then the
test split scored again). The option acts in evaluation mode only, so this is the model that training with it
gives; a unit whose training early stopping steered (validation scores change with the option) is refused. The
weights file leaves the table out (``fitted_at_load`` in the JSON): it is fitted again from the training split
when the tag is loaded by the engine or by ``stgnn_diag.training.fit_fallback_table``.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Dict, Optional

import torch

from ..baselines import BASELINES
from ..datasets import get_dataset, make_splits
from ..models.seasonal_fallback import table_keys
from ..training import load_checkpoint
from ..training.predictor import check_scaler
from ..training.scoring import predict_split, score
from ..training.safe_load import load_file
from ..training.seasonal import add_seasonal_fallback
from ..zoo.pretrained import sha256

#: Where :func:`export_unit` writes without ``out_dir``: relative to the current directory, never the package.
DEFAULT_OUT = "weights"
from .unit import model_override_flags, override_flags


def _command(res: Dict) -> str:
    """The ``stgnn-diag bench`` command that trains the unit again: its preset, each budget override the
    unit ran with as its own flag (``--lr 0.002``) and each model override (``--set-for NAME input_mask=true``)."""
    flags = "".join(" " + f for f in override_flags(res.get("overrides"))
                    + model_override_flags(res["model"], res.get("model_overrides")))
    return (f"stgnn-diag bench --models {res['model']} --seeds {res['seed']} --budgets {res['budget']}{flags} "
            f"--protocols {res['protocol']} --horizons {res['horizon']} --isolate --results <folder>")


def _rescore_with_fallback(module, unit: Path, res: Dict, data_root=None) -> Dict:
    """Switch the seasonal fallback on for ``module`` (in place) and score the unit's test split again."""
    budget = res.get("budget_resolved") or (res.get("config") or {}).get("budget_resolved") or {}
    if budget.get("patience"):
        raise ValueError(f"{unit} trained with early stopping, which validation steers: the option changes "
                         f"validation scores, so train the unit with seasonal_fallback=True instead.")
    cfg = json.loads((unit / "run" / "config.json").read_text())
    hp = module.hparams
    splits = make_splits(get_dataset(cfg["dataset"], data_root, progress=False), hp["protocol"],
                         window=hp["window"], horizon=hp["horizon"], max_windows=cfg.get("max_windows"))
    check_scaler(module, splits)
    if len(splits.test) != res.get("windows"):
        raise ValueError(f"The test split has {len(splits.test)} windows, the unit was scored on {res.get('windows')}.")
    add_seasonal_fallback(module, splits)
    pred = predict_split(module.eval(), splits, "test", progress=False)
    return score(pred, splits.test, hp["horizon"])


def export_unit(unit: Path, tag: str, out_dir: Optional[Path] = None, default: bool = True,
                seasonal_fallback: bool = False, data_root=None) -> Path:
    """Write ``<name>.<tag>.pt`` and ``<name>.<tag>.json`` for one finished unit; returns the JSON path.
    ``seasonal_fallback``: switch the option on and score the test split again (``data_root``: where the data
    set is, default: the library's search)."""
    unit = Path(unit)
    res = json.loads((unit / "result.json").read_text())
    ckpt_path = unit / "run" / "checkpoints" / "last.ckpt"
    if not ckpt_path.is_file():
        raise FileNotFoundError(f"{ckpt_path} is missing: the unit's weights are not on this machine.")
    module = load_checkpoint(ckpt_path)
    hp = module.hparams
    step = load_file(ckpt_path)["global_step"]
    if hp["model_name"] != res["model"] or step != res["global_steps"]:
        raise ValueError(f"{ckpt_path} does not belong to {unit}/result.json (model or step differ).")
    name = hp["model_name"]
    metrics, extra, overrides = res["metrics"], {}, dict(res.get("model_overrides") or {})
    if seasonal_fallback:
        metrics = _rescore_with_fallback(module, unit, res, data_root)
        overrides["seasonal_fallback"] = True
        extra = {"seasonal_fallback": {"set": "after training: historical-median table fitted on the training split, "
                                              "test scored again", "metrics_without": res["metrics"]}}
    out = Path(out_dir) if out_dir is not None else Path(DEFAULT_OUT)
    out.mkdir(parents=True, exist_ok=True)
    pt = out / f"{name}.{tag}.pt"
    left_out = table_keys(module.model)  # a function of the training data, fitted at load (larger than the model)
    torch.save({k: v.clone() for k, v in module.model.state_dict().items() if k not in left_out}, pt)

    cfg = {
        "name": name, "tag": tag, "default": default,
        # the whole architecture (entry defaults + the run's arguments): later default changes cannot shift it
        "model_kwargs": module.model.config["model_kwargs"],
        "dataset": "metr_la", "protocol": hp["protocol"], "budget": res["budget"], "seed": hp["seed"],
        "budget_label": res.get("budget_label"),  # the preset and its overrides (cpu-15min+e10-tb750)
        "budget_resolved": res.get("budget_resolved"),  # the budget's settings when it trained (lr ...)
        "global_steps": res["global_steps"], "train_time_s": res.get("train_time_s"),
        "trained_on": (res.get("machine") or {}).get("summary"), "git_commit": res.get("git_commit"),
        "metrics": {"split": "test", "windows": res.get("windows"), **metrics}, **extra,
        "weights": pt.name, "sha256": sha256(pt), **({"fitted_at_load": left_out} if left_out else {}),
        "command": _command({**res, "model_overrides": overrides}),
        "inputs": module.input_spec(),
    }
    baselines = {}
    for b in BASELINES:  # sibling units of the same results folder
        f = unit.parent / f"{b}__{res['protocol']}__h{res['horizon']}__{res['budget']}" / "result.json"
        if f.is_file():
            baselines[b] = json.loads(f.read_text())["metrics"]
    cfg["baselines"] = baselines
    path = out / f"{name}.{tag}.json"
    path.write_text(json.dumps(cfg, indent=2) + "\n")
    return path


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("units", nargs="+", type=Path, help="finished unit folders (result.json + run/checkpoints)")
    p.add_argument("--tag", required=True, help="e.g. metr_la_cpu15")
    p.add_argument("--out", type=Path, help=f"output folder (default: ./{DEFAULT_OUT}); STGNN_DIAG_WEIGHTS=<folder> "
                   f"makes the zoo load its tags")
    p.add_argument("--not-default", action="store_true", help="do not make this the entry's default tag")
    p.add_argument("--seasonal-fallback", action="store_true",
                   help="switch seasonal_fallback on (table from the training split) and score the test split again")
    p.add_argument("--data-root", help="where the data set is (default: the library's search)")
    a = p.parse_args(argv)
    for unit in a.units:
        print(export_unit(unit, a.tag, a.out, default=not a.not_default, seasonal_fallback=a.seasonal_fallback,
                          data_root=a.data_root))


if __name__ == "__main__":
    main()
