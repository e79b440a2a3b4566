"""Schedules for the diagonal regularizers: ramp ``diag_p`` or ``diag_penalty`` during training."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List

from torch import nn

from .temporal_attention import TemporalAttention

PARAMS = ("diag_p", "diag_penalty")
SHAPES = ("linear", "cosine", "constant")


def attention_layers(model: nn.Module) -> List[TemporalAttention]:
    """Every :class:`TemporalAttention` inside ``model``, in module order."""
    return [m for m in model.modules() if isinstance(m, TemporalAttention)]


def set_diagonal_strength(model: nn.Module, param: str, value: float) -> int:
    """Set ``diag_p`` (layers in ``"dropout"`` mode) or the fixed ``diag_penalty`` (``"penalty"``
    mode) of every matching attention layer; returns how many layers were changed.

    Raises ``ValueError`` for an unknown parameter, an invalid value, a learnable penalty (it is
    trained, not scheduled) or a model without a layer in the matching mode.
    """
    if param not in PARAMS:
        raise ValueError(f"Unknown diagonal parameter {param!r}; choose one of {PARAMS}.")
    mode = "dropout" if param == "diag_p" else "penalty"
    layers = [m for m in attention_layers(model) if m.diag == mode]
    if not layers:
        raise ValueError(f"The model has no TemporalAttention with diag={mode!r} to schedule {param} on.")
    if param == "diag_p" and not 0.0 <= value < 1.0:
        raise ValueError(f"diag_p must be in [0, 1), got {value}.")
    if param == "diag_penalty" and any(m.learn_penalty for m in layers):
        raise ValueError("The penalty is learnable (learn_penalty=True); it cannot be scheduled.")
    for m in layers:  # the regularizer module's own state
        if param == "diag_p":
            m.regularizer.p = float(value)
        else:
            m.regularizer.penalty.fill_(float(value))
    return len(layers)


@dataclass(frozen=True)
class DiagonalSchedule:
    """``param`` moves from ``start`` to ``end`` over the first ``steps`` units (epochs or steps),
    then stays at ``end``. ``shape`` is ``"linear"``, ``"cosine"`` or ``"constant"`` (= ``end``)."""

    param: str
    start: float
    end: float
    steps: int
    shape: str = "linear"

    def __post_init__(self):
        if self.param not in PARAMS:
            raise ValueError(f"Unknown diagonal parameter {self.param!r}; choose one of {PARAMS}.")
        if self.shape not in SHAPES:
            raise ValueError(f"Unknown schedule shape {self.shape!r}; choose one of {SHAPES}.")
        if self.steps < 1:
            raise ValueError(f"steps must be >= 1, got {self.steps}.")

    def value(self, step: int) -> float:
        """The value at ``step`` (0-based)."""
        if self.shape == "constant":
            return self.end
        frac = min(1.0, max(0.0, step / self.steps))
        if self.shape == "cosine":
            frac = 0.5 * (1.0 - math.cos(math.pi * frac))
        return self.start + (self.end - self.start) * frac

    def apply(self, model: nn.Module, step: int) -> float:
        """Set the model's layers to the value at ``step``; returns it."""
        v = self.value(step)
        set_diagonal_strength(model, self.param, v)
        return v

    @classmethod
    def parse(cls, spec: str) -> "DiagonalSchedule":
        """From ``"param:start:end:steps[:shape]"``, e.g. ``"diag_p:0:0.3:5"`` (ramp over 5 epochs)."""
        parts = spec.split(":")
        if len(parts) not in (4, 5):
            raise ValueError(f"Bad schedule {spec!r}; expected param:start:end:steps[:shape], e.g. diag_p:0:0.3:5.")
        try:
            return cls(parts[0], float(parts[1]), float(parts[2]), int(parts[3]), *(parts[4:]))
        except ValueError as e:
            raise ValueError(f"Bad schedule {spec!r}: {e}") from e
