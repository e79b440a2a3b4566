"""``diag="penalty"``: a constant added to every diagonal logit (the paper's variant (e))."""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor, nn

from .registry import register_regularizer
from .base import DiagonalRegularizer, _no_effect, check_finite


@register_regularizer
class DiagonalPenalty(DiagonalRegularizer):
    """``penalty`` (the paper uses a negative value, e.g. -0.05) is added to each diagonal logit after the
    1 / sqrt(d_k) scaling, in training and evaluation.

    Args:
        penalty: the initial value.
        learnable: one learnable parameter per head (``[heads]``), else a fixed buffer ``[]`` that a
            schedule may set (it is persistent: a scheduled value survives a checkpoint).
        heads: number of heads (for ``learnable``).

    A checkpoint of one kind loads into the other: a fixed value into every head of a learnable penalty, and
    a learnable one into a fixed penalty when all heads agree (else a ``RuntimeError`` that says so).
    """

    name = "penalty"

    def __init__(self, penalty: float = 0.0, learnable: bool = False, heads: int = 1) -> None:
        super().__init__()
        value = check_finite("diag_penalty", penalty)
        self.learnable = bool(learnable)
        if self.learnable:
            self.penalty = nn.Parameter(torch.full((heads,), value))
        else:
            self.register_buffer("penalty", torch.tensor(value))

    @classmethod
    def from_args(cls, *, diag_p, diag_penalty, learn_penalty, heads):
        _no_effect(cls.name, diag_p=diag_p)
        return cls(diag_penalty, learnable=learn_penalty, heads=heads)

    def additive(self, t: int, device=None, dtype=torch.float32) -> Optional[Tensor]:
        eye = torch.eye(t, device=device, dtype=dtype)
        bias = self.penalty.to(dtype).reshape(-1, 1, 1) * eye  # [heads, T, T] or [1, T, T]
        return bias if self.learnable else bias.squeeze(0)

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        key = prefix + "penalty"
        if key in state_dict:
            value = state_dict[key]
            if self.learnable and value.dim() == 0:
                state_dict[key] = value.expand_as(self.penalty).clone()
            elif not self.learnable and value.dim() == 1:
                if not bool((value == value[0]).all()):
                    raise RuntimeError(f"{key}: a learnable per-head penalty {value.tolist()} cannot load into a "
                                       f"fixed one; build the model with learn_penalty=True.")
                state_dict[key] = value[0].clone()
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def options(self):
        return {"diag_penalty": self.penalty.detach().tolist(), **({"learnable": True} if self.learnable else {})}
