"""``diag="none"``: plain attention (the paper's variant (b))."""
from __future__ import annotations

from .registry import register_regularizer
from .base import DiagonalRegularizer


@register_regularizer
class NoRegularizer(DiagonalRegularizer):
    """Leaves the logits as they are."""

    name = "none"
