"""Split a fused ``qkv`` projection into per-head queries, keys and values, with a lean backward.

Why our own: the plain ``permute(...).unbind(0)`` + ``reshape`` has autograd build the gradient of
``qkv`` in two passes over fresh 30 MB buffers at the METR-LA shape (a ``cat``/stack of ``dq, dk, dv``,
then a strided copy back into the projection's layout). This backward allocates the gradient once,
in the projection's layout, and copies each of ``dq, dk, dv`` straight into its slot: about 7 % off
a TemporalAttention forward+backward on CPU (benchmarks/bench_temporal_attention.py).
"""
from __future__ import annotations

from typing import Tuple

import torch
from torch import Tensor

# qkv [b, t, n, 3, heads, dk] -> [3, b, n, heads, t, dk]
_ORDER = (3, 0, 2, 4, 1, 5)


class _SplitHeads(torch.autograd.Function):
    # setup_context + generate_vmap_rule + jvp: usable under torch.func (vmap, jacrev, jacfwd)
    generate_vmap_rule = True

    @staticmethod
    def forward(qkv: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
        p = qkv.permute(*_ORDER)
        return p[0].contiguous(), p[1].contiguous(), p[2].contiguous()

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        ctx.shape = inputs[0].shape

    @staticmethod
    def backward(ctx, dq: Tensor, dk: Tensor, dv: Tensor) -> Tensor:
        ref = next(d for d in (dq, dk, dv) if d is not None)
        grad = ref.new_empty(ctx.shape)
        slots = grad.permute(*_ORDER)
        for j, d in enumerate((dq, dk, dv)):
            if d is None:
                slots[j].zero_()
            else:
                slots[j].copy_(d)
        return grad

    @staticmethod
    def jvp(ctx, tangent: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
        return _SplitHeads.forward(tangent)  # the split is linear: the tangent splits the same way


def split_heads(qkv: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """Queries, keys and values, each contiguous ``[b, n, heads, t, dk]``, from ``qkv [b, t, n, 3, heads, dk]``.

    Equal to ``qkv.permute(3, 0, 2, 4, 1, 5).unbind(0)`` (values and gradients), with one
    gradient buffer instead of two.
    """
    if qkv.dim() != 6 or qkv.size(3) != 3:
        raise ValueError(f"qkv must have shape [b, t, n, 3, heads, dk], got {tuple(qkv.shape)}.")
    if torch.compiler.is_compiling():  # the compiler fuses the plain split itself (no custom Function in a graph)
        return tuple(s.contiguous() for s in qkv.permute(*_ORDER).unbind(0))
    return _SplitHeads.apply(qkv)
