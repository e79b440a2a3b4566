"""Sparse forward-mode Jacobian of the zoo's models, exploiting where information can travel.

For an input node ``u`` the tangent of every hidden representation is zero outside the nodes
``u`` can reach so far: temporal attention keeps it on the same node, each graph convolution
widens it by its reach. This engine carries, for a chunk of input nodes at once, only those
(input node, node) rows, packed into one tensor, and applies each sub-layer's *linearisation* to
them with batched matrix products:

* encoder: ``torch.func.jvp`` of ``model.encode`` (acts on each node separately);
* :class:`~stgnn_diag.models.sublayers.TemporalSublayer`: the JVP of multi-head attention +
  residual + LayerNorm written out (per-node primal quantities computed once, gathered per row);
* :class:`~stgnn_diag.models.sublayers.GraphSublayer`: the convolution is affine,
  ``conv(x) = sum_k M_k x W_k^T + b`` (``M_k`` = identity / diffusion powers / normalised
  adjacency / adaptive adjacency powers), so its JVP is one dense matmul with the stacked ``W_k``
  and one block-sparse matmul with the ``M_k``; then the activation's derivative, the residual and
  the LayerNorm JVP;
* read-out: ``torch.func.jvp`` of ``model.decode`` (acts on each node separately).

Which models: :class:`~stgnn_diag.models.STAttentionBase` subclasses that keep its ``encode`` and
``decode`` and whose ``process`` is a plain chain of those two sub-layer types (checked by tracing
one forward pass with hooks); convolutions :class:`~stgnn_diag.nn.DiffusionConv` and PyG's
``GCNConv``. Every sub-layer's primal output is recomputed from the formulas used here and
compared with the real module's output before anything is differentiated, so a mismatch (a
changed layer, an unsupported option) raises :class:`UnsupportedModel` instead of a wrong
Jacobian; :func:`~stgnn_diag.sensitivity.spatiotemporal_jacobian` then falls back to the dense
``torch.func`` engine.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

import torch
from torch import Tensor, nn
from torch.func import jvp
from tqdm.auto import tqdm

from ..models import STAttentionBase
from ..models.sublayers import GraphSublayer, TemporalSublayer
from ..nn import DiffusionConv, TemporalAttention, as_edge_index, random_walk_weights

#: Activations known to act element-wise (their derivative is taken entry by entry).
ELEMENTWISE = (nn.Identity, nn.ReLU, nn.GELU, nn.ELU, nn.LeakyReLU, nn.Tanh, nn.Sigmoid, nn.SiLU, nn.Softplus)


class UnsupportedModel(Exception):
    """The structured engine cannot handle this model; the message says why."""


# ----------------------------------------------------------------------------------- helpers
def _close(a: Tensor, b: Tensor) -> bool:
    tol = 1e-4 if a.dtype in (torch.float32, torch.float16, torch.bfloat16) else 1e-9
    scale = float(b.abs().max()) + 1.0
    return a.shape == b.shape and float((a - b).abs().max()) <= tol * scale


def _layer_norm_stats(z: Tensor, norm: nn.LayerNorm) -> Tuple[Tensor, Tensor]:
    if not isinstance(norm, nn.LayerNorm) or tuple(norm.normalized_shape) != (z.shape[-1],):
        raise UnsupportedModel(f"expected a LayerNorm over the last dimension, got {norm!r}")
    mu = z.mean(-1, keepdim=True)
    var = (z - mu).pow(2).mean(-1, keepdim=True)
    inv = torch.rsqrt(var + norm.eps)
    return (z - mu) * inv, inv


def _layer_norm_out(zhat: Tensor, norm: nn.LayerNorm) -> Tensor:
    out = zhat
    if norm.weight is not None:
        out = out * norm.weight
    if norm.bias is not None:
        out = out + norm.bias
    return out


def _layer_norm_scales(zhat: Tensor, inv: Tensor, weight: Optional[Tensor]) -> Tuple[Tensor, Tensor]:
    """``s = gamma / sigma`` and ``zs = zhat * s`` (the LayerNorm JVP is ``s (dz - m1) - m2 zs``)."""
    sc = inv.expand_as(zhat) if weight is None else inv * weight
    return sc.contiguous(), (zhat * sc).contiguous()


def _layer_norm_jvp_(dz: Tensor, zhat: Tensor, sc: Tensor, zs: Tensor) -> Tensor:
    """In place: JVP of LayerNorm, ``dz -> s (dz - mean(dz)) - mean(zhat dz) zs`` over the last dim."""
    m2 = (dz * zhat).mean(-1, keepdim=True)
    m1 = dz.mean(-1, keepdim=True)
    return dz.sub_(m1).mul_(sc).addcmul_(m2, zs, value=-1.0)


def _dense_from_edges(index: Tensor, weight: Tensor, n: int, dtype) -> Tensor:
    """``M [n, n]`` with ``M[target, source] += weight`` (one message-passing hop as a matrix)."""
    m = torch.zeros(n, n, dtype=torch.float64, device=index.device)
    m.index_put_((index[1], index[0]), weight.to(torch.float64), accumulate=True)
    return m.to(dtype)


def conv_terms(conv: nn.Module, edge_index, edge_weight: Optional[Tensor], n: int, dtype
               ) -> Tuple[List[Tuple[Optional[Tensor], Tensor]], Optional[Tensor]]:
    """Write a graph convolution as ``sum_k M_k x W_k^T + b``.

    Returns:
        ``([(M_k [n, n] or None for the identity, W_k [out, in]), ...], b [out] or None)``.
    """
    ei, ew = as_edge_index(edge_index, edge_weight)
    if isinstance(conv, DiffusionConv):
        w = conv.lin.weight
        d_in = conv.in_channels
        mats: List[Optional[Tensor]] = [None] if conv.root_weight else []

        def powers(p: Tensor) -> List[Tensor]:
            out, h = [], p
            for _ in range(conv.k):
                out.append(h)
                h = p @ h
            return out

        mats += powers(_dense_from_edges(ei, random_walk_weights(ei, ew, n), n, torch.float64))
        if conv.bidirectional:
            rev = ei.flip(0)
            mats += powers(_dense_from_edges(rev, random_walk_weights(rev, ew, n), n, torch.float64))
        if conv.adaptive is not None:
            mats += powers(conv.adaptive(n).detach().to(torch.float64).T)
        if w.shape[1] != d_in * len(mats):
            raise UnsupportedModel("DiffusionConv weight does not match its supports")
        terms = [(None if m is None else m.to(dtype), w[:, i * d_in:(i + 1) * d_in])
                 for i, m in enumerate(mats)]
        return terms, conv.lin.bias
    try:
        from torch_geometric.nn import GCNConv
        from torch_geometric.nn.conv.gcn_conv import gcn_norm
    except ImportError:  # pragma: no cover
        GCNConv = None
    if GCNConv is not None and isinstance(conv, GCNConv):
        if conv.normalize:
            ei2, w2 = gcn_norm(ei, ew, n, conv.improved, conv.add_self_loops, conv.flow, dtype=torch.float64)
        else:
            ei2 = ei
            w2 = ew if ew is not None else torch.ones(ei.size(1), dtype=torch.float64)
        if conv.flow != "source_to_target":
            ei2 = ei2.flip(0)
        return [(_dense_from_edges(ei2, w2, n, dtype), conv.lin.weight)], conv.bias
    raise UnsupportedModel(f"graph convolution {type(conv).__name__} is not supported by the structured engine")


# ----------------------------------------------------------------------------------- steps
@dataclass
class NormLin:
    """A LayerNorm linearised per node: ``zhat``, ``sc = gamma / sigma``, ``zs = zhat * sc``, ``[N, T, d]``."""

    zhat: Tensor
    sc: Tensor
    zs: Tensor

    @classmethod
    def at(cls, z: Tensor, norm: nn.LayerNorm) -> Tuple["NormLin", Tensor]:
        """Linearise ``norm`` at ``z [N, T, d]``; also returns ``norm(z)`` recomputed."""
        zhat, inv = _layer_norm_stats(z, norm)
        sc, zs = _layer_norm_scales(zhat, inv, norm.weight)
        return cls(zhat, sc, zs), _layer_norm_out(zhat, norm)

    def apply_(self, dz: Tensor, rows_n: Tensor, kmajor: bool = False) -> Tensor:
        """In place on ``dz [P, K, T, d]`` (or ``[K, P, T, d]`` with ``kmajor``) at nodes ``rows_n``."""
        ax = 0 if kmajor else 1
        return _layer_norm_jvp_(dz, self.zhat[rows_n].unsqueeze(ax), self.sc[rows_n].unsqueeze(ax),
                                self.zs[rows_n].unsqueeze(ax))


@dataclass
class TemporalStep:
    """Linearisation data of one :class:`TemporalSublayer` at the traced point (per node)."""

    q: Tensor            # [N, H, T, dk]
    k: Tensor
    v: Tensor
    a: Tensor            # [N, H, T, T]
    empty: Optional[Tensor]  # [T] bool
    norm: NormLin
    w_qkv: Tensor        # [3d, d]
    w_out: Tensor        # [d, d]
    residual: bool
    heads: int
    scale: float
    kind: str = "temporal"

    def jvp(self, rows_n: Tensor, dx: Tensor, apply_norm: bool = True) -> Tensor:
        """``dx [P, K, T, d]`` at nodes ``rows_n [P]`` -> output tangent ``[P, K, T, d]``."""
        p, kk, t, d = dx.shape
        h, dk = self.heads, d // self.heads
        q, k, v, a = self.q[rows_n], self.k[rows_n], self.v[rows_n], self.a[rows_n]
        dqkv = (dx.reshape(-1, d) @ self.w_qkv.T).view(p, kk * t, 3 * d)
        d_o = torch.empty(p, kk * t, d, dtype=dx.dtype, device=dx.device)
        for i in range(h):  # per head: strided views of dqkv, no copies of the big tensors
            sl = slice(i * dk, (i + 1) * dk)
            dq, dkey, dv = (dqkv[:, :, j * d + i * dk:j * d + (i + 1) * dk] for j in range(3))
            qi, ki, vi, ai = q[:, i], k[:, i], v[:, i], a[:, i]  # [P, T, dk], [P, T, T]
            ds = torch.bmm(dq, ki.transpose(1, 2)).view(p, kk, t, t)          # dq_i . k_j
            ds.add_(torch.bmm(dkey, qi.transpose(1, 2)).view(p, kk, t, t).transpose(-1, -2))  # q_i . dk_j
            aa = ai.unsqueeze(1)
            ds.mul_(self.scale)
            ds.sub_((aa * ds).sum(-1, keepdim=True)).mul_(aa)              # softmax JVP
            o = torch.bmm(ds.view(p, kk * t, t), vi)                         # da @ v
            o.view(p, kk, t, dk).add_(torch.bmm(aa.expand(p, kk, t, t).reshape(p * kk, t, t),
                                                dv.reshape(p * kk, t, dk)).view(p, kk, t, dk))  # a @ dv
            d_o[:, :, sl] = o
        dy = (d_o.view(-1, d) @ self.w_out.T).view(p, kk, t, d)
        if self.empty is not None:
            dy.masked_fill_(self.empty.view(1, 1, t, 1), 0.0)
        if self.residual:
            dy.add_(dx)
        return self.norm.apply_(dy, rows_n) if apply_norm else dy


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


@dataclass
class ReadoutStep:
    """``model.decode`` (time map, element-wise activation, linear map), optionally with the last
    sub-layer's LayerNorm folded in, as one linear functional per node: ``E [N, H * F, T * d]``."""

    e: Tensor
    horizon: int

    def apply(self, rows_n: Tensor, dz: Tensor) -> Tensor:
        """``dz [P, K, T, d]`` -> ``[H, P, K, F]``."""
        p, kk = dz.shape[:2]
        y = torch.bmm(dz.reshape(p, kk, -1), self.e[rows_n].transpose(1, 2))
        return y.view(p, kk, self.horizon, -1).permute(2, 0, 1, 3)


