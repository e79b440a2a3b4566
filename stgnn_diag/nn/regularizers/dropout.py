"""``diag="dropout"``: diagonal logits dropped at random in training (the paper's variant (d))."""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from .registry import register_regularizer
from .base import DiagonalRegularizer, _no_effect, check_probability


@register_regularizer
class DiagonalDropout(DiagonalRegularizer):
    """In training, each call draws one Bernoulli(``p``) vector of length T (shared by batch, nodes and heads);
    the chosen diagonal logits get -inf, without 1 / (1 - p) rescaling. A no-op in evaluation.

    Args:
        p: drop probability in (0, 1); a schedule sets :attr:`p` between calls.
    """

    name = "dropout"

    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = check_probability("diag_p", p)
        if self.p == 0.0:
            raise ValueError("diag='dropout' needs diag_p > 0 (the probability of dropping a diagonal logit).")

    @classmethod
    def from_args(cls, *, diag_p, diag_penalty, learn_penalty, heads):
        _no_effect(cls.name, diag_penalty=diag_penalty, learn_penalty=learn_penalty)
        return cls(diag_p)

    def removed(self, t: int, device=None) -> Optional[Tensor]:
        if not self.training or self.p <= 0:
            return None
        return torch.diag(torch.rand(t, device=device) < self.p)

    def options(self):
        return {"diag_p": self.p}
