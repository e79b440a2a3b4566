"""Diagonal regularizers for temporal self-attention, as additive logit biases.

Every regularizer of the paper (Hankemeier & Schilling, ESANN 2026) acts on the attention
logits before the softmax, so each one is expressed here as an additive bias ``[..., T, T]``
(``-inf`` removes a key, a finite value shifts it). Rows left without any admissible key (causal
attention plus a masked diagonal leaves query 0 with none) are reported separately so the caller
can give them a defined, finite output instead of the NaN a softmax over ``-inf`` produces.
"""
from __future__ import annotations

import math

from typing import Optional, Tuple

import torch
from torch import Tensor

DIAG_MODES = ("none", "mask", "dropout", "penalty")


def check_diag_args(diag: str, diag_p: float, diag_penalty: float) -> None:
    """Validate the diagonal-regularizer arguments, raising ``ValueError`` with what to fix."""
    if diag not in DIAG_MODES:
        raise ValueError(f"Unknown diag mode {diag!r}; choose one of {DIAG_MODES}.")
    if not isinstance(diag_p, (int, float)) or not 0.0 <= float(diag_p) < 1.0:
        raise ValueError(f"diag_p must be a probability in [0, 1), got {diag_p!r}.")
    if diag == "dropout" and float(diag_p) == 0.0:
        raise ValueError("diag='dropout' needs diag_p > 0 (the probability of dropping a diagonal logit).")
    if not isinstance(diag_penalty, (int, float)) or not math.isfinite(diag_penalty):
        raise ValueError(f"diag_penalty must be a finite number, got {diag_penalty!r}.")


def diagonal_logit_bias(
    t: int,
    diag: str = "none",
    *,
    diag_p: float = 0.0,
    penalty: Optional[Tensor] = None,
    causal: bool = False,
    training: bool = False,
    device=None,
    dtype=torch.float32,
    generator: Optional[torch.Generator] = None,
) -> Tuple[Optional[Tensor], Optional[Tensor]]:
    """Build the additive logit bias of a diagonal regularizer (plus an optional causal mask).

    Args:
        t: sequence length T.
        diag: ``"none"``, ``"mask"`` (diagonal logits = -inf, train and eval), ``"dropout"``
            (each diagonal logit set to -inf with probability ``diag_p``, one Bernoulli draw of
            length T per call shared by batch, nodes and heads, training only, no rescaling) or
            ``"penalty"`` (``penalty`` added to each diagonal logit, train and eval).
        diag_p: drop probability for ``"dropout"``.
        penalty: scalar tensor, or ``[heads]`` for one learnable penalty per head.
        causal: also forbid keys after the query (logit (i, j) = -inf for j > i).
        training: whether the layer is in training mode (``"dropout"`` is a no-op otherwise).

    Returns:
        ``(bias, empty_rows)``. ``bias`` is ``None`` (nothing to add) or a tensor of shape
        ``[T, T]`` or ``[heads, T, T]``; ``empty_rows`` is ``None`` or a bool ``[T]`` marking query
        rows with no admissible key. In those rows the bias is reset to 0 (so a softmax stays
        finite) and the caller must zero the row's attention weights and output.
    """
    bias = None
    neg_inf = torch.tensor(float("-inf"), device=device, dtype=dtype)
    eye = torch.eye(t, dtype=torch.bool, device=device)
    removed = torch.zeros(t, t, dtype=torch.bool, device=device)
    if diag == "mask":
        removed |= eye
    elif diag == "dropout" and training and diag_p > 0:
        drop = torch.rand(t, device=device, generator=generator) < diag_p
        removed |= torch.diag(drop)
    if causal:
        removed |= torch.ones(t, t, dtype=torch.bool, device=device).triu(1)
    if diag == "penalty" and penalty is not None:
        # [T, T] or [heads, T, T]: the penalty sits on the diagonal only.
        bias = penalty.to(dtype).reshape(-1, 1, 1) * eye.to(dtype)
        if penalty.dim() == 0:
            bias = bias.squeeze(0)
    if not removed.any():
        return bias, None
    empty_rows = removed.all(dim=-1)
    removed = removed & ~empty_rows.unsqueeze(-1)
    mask_bias = torch.where(removed, neg_inf, torch.zeros((), device=device, dtype=dtype))
    bias = mask_bias if bias is None else bias + mask_bias
    return bias, (empty_rows if bool(empty_rows.any()) else None)
