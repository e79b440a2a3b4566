"""``diag="mask"``: every step is forbidden to attend to itself (the paper's variant (c))."""
from __future__ import annotations

from typing import Dict, Optional

import torch
from torch import Tensor

from .registry import register_regularizer
from .base import DiagonalRegularizer


@register_regularizer
class DiagonalMask(DiagonalRegularizer):
    """Logit (i, i) = -inf in training and evaluation; the softmax renormalises over the other T - 1 keys."""

    name = "mask"

    def __init__(self) -> None:
        super().__init__()
        self._eye: Dict[tuple, Tensor] = {}  # static: one per (T, device)

    def removed(self, t: int, device=None) -> Optional[Tensor]:
        key = (t, str(device))
        if key not in self._eye:
            self._eye[key] = torch.eye(t, dtype=torch.bool, device=device)
        return self._eye[key]
