"""Context managers that put a model into the state the sensitivity tools need, and restore it.

* :func:`evaluation_mode`: Jacobians and attention maps are taken in evaluation mode (no dropout,
  no diagonal dropout, deterministic). A model found in training mode is switched to ``eval()`` for
  the computation, a :class:`TrainingModeWarning` says so, and the mode is restored afterwards.
* :func:`functorch_ready`: our :class:`~stgnn_diag.nn.TemporalAttention` uses, on CPU, a hand-written
  softmax (a classic ``autograd.Function``) that ``torch.func`` transforms cannot trace; for the
  duration of a ``torch.func`` computation every such layer is switched to its mathematically
  identical ``"sdpa"`` backend.
"""
from __future__ import annotations

import contextlib
import warnings
from typing import Iterator

from torch import nn

from ..nn import TemporalAttention


class TrainingModeWarning(UserWarning):
    """The model was in training mode; it was switched to ``eval()`` for the computation."""


@contextlib.contextmanager
def evaluation_mode(model: nn.Module, what: str = "the sensitivity analysis") -> Iterator[nn.Module]:
    """Run the body with ``model`` in eval mode; warn if it was training; restore every module's mode.

    Args:
        model: any ``nn.Module``.
        what: named in the warning.
    """
    modes = {m: m.training for m in model.modules()}
    if model.training:
        warnings.warn(f"{type(model).__name__} was in training mode; it is switched to eval() for {what} "
                      f"(dropout and diagonal dropout off, deterministic) and restored afterwards.",
                      TrainingModeWarning, stacklevel=3)
    model.eval()
    try:
        yield model
    finally:
        for m, training in modes.items():
            m.training = training


@contextlib.contextmanager
def functorch_ready(model: nn.Module) -> Iterator[nn.Module]:
    """Switch every :class:`TemporalAttention` of ``model`` to the ``"sdpa"`` backend, then restore it."""
    layers = [m for m in model.modules() if isinstance(m, TemporalAttention)]
    backends = [m.backend for m in layers]
    for m in layers:
        m.backend = "sdpa"
    try:
        yield model
    finally:
        for m, b in zip(layers, backends):
            m.backend = b
