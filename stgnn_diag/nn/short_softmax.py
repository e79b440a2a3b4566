"""A softmax for many short rows (attention over ~12 time steps) on CPU.

Why our own: torch's CPU softmax kernel vectorises along the reduced dimension, so for rows of
length ~12 it is several times slower than an ``amax / exp / sum`` pass over the whole tensor
(``benchmarks/bench_temporal_attention.py`` compares the two). The backward saves only the output,
``dL/dl = a * (g - sum(g * a))``, like torch's own.
"""
from __future__ import annotations

import torch
from torch import Tensor


class _ShortSoftmax(torch.autograd.Function):
    # setup_context + generate_vmap_rule + jvp: usable under torch.func (vmap, jacrev, jacfwd)
    generate_vmap_rule = True

    @staticmethod
    def forward(logits: Tensor) -> Tensor:
        e = (logits - logits.amax(-1, keepdim=True)).exp_()
        return e.div_(e.sum(-1, keepdim=True))

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def backward(ctx, grad: Tensor) -> Tensor:
        (a,) = ctx.saved_tensors
        ga = grad * a
        return ga - a * ga.sum(-1, keepdim=True)

    @staticmethod
    def jvp(ctx, tangent: Tensor) -> Tensor:
        (a,) = ctx.saved_tensors
        return a * (tangent - (a * tangent).sum(-1, keepdim=True))


def short_softmax(logits: Tensor) -> Tensor:
    """Softmax over the last dimension; rows must hold at least one finite logit.

    Shapes:
        ``[..., T]`` -> ``[..., T]``.
    """
    if torch.compiler.is_compiling():  # the compiler's own softmax (no custom Function in a graph)
        return torch.softmax(logits, dim=-1)
    return _ShortSoftmax.apply(logits)