def _readout_step(model: STAttentionBase, h: Tensor, norm: Optional[NormLin]) -> ReadoutStep:
    """Linearise ``model.decode`` at ``h [N, T, d]`` (``norm``: the LayerNorm that produced ``h``)."""
    tr, ro = getattr(model, "time_readout", None), getattr(model, "readout", None)
    if not (isinstance(tr, nn.Linear) and isinstance(ro, nn.Sequential) and len(ro) == 2
            and isinstance(ro[0], ELEMENTWISE) and isinstance(ro[1], nn.Linear)):
        raise UnsupportedModel("the read-out is not Linear(time) -> activation -> Linear")
    n, t, d = h.shape
    p = torch.einsum("ht,ntj->nhj", tr.weight, h)
    if tr.bias is not None:
        p = p + tr.bias.view(1, -1, 1)
    y = ro[1](ro[0](p))  # [N, H, F]
    if not _close(y.transpose(0, 1), model.decode(h.transpose(0, 1).unsqueeze(0))[0]):
        raise UnsupportedModel("model.decode differs from the structured engine's formula")
    act_grad = jvp(ro[0], (p,), (torch.ones_like(p),))[1]  # [N, H, d]
    hh = p.shape[1]
    # C[n, h, f, t, j] = R[h, t] W_r[f, j] act'(p[n, h, j])
    c = tr.weight.view(1, hh, 1, t, 1) * (ro[1].weight.view(1, 1, -1, 1, d) * act_grad.view(n, hh, 1, 1, d))
    if norm is not None:
        cs = c * norm.sc.view(n, 1, 1, t, d)
        a = cs.sum(-1, keepdim=True)
        b = (c * norm.zs.view(n, 1, 1, t, d)).sum(-1, keepdim=True)
        c = cs - (a + norm.zhat.view(n, 1, 1, t, d) * b) / d
    return ReadoutStep(c.reshape(n, -1, t * d).contiguous(), hh)


