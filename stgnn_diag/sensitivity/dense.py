"""Dense Jacobians of any function by batched VJPs / JVPs (``torch.func``), chunked.

These engines know nothing about the model: they work for any tsl-style model (and for
``wrt="encoded"``). :mod:`stgnn_diag.sensitivity.structured` is much faster for the zoo's models.
"""
from __future__ import annotations

from typing import Callable, Iterator, Optional, Tuple

import torch
from torch import Tensor
from torch.func import jvp, vjp, vmap
from tqdm.auto import tqdm

#: ``"reverse"``: one VJP per output entry (vmap over one-hot cotangents); ``"forward"``: one JVP
#: per input entry; ``"autograd"``: reverse mode through plain autograd on a batch of copies of the
#: window (for models ``torch.func`` cannot trace, e.g. with custom autograd Functions).
DENSE_MODES = ("reverse", "forward", "autograd")


def _one_hot(start: int, stop: int, n: int, shape, like: Tensor) -> Tensor:
    e = torch.zeros(stop - start, n, dtype=like.dtype, device=like.device)
    e[torch.arange(stop - start), torch.arange(start, stop)] = 1.0
    return e.view(stop - start, *shape)


def iter_jacobian_chunks(fn: Callable[[Tensor], Tensor], primal: Tensor, *, mode: str = "reverse",
                         chunk_size: int = 32, batched_fn: Optional[Callable[[Tensor], Tensor]] = None,
                         progress: bool = False) -> Iterator[Tuple[int, int, Tensor]]:
    """Yield the Jacobian of ``fn`` at ``primal`` chunk by chunk.

    Args:
        fn: a function of one tensor.
        primal: the point; for ``mode="autograd"`` its first dimension must be a batch of size 1.
        mode: one of :data:`DENSE_MODES`.
        chunk_size: VJPs / JVPs per batch.
        batched_fn: for ``"autograd"``: ``fn`` applied to ``[c, ...]`` copies at once (each batch
            item independent of the others, as a model in eval mode).
        progress: tqdm bar over the chunks.

    Yields:
        ``(start, stop, block)``: for ``"reverse"`` / ``"autograd"`` the rows ``start:stop`` of the
        flattened Jacobian, ``block [stop - start, primal.numel()]``; for ``"forward"`` its columns,
        ``block [stop - start, fn(primal).numel()]`` (one column per row of ``block``).
    """
    if mode not in DENSE_MODES:
        raise ValueError(f"Unknown mode {mode!r}; choose one of {DENSE_MODES}.")
    chunk = max(1, int(chunk_size))
    n_in = primal.numel()
    if mode == "forward":
        n_out = fn(primal).numel()
        push = vmap(lambda t: jvp(fn, (primal,), (t,))[1])
        for s in tqdm(range(0, n_in, chunk), disable=not progress, desc="JVP chunks", leave=False):
            e = min(s + chunk, n_in)
            yield s, e, push(_one_hot(s, e, n_in, primal.shape, primal)).reshape(e - s, n_out)
        return
    if mode == "reverse":
        out, pull = vjp(fn, primal)
        n_out = out.numel()
        pull_many = vmap(lambda c: pull(c)[0])
        for s in tqdm(range(0, n_out, chunk), disable=not progress, desc="VJP chunks", leave=False):
            e = min(s + chunk, n_out)
            yield s, e, pull_many(_one_hot(s, e, n_out, out.shape, out)).reshape(e - s, n_in)
        return
    if batched_fn is None or primal.shape[0] != 1:
        raise ValueError("mode='autograd' needs batched_fn and a primal with a leading batch dimension of 1.")
    with torch.no_grad():
        out = batched_fn(primal)
    n_out = out.numel()
    for s in tqdm(range(0, n_out, chunk), disable=not progress, desc="VJP chunks", leave=False):
        e = min(s + chunk, n_out)
        xs = primal.detach().expand(e - s, *primal.shape[1:]).clone().requires_grad_(True)
        with torch.enable_grad():
            ys = batched_fn(xs)
            (g,) = torch.autograd.grad(ys, xs, _one_hot(s, e, n_out, out.shape[1:], out))
        yield s, e, g.reshape(e - s, n_in)


def dense_jacobian(fn: Callable[[Tensor], Tensor], primal: Tensor, *, mode: str = "reverse",
                   chunk_size: int = 32, batched_fn: Optional[Callable[[Tensor], Tensor]] = None,
                   progress: bool = False) -> Tensor:
    """The whole flattened Jacobian ``[fn(primal).numel(), primal.numel()]`` (see :func:`iter_jacobian_chunks`)."""
    parts = [b for _, _, b in iter_jacobian_chunks(fn, primal, mode=mode, chunk_size=chunk_size,
                                                    batched_fn=batched_fn, progress=progress)]
    j = torch.cat(parts)
    return j.T.contiguous() if mode == "forward" else j
