"""The base of a diagonal regularizer: a module that says which logits of a ``[T, T]`` attention map it
removes and what it adds to the others."""
from __future__ import annotations

import math
from typing import Any, ClassVar, Dict, Optional

import torch
from torch import Tensor, nn


class DiagonalRegularizer(nn.Module):
    """A regularizer of the attention logits ``q_i k_j / sqrt(d_k)``, applied before the softmax.

    Subclasses set :attr:`name` (the ``diag=`` string that selects them), implement :meth:`from_args` and
    override :meth:`removed` and / or :meth:`additive`. They hold their own state (a drop probability, a
    penalty buffer or parameter) and nothing else: no stray buffers in layers that do not use them.
    """

    #: The ``diag=`` name that selects this regularizer (``"mask"``).
    name: ClassVar[str] = ""

    @classmethod
    def from_args(cls, *, diag_p: float, diag_penalty: float, learn_penalty: bool, heads: int
                  ) -> "DiagonalRegularizer":
        """Build from :class:`~stgnn_diag.nn.TemporalAttention`'s arguments, refusing those that would have
        no effect (``diag_p`` without dropout, ...) with a ``ValueError`` that says what to use."""
        _no_effect(cls.name, diag_p=diag_p, diag_penalty=diag_penalty, learn_penalty=learn_penalty)
        return cls()

    def removed(self, t: int, device=None) -> Optional[Tensor]:
        """Logits set to ``-inf`` in this call: bool ``[T, T]``, or ``None`` for none."""
        return None

    def additive(self, t: int, device=None, dtype=torch.float32) -> Optional[Tensor]:
        """What is added to the logits: ``[T, T]`` or ``[heads, T, T]``, or ``None`` for nothing."""
        return None

    def options(self) -> Dict[str, Any]:
        """The settings shown in the layer's ``repr`` (``{"diag_p": 0.1}``)."""
        return {}

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.options().items())


def check_probability(name: str, p) -> float:
    """``p`` as a float in ``[0, 1)``, else a ``ValueError`` naming ``name``."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= float(p) < 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1), got {p!r}.")
    return float(p)


def check_finite(name: str, value) -> float:
    """``value`` as a finite float, else a ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}.")
    return float(value)


def _no_effect(diag: str, **given) -> None:
    """Refuse arguments that ``diag`` ignores (a silent no-op would hide a typo in a grid)."""
    check_probability("diag_p", given.get("diag_p", 0.0))
    check_finite("diag_penalty", given.get("diag_penalty", 0.0))
    if given.get("diag_p"):
        raise ValueError(f"diag_p={given['diag_p']} has no effect with diag={diag!r}; use diag='dropout'.")
    if given.get("diag_penalty"):
        raise ValueError(f"diag_penalty={given['diag_penalty']} has no effect with diag={diag!r}; "
                         f"use diag='penalty'.")
    if given.get("learn_penalty"):
        raise ValueError("learn_penalty=True needs diag='penalty'.")