def _csc(m: Optional[Tensor], n: int, device, dtype) -> Tuple[Tensor, Tensor, Tensor]:
    if m is None:
        m = torch.eye(n, device=device, dtype=dtype)
    mt = m.T.contiguous()  # rows of mt = columns of m
    col, row = mt.nonzero(as_tuple=True)
    ptr = torch.zeros(n + 1, dtype=torch.long, device=device)
    ptr[1:] = torch.cumsum(torch.bincount(col, minlength=n), 0)
    return ptr, row, mt[col, row]


def _temporal_step(mod: TemporalSublayer, args, kwargs, out: Tensor) -> TemporalStep:
    att = getattr(mod, "attention", None)
    if not isinstance(att, TemporalAttention):
        raise UnsupportedModel("TemporalSublayer without a TemporalAttention")
    x = args[0][0]  # [T, N, d]
    cond = args[1] if len(args) > 1 else kwargs.get("cond")
    t, n, d = x.shape
    q, k, v = (z[0] for z in att.project_qkv(x.unsqueeze(0)))  # [N, H, T, dk]
    bias, empty = att.logit_bias(t, device=x.device, dtype=x.dtype)
    a = att.attention_weights(q, k, bias, empty)  # [N, H, T, T]
    xn = x.transpose(0, 1)
    y = att.out((a @ v).permute(0, 2, 1, 3).reshape(n, t, d))
    if empty is not None:
        y = y.masked_fill(empty.view(1, t, 1), 0.0)
    if att.residual:
        y = y + xn
    if cond is not None:
        y = y + cond[0].transpose(0, 1)
    lin, res = NormLin.at(y, mod.norm)
    if not _close(res, out[0].transpose(0, 1)):
        raise UnsupportedModel("a TemporalSublayer's output differs from the structured engine's formula")
    return TemporalStep(q.contiguous(), k.contiguous(), v.contiguous(), a.contiguous(), empty, lin,
                        att.qkv.weight, att.out.weight, att.residual, att.heads, att.scale)


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


