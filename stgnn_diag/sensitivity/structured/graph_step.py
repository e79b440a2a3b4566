"""Tangent propagation through a :class:`~stgnn_diag.models.sublayers.GraphSublayer`: the affine convolution as
block-sparse products, activation, residual and LayerNorm (:class:`GraphStep`), traced from one forward pass."""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch
from torch import Tensor
from torch.func import jvp

from ...models.sublayers import GraphSublayer
from .graph_conv import _csc, conv_terms
from .layer_norm import NormLin
from .support import ELEMENTWISE, UnsupportedModel, _close


MAX_PADDING = 2.0  # contract() only when its padded layout has at most this many times the output rows


@dataclass
class GraphStep:
    """Linearisation data of one :class:`GraphSublayer` at the traced point (per time step)."""

    weights: List[Tensor]  # W_k [d_out, d_in], one per term
    act_grad: Tensor     # [N, T, d_out]
    norm: NormLin
    reach: Tensor        # [N, N] bool, reach[v, n]: node n's tangent can reach node v
    csc: List[Tuple[Tensor, Tensor, Tensor]]  # per term M_k by columns: (col_ptr [N+1], row [nnz], val [nnz])
    identity: Optional[int] = None  # the term whose M_k is the identity (a root weight), if any
    kind: str = "graph"

    def _block_csr(self, rows_g: Tensor, rows_n: Tensor, p_out: int, lookup: Tensor,
                   csc=None) -> List[Tensor]:
        """Each term ``M_k`` (or the given ``csc`` list) restricted to the chunk: sparse CSR ``[p_out, P_in]`` from
        input rows to output rows (``lookup[g, n]`` = output row)."""
        p_in, dev = rows_n.numel(), rows_n.device
        mats = []
        src_all = torch.arange(p_in, device=dev)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support is in beta.*")
            for ptr, row, val in (self.csc if csc is None else csc):
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
        return mats

    def jvp(self, rows_g: Tensor, rows_n: Tensor, dx: Tensor, out_g: Tensor, out_n: Tensor,
            lookup: Tensor, apply_norm: bool = True, kmajor: bool = False) -> Tensor:
        """Tangent rows ``(rows_g, rows_n)`` -> rows ``(out_g, out_n)``; ``lookup[g, n]`` = output row.

        Takes ``dx [P_in, K, T, d]`` (or ``[K, P_in, T, d]`` with ``kmajor``) and returns
        ``[K, P_out, T, d]``: column by column the sparse products stay in cache.
        """
        if not kmajor:
            dx = dx.transpose(0, 1).contiguous()
        kk, p_in, t, d = dx.shape
        p_out = out_n.numel()
        flat = dx.view(-1, d)
        dz = torch.empty(kk, p_out, t * d, dtype=dx.dtype, device=dx.device)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support is in beta.*")
            for i, (w, b) in enumerate(zip(self.weights, self._block_csr(rows_g, rows_n, p_out, lookup))):
                z = (flat @ w.T).view(kk, p_in, t * d)
                for k in range(kk):
                    dz[k].addmm_(b, z[k], beta=0.0 if i == 0 else 1.0)  # beta=0: the empty buffer is not read
        dz = dz.view(kk, p_out, t, d)
        dz.mul_(self.act_grad[out_n].unsqueeze(0))
        dz.index_add_(1, lookup[rows_g, rows_n], dx)  # the sub-layer's residual
        return self.norm.apply_(dz, out_n, kmajor=True) if apply_norm else dz

    def pull_back(self, e: Tensor) -> "PulledBack":
        """Pull per-node linear functionals of this step's output back through its convolution weights.

        ``e [N, R, T * d]`` (e.g. the read-out with this step's LayerNorm folded in) acts on the output
        tangent ``dz = dx + act' * sum_k M_k dx W_k^T``. With ``G_k[v] = (e[v] * act'[v]) W_k``,
        ``e[v] . dz[v] = sum_k G_k[v] . (M_k dx)[v] + e[v] . dx[v]``: the returned terms are the ``(M_k, G_k)``
        pairs of the non-identity ``M_k``, and ``G_self = e + G_k`` of the identity term (the residual and a
        root weight), which needs no sparse product.
        """
        n, r = e.shape[:2]
        t, d = self.act_grad.shape[1:]
        ea = e.view(n, r, t, d) * self.act_grad.unsqueeze(1)
        gs = [(ea @ w).view(n, r, t * d) for w in self.weights]
        g_self = e if self.identity is None else e + gs[self.identity]
        keep = [i for i in range(len(gs)) if i != self.identity]
        g = torch.stack([gs[i] for i in keep]) if keep else e.new_zeros(0, *e.shape)
        return PulledBack([self.csc[i] for i in keep], g, g_self, r)

    @staticmethod
    def padded_rows(out_n: Tensor, n: int) -> int:
        """Rows of :meth:`contract`'s node-by-node layout for output rows at nodes ``out_n [P_out]``."""
        return n * int(torch.bincount(out_n, minlength=n).max())

    def contract(self, rows_g: Tensor, rows_n: Tensor, dx: Tensor, out_g: Tensor, out_n: Tensor,
                 pulled: "PulledBack", kmajor: bool = False) -> Tensor:
        """Functionals of this step's output applied to its output tangent, without forming that tangent.

        Used for the last step before the read-out: instead of multiplying every input tangent row by the
        ``d x d`` weights and then by the read-out, the weight-free sparse products ``M_k dx`` meet the
        pulled-back functionals ``G_k`` (:meth:`pull_back`) at the output rows. ``R`` (``H * F`` for the
        read-out) is much smaller than ``d``, so the step's weight products shrink ``d / R`` times.

        The output rows are laid out node by node, padded to the most rows any node has in the chunk, so that
        each node's ``G_k[v]`` multiplies all its rows in one batched product (no gathered copy of ``G``); the
        engine uses :meth:`jvp` instead where that padding would cost more than :data:`MAX_PADDING` times the
        rows (a hub reached from every input node of the chunk while most nodes are reached from few).

        Args:
            dx: ``[P_in, K, T, d]`` (or ``[K, P_in, T, d]`` with ``kmajor``) at rows ``(rows_g, rows_n)``.
            out_g, out_n: ``[P_out]`` output rows (chunk group, node).
            pulled: ``pull_back(e)``.

        Returns:
            ``[P_out, K, R]``: ``e[out_n[p]] . dz[p, k]``.
        """
        dxk = (dx if kmajor else dx.transpose(0, 1)).contiguous()  # [K, P_in, T, d]
        kk, p_in, t, d = dxk.shape
        n, r, dev = pulled.g_self.shape[0], pulled.rows, dxk.device
        counts = torch.bincount(out_n, minlength=n)
        width = int(counts.max())
        order = torch.argsort(out_n, stable=True)
        slot = torch.empty_like(out_n)
        slot[order] = torch.arange(out_n.numel(), device=dev) - (torch.cumsum(counts, 0) - counts)[out_n[order]]
        padded = out_n * width + slot  # output row -> node-major padded row
        lookup = torch.full((int(out_g.max()) + 1, n), -1, dtype=torch.long, device=dev)
        lookup[out_g, out_n] = padded
        s = torch.empty(n * width, kk, t * d, dtype=dxk.dtype, device=dev)
        y = torch.zeros(n, width * kk, r, dtype=dxk.dtype, device=dev)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support is in beta.*")
            for gk, b in zip(pulled.g, self._block_csr(rows_g, rows_n, n * width, lookup, pulled.csc)):
                for k in range(kk):  # column by column the sparse product stays in cache
                    s[:, k].addmm_(b, dxk[k].view(p_in, t * d), beta=0.0)  # beta=0 also zeroes empty rows
                y.baddbmm_(s.view(n, width * kk, t * d), gk.transpose(1, 2))
        y = y.view(n * width, kk, r)
        # the identity term acts on the input rows themselves
        own = torch.bmm(dxk.transpose(0, 1).reshape(p_in, kk, t * d), pulled.g_self[rows_n].transpose(1, 2))
        y.index_add_(0, lookup[rows_g, rows_n], own)
        return y[padded]


@dataclass
class PulledBack:
    """Per-node functionals pulled back through a :class:`GraphStep` (:meth:`GraphStep.pull_back`)."""

    csc: List[Tuple[Tensor, Tensor, Tensor]]  # per non-identity term: M_k by columns
    g: Tensor       # [n_terms, N, R, T * d]: G_k of those terms
    g_self: Tensor  # [N, R, T * d]: the identity term's G (residual, root weight)
    rows: int       # R


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
    identity = next((i for i, (m, _) in enumerate(terms) if m is None), None)
    return GraphStep([w.contiguous() for _, w in terms], act_grad.transpose(0, 1).contiguous(), lin, reach,
                     [_csc(m, n, x.device, x.dtype) for m, _ in terms], identity)
