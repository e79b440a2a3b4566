"""The one checkpoint reader of the package: ``torch.load(weights_only=True)`` with an explicit allow-list.

A checkpoint is a pickle: loading it with ``weights_only=False`` runs whatever code it names. Every
reader here (``stgnn-diag evaluate`` / ``sensitivity``, the tsl integration) goes through
:func:`load_file`:

* the globals the file needs beyond torch's own ``weights_only`` allow-list are listed *before*
  unpickling (``torch.serialization.get_unsafe_globals_in_checkpoint``);
* each must be a **class** of a trusted package (stgnn_diag, torch, Lightning, tsl, PyG, ...: what
  Lightning and tsl checkpoints hold as hyper-parameters, e.g. a model or metric class), or one of the
  pure functions tsl's metrics store (:data:`FUNCTION_MODULES`, :data:`EXACT`); any other function
  (``builtins.exec``, ``os.system``, ``torch.hub.load`` ...) or anything from another package is refused;
* refused files raise :class:`UnsafeCheckpointError`, one line naming the globals; there is no retry
  with ``weights_only=False``. ``trusted=True`` loads without the check (your own files only).

Checkpoints written by ``stgnn-diag train`` need no extra global at all.
"""
from __future__ import annotations

import importlib
import inspect
import pickle
from pathlib import Path
from typing import Any, Iterable, List, Union

import torch

#: Packages whose classes a checkpoint may name (Lightning / tsl hyper-parameters).
TRUSTED_PREFIXES = ("stgnn_diag.", "tsl.", "torch.", "torchmetrics.", "pytorch_lightning.", "lightning.",
                    "lightning_fabric.", "torch_geometric.", "torch_geometric_temporal.", "collections.",
                    "numpy.")

#: Modules of pure tensor functions that tsl / torchmetrics metric objects keep as attributes.
FUNCTION_MODULES = ("torch.nn.functional.", "tsl.metrics.torch.functional.", "torchmetrics.functional.",
                    "torchmetrics.utilities.data.")
#: Single names a tsl Predictor checkpoint holds: our model factory (its ``model_class``), the
#: torchmetrics availability check, ``functools.partial`` (the metric wrappers) and ``slice``.
EXACT = ("stgnn_diag.integrations.tsl_engine.zoo_model", "torchmetrics.metric.jit_distributed_available",
         "functools.partial", "builtins.slice")


def _allowed(name: str, obj, prefixes) -> bool:
    if obj is None:
        return False
    if name in EXACT:
        return True
    if name.startswith(FUNCTION_MODULES) and callable(obj):
        return True
    return name.startswith(prefixes) and inspect.isclass(obj)


class CheckpointReadError(ValueError):
    """The file is missing pieces, truncated, or not a torch checkpoint."""


class UnsafeCheckpointError(pickle.UnpicklingError):
    """Loading the file would call code outside the allow-list (see :mod:`stgnn_diag.training.safe_load`)."""


def _resolve(name: str):
    """``"pkg.mod.Class.attr"`` -> the object (the longest importable module prefix, then attributes), or None."""
    parts = name.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for part in parts[i:]:
                obj = getattr(obj, part)
        except AttributeError:
            return None
        return obj
    return None


def allowed_globals(path: Union[str, Path], extra_prefixes: Iterable[str] = ()) -> List[Any]:
    """The objects the checkpoint at ``path`` needs beyond torch's own ``weights_only`` list, all on the
    allow-list (for ``torch.serialization.safe_globals``); raises like :func:`load_file` otherwise."""
    path = Path(path)
    try:
        names = list(torch.serialization.get_unsafe_globals_in_checkpoint(str(path)))
    except Exception as e:  # not a zip-format torch file, truncated ...
        raise CheckpointReadError(f"{path} is not a readable checkpoint ({type(e).__name__}: "
                                  f"{str(e).splitlines()[0] if str(e) else ''}).") from e
    prefixes = TRUSTED_PREFIXES + tuple(extra_prefixes)
    allowed, refused = [], []
    for name in names:
        obj = _resolve(name) if name.startswith(prefixes + FUNCTION_MODULES + EXACT) else None
        if _allowed(name, obj, prefixes):
            allowed.append(obj)
        else:
            refused.append(name)
    if refused:
        raise UnsafeCheckpointError(f"{path} was not loaded: it names {refused}, which are not on the allow-list "
                                    f"(loading it could run code). Pass trusted=True only for a file you made.")
    return allowed


def load_file(path: Union[str, Path], map_location="cpu", *, trusted: bool = False,
              extra_prefixes: Iterable[str] = ()) -> Any:
    """Read a checkpoint with ``weights_only=True``, allow-listing only classes of trusted packages.

    Args:
        path: the file.
        map_location: as for ``torch.load``.
        trusted: skip the check and load with ``weights_only=False`` (arbitrary code: files you made).
        extra_prefixes: more package prefixes whose classes are allowed (``"mypkg."``).

    Raises:
        FileNotFoundError: no such file.
        UnsafeCheckpointError: the file names a function or a class of an untrusted package.
        CheckpointReadError: not a readable torch checkpoint (truncated, corrupt, another format).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No checkpoint at {path}.")
    if trusted:
        return torch.load(str(path), map_location=map_location, weights_only=False)
    allowed = allowed_globals(path, extra_prefixes)
    try:
        with torch.serialization.safe_globals(allowed):
            return torch.load(str(path), map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as e:
        raise UnsafeCheckpointError(f"{path} was not loaded: {str(e).splitlines()[0]}") from e
    except Exception as e:
        raise CheckpointReadError(f"{path} is not a readable checkpoint ({type(e).__name__}: {e}).") from e