# ----------------------------------------------------------------------------------- engine
class StructuredJacobian:
    """Trace a model at one window and compute its Jacobian with the sparse forward-mode engine.

    Args:
        model: an :class:`~stgnn_diag.models.STAttentionBase` in eval mode.
        x: ``[1, T, N, F]`` window.
        edge_index, edge_weight, u: as for ``model(...)``.
        wrt: ``"input"`` (columns = ``x`` entries) or ``"encoded"`` (columns = entries of
            ``model.encode(x, u)``).
        output: ``"prediction"`` (``model(...)``) or ``"hidden"`` (``model.process(...)``).

    Raises:
        UnsupportedModel: the model does not have the structure this engine relies on.

    Shapes:
        x ``[1, T, N, F]``; :meth:`run` hands out ``Y [t_out, P, K, f_out]`` per chunk (``K`` =
        :attr:`columns_per_node`).
    """

    def __init__(self, model: nn.Module, x: Tensor, edge_index, edge_weight=None, u=None, *,
                 wrt: str = "input", output: str = "prediction"):
        if not isinstance(model, STAttentionBase):
            raise UnsupportedModel(f"{type(model).__name__} is not an STAttentionBase model")
        if type(model).encode is not STAttentionBase.encode or type(model).decode is not STAttentionBase.decode:
            raise UnsupportedModel("the model overrides encode / decode")
        if x.dim() != 4 or x.shape[0] != 1:
            raise UnsupportedModel("one window [1, T, N, F] is needed")
        self.model, self.wrt, self.output = model, wrt, output
        with torch.no_grad():
            ei, ew, u4 = model.check_inputs(x, edge_index, edge_weight, u)
            self.x, self.u4 = x, u4
            self.h0 = model.encode(x, u4)
            records = []
            hook = lambda mod, args, kwargs, out: records.append((mod, args, kwargs, out))  # noqa: E731
            handles = [m.register_forward_hook(hook, with_kwargs=True) for m in model.modules()
                       if isinstance(m, (TemporalSublayer, GraphSublayer))]
            try:
                self.h_final = model.process(self.h0, ei, ew, u4)
            finally:
                for hd in handles:
                    hd.remove()
            prev = self.h0
            for mod, args, kwargs, out in records:
                if (args[0] if args else kwargs.get("x")) is not prev:
                    raise UnsupportedModel("process() is not a plain chain of TemporalSublayer / GraphSublayer")
                prev = out
            if not records or self.h_final is not prev:
                raise UnsupportedModel("process() is not a plain chain of TemporalSublayer / GraphSublayer")
            self.steps = [(_temporal_step if isinstance(mod, TemporalSublayer) else _graph_step)(mod, a, kw, o)
                          for mod, a, kw, o in records]
            # the last sub-layer's LayerNorm is folded into the read-out functional
            self.readout = (_readout_step(model, self.h_final[0].transpose(0, 1), self.steps[-1].norm)
                            if output == "prediction" else None)
        _, self.t, self.n, self.f_in = x.shape
        self.d = self.h0.shape[-1]

    # -- sizes ---------------------------------------------------------------------------------
    @property
    def columns_per_node(self) -> int:
        """Jacobian columns per input node: ``T * F`` (input) or ``T * d`` (encoded)."""
        return self.t * (self.f_in if self.wrt == "input" else self.d)

    def supports(self) -> Tensor:
        """``[n_graph_steps + 1, N, N]`` bool: after each graph step, which nodes each input node reaches."""
        s = torch.eye(self.n, dtype=torch.bool, device=self.x.device)
        out = [s]
        for st in self.steps:
            if st.kind == "graph":
                s = (s.to(torch.float32) @ st.reach.T.to(torch.float32)) > 0
                out.append(s)
        return torch.stack(out)

    def _initial_tangents(self) -> Tensor:
        """``[N, K, T, d]``: tangent of the first hidden representation at each input node."""
        t, n, d, kk = self.t, self.n, self.d, self.columns_per_node
        dtype, dev = self.h0.dtype, self.h0.device
        if self.wrt == "encoded":
            return torch.eye(kk, dtype=dtype, device=dev).view(1, kk, t, d).expand(n, kk, t, d)
        f = self.f_in
        e = torch.zeros(kk, t, n, f, dtype=self.x.dtype, device=dev)
        idx = torch.arange(kk, device=dev)
        e[idx, idx // f, :, idx % f] = 1.0
        xr = self.x.expand(kk, t, n, f).contiguous()
        ur = None if self.u4 is None else self.u4.expand(kk, *self.u4.shape[1:])
        _, dh = jvp(lambda z: self.model.encode(z, ur), (xr,), (e,))
        return dh.permute(2, 0, 1, 3)  # [N, K, T, d]

    def _chunks(self, groups: Tensor, bytes_per_row: float, budget_mb: float) -> List[Tensor]:
        final = self.supports()[-1][groups].sum(1)  # rows per group at the widest point
        chunks, cur, used = [], [], 0.0
        cap = budget_mb * 2**20
        for g, r in zip(groups.tolist(), final.tolist()):
            need = r * bytes_per_row
            if cur and used + need > cap:
                chunks.append(torch.tensor(cur))
                cur, used = [], 0.0
            cur.append(g)
            used += need
        if cur:
            chunks.append(torch.tensor(cur))
        return chunks

    def run(self, reduce: Callable[[Tensor, Tensor, Tensor], None], *, out_nodes: Optional[Sequence[int]] = None,
            budget_mb: float = 256.0, progress: bool = False) -> None:
        """Propagate all columns and hand each chunk's results to ``reduce``.

        Args:
            reduce: called as ``reduce(out_rows_n [P], in_nodes [P], Y [t_out, P, K, f_out])``:
                ``Y[:, p, k, :]`` is the Jacobian of the outputs at node ``out_rows_n[p]`` w.r.t.
                column ``k`` of input node ``in_nodes[p]``; pairs not listed are exactly zero.
            out_nodes: only these output nodes are decoded (default: all).
            budget_mb: memory budget of one chunk's tangents (chunks of input nodes are sized
                to it).
            progress: tqdm bar over the chunks.
        """
        dev = self.x.device
        kk, t, d = self.columns_per_node, self.t, self.d
        esize = self.h0.element_size()
        n_terms = max([len(s.weights) for s in self.steps if s.kind == "graph"] + [1])
        heads = max([s.heads for s in self.steps if s.kind == "temporal"] + [1])
        bytes_per_row = kk * t * esize * (n_terms * d + 6 * d + 2 * heads * t)
        keep = torch.ones(self.n, dtype=torch.bool, device=dev)
        if out_nodes is not None:
            keep = torch.zeros(self.n, dtype=torch.bool, device=dev)
            keep[torch.as_tensor(list(out_nodes), dtype=torch.long, device=dev)] = True
        d0 = self._initial_tangents()
        groups = torch.arange(self.n, device=dev)
        last = len(self.steps) - 1
        for chunk in tqdm(self._chunks(groups, bytes_per_row, budget_mb), disable=not progress,
                          desc="Jacobian chunks", leave=False):
            g = chunk.numel()
            rows_g = torch.arange(g, device=dev)
            rows_n = chunk.to(dev)
            sup = torch.zeros(g, self.n, dtype=torch.bool, device=dev)
            sup[rows_g, rows_n] = True
            dx, kmajor = d0[rows_n], False  # [P, K, T, d]; graph steps return [K, P, T, d]
            for i, st in enumerate(self.steps):
                fold = i == last and self.readout is not None  # LayerNorm folded into the read-out
                if st.kind == "temporal":
                    if kmajor:
                        dx, kmajor = dx.transpose(0, 1).contiguous(), False
                    dx = st.jvp(rows_n, dx, apply_norm=not fold)
                    continue
                sup = (sup.to(torch.float32) @ st.reach.T.to(torch.float32)) > 0
                out_g, out_n = sup.nonzero(as_tuple=True)
                lookup = torch.full((g, self.n), -1, dtype=torch.long, device=dev)
                lookup[out_g, out_n] = torch.arange(out_g.numel(), device=dev)
                dx = st.jvp(rows_g, rows_n, dx, out_g, out_n, lookup, apply_norm=not fold, kmajor=kmajor)
                kmajor = True
                rows_g, rows_n = out_g, out_n
            if kmajor:
                dx = dx.transpose(0, 1).contiguous()
            sel = keep[rows_n]
            if not bool(sel.all()):
                rows_g, rows_n, dx = rows_g[sel], rows_n[sel], dx[sel]
            if rows_n.numel() == 0:
                continue
            y = dx.permute(2, 0, 1, 3) if self.readout is None else self.readout.apply(rows_n, dx)
            reduce(rows_n, chunk.to(dev)[rows_g], y)
