"""The logit bias of a diagonal regularizer (plus an optional causal mask), with the rows it empties.

Every regularizer of the paper (Hankemeier & Schilling, ESANN 2026) acts on the attention logits before
the softmax, so each one is expressed as an additive bias ``[..., T, T]`` (``-inf`` removes a key, a finite
value shifts it); the regularizers themselves are modules (:mod:`stgnn_diag.nn.regularizers`). Rows left
without any admissible key (causal attention plus a masked diagonal leaves query 0 with none) are reported
separately so the caller can give them a defined, finite output instead of the NaN a softmax over ``-inf``
produces.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

import torch
from torch import Tensor

from .regularizers import DiagonalRegularizer, make_regularizer, regularizer_names

#: The registered ``diag=`` names (``"none"``, ``"mask"``, ``"dropout"``, ``"penalty"``, ...).
DIAG_MODES = regularizer_names()

_CAUSAL: Dict[tuple, Tensor] = {}  # static: one strict upper triangle per (T, device)


def causal_mask(t: int, device=None) -> Tensor:
    """Bool ``[T, T]``: True where key j > query i (cached per T and device)."""
    key = (t, str(device))
    if key not in _CAUSAL:
        _CAUSAL[key] = torch.ones(t, t, dtype=torch.bool, device=device).triu(1)
    return _CAUSAL[key]


def regularizer_logit_bias(reg: DiagonalRegularizer, t: int, *, causal: bool = False, device=None,
                           dtype=torch.float32) -> Tuple[Optional[Tensor], Optional[Tensor]]:
    """The additive logit bias of ``reg`` (in its current train / eval mode) and the rows it leaves empty.

    Returns:
        ``(bias, empty_rows)``. ``bias`` is ``None`` (nothing to add) or a tensor of shape ``[T, T]`` or
        ``[heads, T, T]``; ``empty_rows`` is ``None`` or a bool ``[T]`` marking query rows with no admissible
        key. In those rows the bias is reset to 0 (so a softmax stays finite) and the caller must zero the
        row's attention weights and output.
    """
    removed = reg.removed(t, device)
    if causal:
        removed = causal_mask(t, device) if removed is None else removed | causal_mask(t, device)
    bias = reg.additive(t, device, dtype)
    # inside torch.compile: branch-free (no data-dependent check in a graph); an all-False ``empty_rows``
    # then costs the caller one no-op masked_fill
    compiling = torch.compiler.is_compiling()
    if removed is None or (not compiling and not removed.any()):
        return bias, None
    empty_rows = removed.all(dim=-1)
    mask_bias = torch.zeros(t, t, device=device, dtype=dtype).masked_fill(
        removed & ~empty_rows.unsqueeze(-1), float("-inf"))
    bias = mask_bias if bias is None else bias + mask_bias
    return bias, (empty_rows if compiling or bool(empty_rows.any()) else None)


def diagonal_logit_bias(t: int, diag: str = "none", *, diag_p: float = 0.0, diag_penalty: float = 0.0,
                        causal: bool = False, training: bool = False, device=None, dtype=torch.float32
                        ) -> Tuple[Optional[Tensor], Optional[Tensor]]:
    """The logit bias of regularizer ``diag`` built from plain values (for layers outside this package, e.g.
    an ``nn.MultiheadAttention`` mask); see :func:`regularizer_logit_bias` for what is returned."""
    reg = make_regularizer(diag, diag_p=diag_p, diag_penalty=diag_penalty).train(training)
    return regularizer_logit_bias(reg, t, causal=causal, device=device, dtype=dtype)
