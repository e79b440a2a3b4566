r"""One temporal attention layer: its T x T Jacobian split into residual, value, key and query paths.

For the layer of :class:`~stgnn_diag.nn.TemporalAttention` on one node's sequence ``x [T, d]``,

.. math::
    y_i = [x_i] + W_O \,\mathrm{concat}_h \Big(\sum_j a^h_{ij} v^h_j\Big) + b_O, \quad
    q^h_i = W_Q^h x_i + b_Q^h,\ k^h_j = W_K^h x_j + b_K^h,\ v^h_j = W_V^h x_j + b_V^h,

with ``a^h = softmax_j(q_i . k_j / sqrt(d_k) + bias_ij)`` (``bias``: the diagonal regularizer), the
block ``dy_i / dx_k`` (``[d, d]``) is the sum of

* residual: ``I`` if ``k = i`` (and the layer has a residual);
* value: ``sum_h a^h_ik W_O^h W_V^h``;
* key: ``sum_h a^h_ik W_O^h (v^h_k - vbar^h_i) (q^h_i)^T W_K^h / sqrt(d_k)``;
* query, only for ``k = i``: ``sum_h W_O^h [sum_j a^h_ij (v^h_j - vbar^h_i)(k^h_j)^T] W_Q^h / sqrt(d_k)``,

where ``vbar^h_i = sum_j a^h_ij v^h_j`` and ``W_O^h`` are the columns of ``W_O`` of head ``h``. This is
PAPER.md's decomposition with the output projection multiplying every path; the value bias cancels
(``v_k - vbar_i = W_V (x_k - xbar_i)``), the query bias enters through ``q_i``, the key bias
through ``k_j`` in the query path (where it cancels as well). Queries left without keys (causal +
masked diagonal) have all-zero attention paths, as the layer returns only the residual there.

With near-uniform attention ``a ~ 1/T`` the value and key paths off the diagonal shrink as ``1/T``
(value path: exactly ``W_O W_V / T`` under uniform attention) while the query path and the residual
stay on the diagonal: the diagonal sink.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, Optional, Sequence

import torch
from torch import Tensor

from ..nn import TemporalAttention
from .norms import block_norm

PATHS = ("residual", "value", "key", "query")


@dataclass
class PathDecomposition:
    """Jacobian blocks ``[rows, T, d, d]`` of each path (block ``[r, k]`` = ``dy_{rows[r]} / dx_k``).

    Attributes:
        rows: the query steps the blocks are for.
        residual, value, key, query: the four paths.
        attention: ``[heads, T, T]`` attention weights at this input.
    """

    rows: Tensor
    residual: Tensor
    value: Tensor
    key: Tensor
    query: Tensor
    attention: Tensor

    @property
    def total(self) -> Tensor:
        """Sum of the four paths: the layer's Jacobian blocks."""
        return self.residual + self.value + self.key + self.query

    def norms(self, norm: str = "spectral") -> Dict[str, Tensor]:
        """``{path: [rows, T]}`` block norms, plus ``"total"``."""
        out = {p: block_norm(getattr(self, p), norm) for p in PATHS}
        out["total"] = block_norm(self.total, norm)
        return out


def _eval_heads(layer: TemporalAttention, x: Tensor):
    """:func:`_heads` with the layer in evaluation mode (its mode is restored)."""
    training = layer.training
    layer.eval()
    try:
        return _heads(layer, x)
    finally:
        layer.train(training)


def _heads(layer: TemporalAttention, x: Tensor):
    """Per-head q, k, v ``[H, T, dk]``, attention ``[H, T, T]`` and weights, at ``x [T, d]``."""
    t, d = x.shape
    h, dk = layer.heads, layer.head_dim
    q, k, v = (z[0, 0] for z in layer.project_qkv(x.view(1, t, 1, d)))  # [H, T, dk]
    a = layer.attention_weights(q, k, *layer.logit_bias(t, device=x.device, dtype=x.dtype))  # [H, T, T]
    w = layer.qkv.weight.view(3, h, dk, d)  # W_Q^h, W_K^h, W_V^h: [dk, d]
    w_o = layer.out.weight.view(d, h, dk).permute(1, 0, 2)  # W_O^h: [d, dk]
    return q, k, v, a, w[0], w[1], w[2], w_o


