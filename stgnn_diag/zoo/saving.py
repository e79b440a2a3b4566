"""A model in a folder of its own: ``save_pretrained(model, dir)`` / ``from_pretrained(dir)``.

The folder holds ``config.json`` (the zoo name, every architecture argument, the weights file's sha256 and,
when known, what the inputs must look like: scaler, covariates, window, horizon, edge direction) and
``weights.pt`` (the ``state_dict``: tensors only, read with ``weights_only=True``). The format is the one of
the shipped tags (:mod:`stgnn_diag.zoo.pretrained`), so a model trained with ``stgnn-diag train`` goes into
a user's own pipeline without the training engine::

    from stgnn_diag.training import load_checkpoint
    load_checkpoint("runs/x/checkpoints/last.ckpt").save_pretrained("my_model")   # with its input spec
    model = stgnn_diag.from_pretrained("my_model")                                 # a plain nn.Module
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Optional, Union

import torch
from torch import nn

from .._io import atomic_write
from .pretrained import PretrainedError, check_overrides, load_weights, sha256

CONFIG, WEIGHTS = "config.json", "weights.pt"
#: ``format`` of a saved folder's config.json.
FORMAT = "stgnn_diag.pretrained/1"


def model_config(model: nn.Module) -> Dict[str, Any]:
    """``model.config``: ``{"name": zoo name, "model_kwargs": {...}}`` (set by ``create_model``)."""
    cfg = getattr(model, "config", None)
    if not isinstance(cfg, dict) or "name" not in cfg:
        raise ValueError(f"This {type(model).__name__} carries no zoo configuration (model.config): build it with "
                         f"stgnn_diag.create_model(name, ...) to save it.")
    return cfg


def save_pretrained(model: nn.Module, directory: Union[str, Path], inputs: Optional[Dict] = None,
                    **info) -> Path:
    """Write ``config.json`` and ``weights.pt`` of a zoo model into ``directory`` (created if needed).

    Args:
        model: a model built by ``create_model`` (it carries ``model.config``).
        inputs: what the inputs must look like (see ``ForecastModule.input_spec``), if known.
        **info: more JSON-serialisable facts to keep (data set, protocol, metrics ...).
    Returns:
        the folder.
    """
    cfg = model_config(model)
    out = {"format": FORMAT, "name": cfg["name"], "model_kwargs": cfg["model_kwargs"], "weights": WEIGHTS,
           "inputs": inputs, **info}
    try:
        json.dumps(out)
    except TypeError as e:
        raise ValueError(f"The configuration of {cfg['name']} is not JSON-serialisable ({e}); build the model "
                         f"with plain numbers / strings / lists as arguments.") from None
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    atomic_write(d / WEIGHTS, lambda tmp: torch.save(state, tmp))
    out["sha256"] = sha256(d / WEIGHTS)
    atomic_write(d / CONFIG, lambda tmp: Path(tmp).write_text(json.dumps(out, indent=2) + "\n"))
    return d


def from_pretrained(directory: Union[str, Path], **overrides) -> nn.Module:
    """The model saved in ``directory`` by :func:`save_pretrained` (sha256 verified, ``weights_only=True``).

    ``overrides`` may change training-only arguments (dropout ...); one that contradicts the weights'
    architecture is a :class:`~stgnn_diag.zoo.pretrained.PretrainedError`. The folder's config is kept as
    ``model.pretrained_cfg``.
    """
    from .registry import create_model, saved_model_kwargs

    d = Path(directory)
    if not (d / CONFIG).is_file():
        raise PretrainedError(f"{d} holds no {CONFIG}: not a folder written by save_pretrained.")
    cfg = json.loads((d / CONFIG).read_text())
    if cfg.get("format") != FORMAT:
        raise PretrainedError(f"{d / CONFIG} has format {cfg.get('format')!r}, not {FORMAT!r}.")
    cfg.setdefault("tag", d.name)
    check_overrides(cfg, overrides)
    model = create_model(cfg["name"], **{**saved_model_kwargs(cfg["name"], cfg["model_kwargs"]), **overrides})
    load_weights(model, cfg, directory=d)
    model.pretrained_cfg = cfg
    return model
