"""Build a zoo model for the sensitivity tools, optionally with weights from a checkpoint file."""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

import torch
from torch import nn

from ..training.predictor import check_run_folder
from ..training.safe_load import CheckpointReadError, UnsafeCheckpointError, load_file
from ..zoo import create_model
from ..zoo.pretrained import check_finite_state


class CheckpointFormatError(ValueError):
    """The file does not hold weights this tool can read, or they do not fit the model."""


def _read(path: Path) -> Any:
    """The file's content through the package's one safe reader (no retry with ``weights_only=False``)."""
    try:
        return load_file(path)
    except (CheckpointReadError, UnsafeCheckpointError) as e:
        raise CheckpointFormatError(str(e)) from e


def read_checkpoint(path) -> Tuple[Dict[str, torch.Tensor], Optional[str], Dict[str, Any]]:
    """Read ``(state_dict, model_name or None, model_kwargs)`` from a checkpoint file.

    Accepted: a bare ``state_dict``; or a dict with key ``state_dict`` and optionally ``model_name`` /
    ``model_kwargs`` at its top level or under ``hyper_parameters`` (Lightning, stgnn_diag's
    training). Keys with a leading ``model.`` (a Lightning module wrapping the model) are stripped,
    and then only those are kept. Read with ``weights_only=True`` and an explicit allow-list
    (:mod:`stgnn_diag.training.safe_load`): a file that would run code is refused.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No checkpoint at {path}.")
    obj = _read(path)
    if not isinstance(obj, dict):
        raise CheckpointFormatError(f"{path} holds a {type(obj).__name__}, not a state_dict or a dict with one.")
    hp = obj.get("hyper_parameters") if isinstance(obj.get("hyper_parameters"), dict) else {}
    if "state_dict" in obj:
        sd = obj["state_dict"]
    elif obj and all(isinstance(v, torch.Tensor) for v in obj.values()):
        sd = obj
    else:
        raise CheckpointFormatError(f"{path} has no 'state_dict' key and is not a state_dict itself "
                                    f"(keys: {sorted(map(str, obj))[:8]}).")
    if not isinstance(sd, dict):
        raise CheckpointFormatError(f"{path}: 'state_dict' is a {type(sd).__name__}, not a dict.")
    if any(k.startswith("model.") for k in sd):
        sd = {k[len("model."):]: v for k, v in sd.items() if k.startswith("model.")}
    name = obj.get("model_name", hp.get("model_name"))
    kwargs = obj.get("model_kwargs", hp.get("model_kwargs")) or {}
    if hp:
        check_run_folder(path, hp)  # a training checkpoint must be its run folder's
    return sd, name, dict(kwargs)


def build_model(name: Optional[str] = None, checkpoint=None, **overrides) -> Tuple[nn.Module, Dict[str, Any]]:
    """A zoo model, untrained or with a checkpoint's weights.

    Args:
        name: zoo name; may be omitted when the checkpoint records ``model_name``.
        checkpoint: path of a checkpoint (see :func:`read_checkpoint`), or None for an untrained model.
        overrides: ``create_model`` keyword arguments; with a checkpoint its ``model_kwargs`` win for
            the architecture, ``overrides`` fill in the rest (e.g. ``n_nodes``).

    Returns:
        ``(model in eval mode, info)``; ``info`` holds ``model`` (the name), ``trained`` (bool), ``checkpoint``
        (str or None) and ``kwargs`` (dict).

    Raises:
        CheckpointFormatError: unreadable file, another model's checkpoint, or weights that do not fit
            (a missing or unexpected parameter, a wrong shape). Buffers the file lacks (e.g. a constant
            diagonal penalty that older code did not save) keep the constructor's value, with a warning.
    """
    sd, ck_name, ck_kwargs = (None, None, {}) if checkpoint is None else read_checkpoint(checkpoint)
    if name is None and ck_name is None:
        raise ValueError("Give a model name (the checkpoint does not record one).")
    if name is not None and ck_name is not None and name != ck_name:
        raise CheckpointFormatError(f"{checkpoint} holds a {ck_name!r} model, not {name!r}.")
    name = name or ck_name
    kwargs = {**overrides, **ck_kwargs}
    model = create_model(name, **kwargs)
    missing_buffers: list = []
    if sd is not None:
        check_finite_state(sd, checkpoint, CheckpointFormatError)
        params = {k for k, _ in model.named_parameters()}
        try:
            res = model.load_state_dict(sd, strict=False)
        except RuntimeError as e:  # shape mismatches
            raise CheckpointFormatError(f"The weights in {checkpoint} do not fit {name} with {kwargs}: "
                                        f"{str(e).splitlines()[0]} ...") from e
        bad_missing = [k for k in res.missing_keys if k in params]
        if bad_missing or res.unexpected_keys:
            raise CheckpointFormatError(
                f"The weights in {checkpoint} do not fit {name} with {kwargs}: missing {bad_missing[:5]}, "
                f"unexpected {res.unexpected_keys[:5]}.")
        missing_buffers = list(res.missing_keys)
        if missing_buffers:  # e.g. a constant penalty buffer saved by newer code only: keep the constructor's value
            warnings.warn(f"{checkpoint} has no value for the buffers {missing_buffers}; they keep the values "
                          f"{name} is built with.", UserWarning, stacklevel=2)
    return model.eval(), {"model": name, "trained": sd is not None, "missing_buffers": missing_buffers,
                          "checkpoint": None if checkpoint is None else str(checkpoint), "kwargs": kwargs}