@torch.no_grad()
def attention_paths(layer: TemporalAttention, x: Tensor, rows: Optional[Sequence[int]] = None) -> PathDecomposition:
    """Closed-form path decomposition of ``layer``'s Jacobian at one sequence.

    The layer is evaluated as in eval mode (diagonal dropout off); use float64 to compare with
    autograd (:func:`verify_paths`).

    Args:
        layer: a :class:`TemporalAttention`.
        x: one node's sequence ``[T, d]``.
        rows: query steps to compute (default all; the blocks take ``rows * T * d * d`` numbers).

    Returns:
        :class:`PathDecomposition`.

    Shapes:
        x ``[T, d]`` -> blocks ``[len(rows), T, d, d]``.
    """
    if x.dim() != 2 or x.shape[1] != layer.dim:
        raise ValueError(f"x must be one sequence [T, {layer.dim}], got {tuple(x.shape)}.")
    q, k, v, a, w_q, w_k, w_v, w_o = _eval_heads(layer, x)
    t, d = x.shape
    r = torch.arange(t) if rows is None else torch.as_tensor(list(rows), dtype=torch.long)
    scale = layer.scale
    ar = a[:, r]                                               # [H, R, T]
    vbar = ar @ v                                              # [H, R, dk]
    dv = v.unsqueeze(1) - vbar.unsqueeze(2)                    # [H, R, T, dk]: v_k - vbar_i
    wov = torch.einsum("hac,hcb->hab", w_o, w_v)               # W_O^h W_V^h [H, d, d]
    value = torch.einsum("hik,hab->ikab", ar, wov)
    u = torch.einsum("hikc,hac->hika", dv, w_o)                # W_O^h (v_k - vbar_i)  [H, R, T, d]
    wq = torch.einsum("hic,hcb->hib", q[:, r], w_k)            # (q_i)^T W_K^h          [H, R, d]
    key = scale * torch.einsum("hik,hika,hib->ikab", ar, u, wq)
    inner = torch.einsum("hij,hijc,hje->hice", ar, dv, k)      # sum_j a_ij (v_j - vbar_i) k_j^T [H, R, dk, dk]
    qd = scale * torch.einsum("hac,hice,heb->iab", w_o, inner, w_q)  # [R, d, d]
    query = torch.zeros_like(value)
    idx = torch.arange(r.numel())
    query[idx, r] = qd
    residual = torch.zeros_like(value)
    if layer.residual:
        residual[idx, r] = torch.eye(d, dtype=x.dtype, device=x.device)
    return PathDecomposition(r, residual, value, key, query, a)


def autograd_blocks(layer: TemporalAttention, x: Tensor) -> Tensor:
    """The layer's Jacobian blocks by ``torch.autograd.functional.jacobian`` (eval mode).

    Shapes:
        x ``[T, d]`` -> ``[T, T, d, d]`` (block ``[i, k]`` = ``dy_i / dx_k``).
    """
    training = layer.training
    layer.eval()
    try:
        t, d = x.shape
        j = torch.autograd.functional.jacobian(lambda z: layer(z.view(1, t, 1, d)).view(t, d), x)
    finally:
        layer.train(training)
    return j.permute(0, 2, 1, 3)  # [T_out, d_out, T_in, d_in] -> [T, T, d, d]


def verify_paths(layer: TemporalAttention, x: Tensor) -> float:
    """Largest absolute difference between the summed paths and autograd's Jacobian."""
    return float((attention_paths(layer, x).total - autograd_blocks(layer, x)).abs().max())


@dataclass
class PathBounds:
    """Bounds on the path norms (spectral norms) computed from the weights (and the input range).

    Attributes:
        steps: T.
        value_offdiag_uniform: ``||W_O W_V|| / T``: the value-path block off the diagonal under
            uniform attention (PAPER.md's ``||W_V|| / T`` for a layer with an output projection).
        value_offdiag_bound: ``max_{i != k} sum_h a^h_ik ||W_O^h W_V^h||`` at this input (rigorous).
        key_offdiag_bound: ``max_{i != k} sum_h a^h_ik ||W_O^h (v_k - vbar_i)|| ||W_K^hT q_i|| / sqrt(d_k)``.
        query_constant: ``C_Q = sum_h ||W_O^h|| ||W_Q^h|| ||W_V^h|| max_ij ||x_j - xbar_i||
            (||W_K^h|| max_j ||x_j|| + ||b_K^h||)``: depends on the weights and the input range, not on T.
        query_bound: ``C_Q / sqrt(d_k)``, a bound on the query-path diagonal block.
    """

    steps: int
    value_offdiag_uniform: float
    value_offdiag_bound: float
    key_offdiag_bound: float
    query_constant: float
    query_bound: float


