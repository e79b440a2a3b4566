"""Pretrained weights of zoo entries, timm-style: ``create_model(name, pretrained=True | "tag")``.

Each tag of an entry is two files in the package's ``stgnn_diag/zoo/weights/`` (or ``$STGNN_DIAG_WEIGHTS``):

* ``<name>.<tag>.json``: the configuration (architecture arguments, data set, protocol, budget, seed), the
  test metrics, the weights file's name and sha256, the exact command that trained it, and what a user
  needs to prepare inputs (scaler mean / std, covariates and their encoding, window, horizon, edge
  direction);
* ``<name>.<tag>.pt``: the model's ``state_dict`` (tensors only: read with ``weights_only=True``), less the
  tensors the JSON lists under ``fitted_at_load`` (a ``seasonal_fallback`` table: a function of the training
  data, fitted when the engine loads the tag, or by ``stgnn_diag.training.fit_fallback_table(model)``).

Written by ``python -m stgnn_diag.bench.weights`` from a finished benchmark unit. The weights are package data
of the wheel rather than a download: all tags together are about 20 MB, they then work offline and in any
install (editable or not) with no cache to manage, and their sha256 is still checked on every load.
``$STGNN_DIAG_WEIGHTS`` points the zoo at another folder of the same layout (your own exported tags).
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Dict, List, Optional, Union

import torch
from torch import nn

from ..models.seasonal_fallback import table_keys

#: Where the shipped weights live (package data), unless ``$STGNN_DIAG_WEIGHTS`` says otherwise.
WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"


class PretrainedError(ValueError):
    """An unknown tag, overrides that contradict the weights, or a weights file that does not verify."""


def weights_dir() -> Path:
    env = os.environ.get("STGNN_DIAG_WEIGHTS")
    return Path(env).expanduser().resolve() if env else WEIGHTS_DIR


def sha256(path: Union[str, Path]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def pretrained_tags(name: str) -> List[str]:
    """The tags shipped for ``name`` (sorted; the default tag first when one is marked ``default``)."""
    d = weights_dir()
    if not d.is_dir():
        return []
    cfgs = [json.loads(p.read_text()) for p in sorted(d.glob(f"{name}.*.json"))]
    cfgs = [c for c in cfgs if c.get("name") == name]
    return [c["tag"] for c in sorted(cfgs, key=lambda c: (not c.get("default", False), c["tag"]))]


def pretrained_cfg(name: str, tag: Union[bool, str, None] = True) -> Dict:
    """The configuration of one tag (``True``: the default tag)."""
    tags = pretrained_tags(name)
    if not tags:
        raise PretrainedError(f"{name!r} has no pretrained weights in {weights_dir()}; "
                              f"stgnn_diag.list_models(pretrained=True) lists the entries that do.")
    if tag is True or tag is None:
        tag = tags[0]
    if tag not in tags:
        raise PretrainedError(f"{name!r} has no pretrained tag {tag!r}; its tags: {tags}.")
    return json.loads((weights_dir() / f"{name}.{tag}.json").read_text())


#: Arguments that change training behaviour only, never the weights' shapes or meaning: free to override.
TRAINING_ONLY = ("dropout", "attn_dropout", "diag_p")


def check_overrides(cfg: Dict, overrides: Dict) -> None:
    """Raise :class:`PretrainedError` for an override that contradicts the weights' architecture."""
    bad = {k: (v, cfg["model_kwargs"][k]) for k, v in overrides.items()
           if k in cfg["model_kwargs"] and cfg["model_kwargs"][k] != v and k not in TRAINING_ONLY}
    if bad:
        said = ", ".join(f"{k}={v!r} (the weights have {w!r})" for k, (v, w) in bad.items())
        raise PretrainedError(f"{cfg['name']}.{cfg['tag']}: {said}; drop the override, or build the model without "
                              f"pretrained weights.")


def nonfinite_entries(state: Dict[str, torch.Tensor]) -> List[str]:
    """Names of the floating-point tensors of a ``state_dict`` that hold NaN or Inf."""
    return [k for k, v in state.items() if isinstance(v, torch.Tensor) and v.is_floating_point()
            and not bool(torch.isfinite(v).all())]


def check_finite_state(state: Dict[str, torch.Tensor], source, error=None) -> None:
    """Raise ``error`` (default :class:`PretrainedError`) if weights in ``state`` are NaN or Inf: such a model
    predicts NaN, and every metric of it would be ``nan``."""
    bad = nonfinite_entries(state)
    if bad:
        raise (error or PretrainedError)(f"{source} holds NaN / Inf weights in {len(bad)} tensors ({bad[:4]}"
                                         f"{' ...' if len(bad) > 4 else ''}): a diverged run. Use an earlier "
                                         f"checkpoint of it, or train again with a lower --lr.")


def load_weights(model: nn.Module, cfg: Dict, directory: Optional[Path] = None) -> nn.Module:
    """Verify the weights file of ``cfg`` (in ``directory``, default :func:`weights_dir`) against its sha256
    and load it strictly into ``model``."""
    path = Path(directory if directory is not None else weights_dir()) / cfg["weights"]
    if not path.is_file():
        raise PretrainedError(f"The weights file {path} of {cfg['name']}.{cfg['tag']} is missing.")
    got = sha256(path)
    if got != cfg["sha256"]:
        raise PretrainedError(f"{path} does not verify: sha256 {got}, expected {cfg['sha256']} (a changed or "
                              f"truncated file).")
    state = torch.load(path, map_location="cpu", weights_only=True)
    check_finite_state(state, path)
    # tensors fitted from data rather than learned (the seasonal table) that the file leaves out on purpose
    left_out = set(cfg.get("fitted_at_load", []))
    if not left_out <= set(table_keys(model)):
        raise PretrainedError(f"{cfg['name']}.{cfg['tag']}: fitted_at_load names {sorted(left_out)}, but only the "
                              f"seasonal table ({table_keys(model)}) may be left out of a weights file.")
    try:
        missing, unexpected = model.load_state_dict(state, strict=False)
    except RuntimeError as e:  # a tensor of another shape
        raise PretrainedError(f"{path} does not fit {cfg['name']} built with {cfg['model_kwargs']}: "
                              f"{str(e).splitlines()[1].strip() if len(str(e).splitlines()) > 1 else e}") from None
    if unexpected or set(missing) != left_out:
        said = "; ".join(f"{what}: {sorted(keys)[:4]}" for what, keys in
                         (("missing", set(missing) - left_out), ("unexpected", unexpected),
                          ("present though fitted_at_load", left_out - set(missing))) if keys)
        raise PretrainedError(f"{path} does not fit {cfg['name']} built with {cfg['model_kwargs']}: {said}.")
    return model


def load_state_file(model: nn.Module, path: Union[str, Path]) -> nn.Module:
    """Load a weights-only file (a ``state_dict``, or a dict with one under ``state_dict`` whose keys may
    carry Lightning's ``model.`` prefix) strictly into ``model``; read with ``weights_only=True``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No weights file at {path}.")
    obj = torch.load(path, map_location="cpu", weights_only=True)
    state = obj.get("state_dict", obj) if isinstance(obj, dict) else obj
    if any(k.startswith("model.") for k in state):
        state = {k[len("model."):]: v for k, v in state.items() if k.startswith("model.")}
    check_finite_state(state, path)
    model.load_state_dict(state)
    return model


def has_pretrained(name: str, tag: Optional[str] = None) -> bool:
    tags = pretrained_tags(name)
    return bool(tags) if tag is None else tag in tags
