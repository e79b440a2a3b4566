"""Tangent propagation through a :class:`~stgnn_diag.models.sublayers.GraphSublayer`: the affine convolution as
block-sparse products, activation, residual and LayerNorm (:class:`GraphStep`), traced from one forward pass."""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import List, Tuple

import torch
from torch import Tensor
from torch.func import jvp

from ...models.sublayers import GraphSublayer
from .graph_conv import _csc, conv_terms
from .layer_norm import NormLin
from .support import ELEMENTWISE, UnsupportedModel, _close


@dataclass
class GraphStep:
    """Linearisation data of one :class:`GraphSublayer` at the traced point (per time step)."""

    weights: List[Tensor]  # W_k [d_out, d_in], one per term
    act_grad: Tensor     # [N, T, d_out]
    norm: NormLin
    reach: Tensor        # [N, N] bool, reach[v, n]: node n's tangent can reach node v
    csc: List[Tuple[Tensor, Tensor, Tensor]]  # per term M_k by columns: (col_ptr [N+1], row [nnz], val [nnz])
    kind: str = "graph"

    def jvp(self, rows_g: Tensor, rows_n: Tensor, dx: Tensor, out_g: Tensor, out_n: Tensor,
            lookup: Tensor, apply_norm: bool = True, kmajor: bool = False) -> Tensor:
        """Tangent rows ``(rows_g, rows_n)`` -> rows ``(out_g, out_n)``; ``lookup[g, n]`` = output row.

        Takes ``dx [P_in, K, T, d]`` (or ``[K, P_in, T, d]`` with ``kmajor``) and returns
        ``[K, P_out, T, d]``: column by column the sparse products stay in cache.
        """
        if not kmajor:
            dx = dx.transpose(0, 1).contiguous()
        kk, p_in, t, d = dx.shape
        p_out, dev = out_n.numel(), dx.device
        flat = dx.view(-1, d)
        mats = []
        src_all = torch.arange(p_in, device=dev)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support is in beta.*")
            for ptr, row, val in self.csc:
                cnt = ptr[rows_n + 1] - ptr[rows_n]
                src = torch.repeat_interleave(src_all, cnt)
                pos = torch.arange(src.numel(), device=dev) + torch.repeat_interleave(
                    ptr[rows_n] - (torch.cumsum(cnt, 0) - cnt), cnt)
                dst = lookup[rows_g[src], row[pos]]
                order = torch.argsort(dst * p_in + src)
                crow = torch.zeros(p_out + 1, dtype=torch.long, device=dev)
                crow[1:] = torch.cumsum(torch.bincount(dst, minlength=p_out), 0)
                mats.append(torch.sparse_csr_tensor(crow, src[order], val[pos][order], (p_out, p_in),
                                                    check_invariants=False))
            dz = torch.empty(kk, p_out, t * d, dtype=dx.dtype, device=dev)
            for i, (w, b) in enumerate(zip(self.weights, mats)):
                z = (flat @ w.T).view(kk, p_in, t * d)
                for k in range(kk):
                    dz[k].addmm_(b, z[k], beta=0.0 if i == 0 else 1.0)  # beta=0: the empty buffer is not read
        dz = dz.view(kk, p_out, t, d)
        dz.mul_(self.act_grad[out_n].unsqueeze(0))
        dz.index_add_(1, lookup[rows_g, rows_n], dx)  # the sub-layer's residual
        return self.norm.apply_(dz, out_n, kmajor=True) if apply_norm else dz



def _graph_step(mod: GraphSublayer, args, kwargs, out: Tensor) -> GraphStep:
    x = args[0][0]  # [T, N, d]
    ei = args[1] if len(args) > 1 else kwargs["edge_index"]
    ew = args[2] if len(args) > 2 else kwargs.get("edge_weight")
    cond = args[3] if len(args) > 3 else kwargs.get("cond")
    if not isinstance(mod.act, ELEMENTWISE):
        raise UnsupportedModel(f"activation {type(mod.act).__name__} is not known to be element-wise")
    t, n, d = x.shape
    terms, bias = conv_terms(mod.conv, ei, ew, n, x.dtype)
    c = 0
    for m, w in terms:
        c = c + (x if m is None else m @ x) @ w.T
    if bias is not None:
        c = c + bias
    if not _close(c, mod.conv(x.unsqueeze(0), ei, ew)[0]):
        raise UnsupportedModel(f"{type(mod.conv).__name__}'s output differs from its affine decomposition")
    if any(w.shape != (d, d) for _, w in terms):
        raise UnsupportedModel("GraphSublayer changes the width")
    act_grad = jvp(mod.act, (c,), (torch.ones_like(c),))[1]
    z = x + mod.act(c)
    if cond is not None:
        z = z + cond[0]
    lin, res = NormLin.at(z.transpose(0, 1), mod.norm)
    if not _close(res, out[0].transpose(0, 1)):
        raise UnsupportedModel("a GraphSublayer's output differs from the structured engine's formula")
    reach = torch.eye(n, dtype=torch.bool, device=x.device)
    for m, _ in terms:
        if m is not None:
            reach |= m != 0
    return GraphStep([w.contiguous() for _, w in terms], act_grad.transpose(0, 1).contiguous(), lin, reach,
                     [_csc(m, n, x.device, x.dtype) for m, _ in terms])