@torch.no_grad()
def path_bounds(layer: TemporalAttention, x: Tensor) -> PathBounds:
    """Bounds of :class:`PathBounds` for ``layer`` at one sequence.

    Shapes:
        x ``[T, d]`` -> scalars.
    """
    q, k, v, a, w_q, w_k, w_v, w_o = _eval_heads(layer, x)
    t, d = x.shape
    h, dk = layer.heads, layer.head_dim
    spec = lambda m: torch.linalg.matrix_norm(m, ord=2)  # noqa: E731
    wov = torch.einsum("hac,hcb->hab", w_o, w_v)
    full_ov = layer.out.weight @ layer.qkv.weight[2 * d:]
    off = ~torch.eye(t, dtype=torch.bool, device=x.device)
    value_b = (a * spec(wov).view(h, 1, 1)).sum(0)[off].max()
    vbar = a @ v
    u = torch.einsum("hikc,hac->hika", v.unsqueeze(1) - vbar.unsqueeze(2), w_o).norm(dim=-1)  # [H, T, T]
    wq = torch.einsum("hic,hcb->hib", q, w_k).norm(dim=-1)                                     # [H, T]
    key_b = (a * u * wq.unsqueeze(-1)).sum(0)[off].max() * layer.scale
    spread = (x.unsqueeze(0) - x.unsqueeze(1)).norm(dim=-1).max()  # max_ij ||x_j - x_i|| >= ||x_j - xbar_i||
    b_k = layer.qkv.bias.view(3, h, dk)[1].norm(dim=-1) if layer.qkv.bias is not None else torch.zeros(h)
    xmax = x.norm(dim=-1).max()
    c_q = (spec(w_o) * spec(w_q) * spec(w_v) * spread * (spec(w_k) * xmax + b_k)).sum()
    return PathBounds(t, float(spec(full_ov) / t), float(value_b), float(key_b), float(c_q),
                      float(c_q) * layer.scale)


def path_norm_summary(layer: TemporalAttention, x: Tensor, *, norm: str = "spectral",
                      rows: Optional[Sequence[int]] = None, row_chunk: int = 8) -> Dict[str, float]:
    """Mean diagonal / off-diagonal block norms of each path (and the total), row chunk by row chunk.

    Returns keys ``offdiag_<path>`` (mean over ``i != k``), ``diag_<path>`` (mean over ``i``) for
    ``path`` in residual, value, key, query, total; ``offdiag_total_max``; ``attn_diag`` /
    ``attn_offdiag`` (mean attention weights).
    """
    t = x.shape[0]
    r_all = list(range(t)) if rows is None else list(rows)
    sums: Dict[str, float] = {}
    n_diag = n_off = 0
    off_max = 0.0
    attn = None
    for s in range(0, len(r_all), row_chunk):
        r = r_all[s:s + row_chunk]
        dec = attention_paths(layer, x, rows=r)
        attn = dec.attention
        nrm = dec.norms(norm)
        ri = torch.as_tensor(r)
        diag = torch.zeros(len(r), t, dtype=torch.bool)
        diag[torch.arange(len(r)), ri] = True
        for p, m in nrm.items():
            sums["diag_" + p] = sums.get("diag_" + p, 0.0) + float(m[diag].sum())
            sums["offdiag_" + p] = sums.get("offdiag_" + p, 0.0) + float(m[~diag].sum())
        off_max = max(off_max, float(nrm["total"][~diag].max()) if t > 1 else 0.0)
        n_diag += len(r)
        n_off += len(r) * (t - 1)
    out = {k: v / (n_diag if k.startswith("diag_") else max(n_off, 1)) for k, v in sums.items()}
    out["offdiag_total_max"] = off_max
    eye = torch.eye(t, dtype=torch.bool)
    out["attn_diag"] = float(attn[:, eye].mean())
    out["attn_offdiag"] = float(attn[:, ~eye].mean()) if t > 1 else math.nan
    return out
