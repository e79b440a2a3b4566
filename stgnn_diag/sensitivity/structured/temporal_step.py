"""Tangent propagation through a :class:`~stgnn_diag.models.sublayers.TemporalSublayer`: multi-head attention +
residual + LayerNorm, linearised per node (:class:`TemporalStep`) and traced from one forward pass."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch
from torch import Tensor

from ...models.sublayers import TemporalSublayer
from ...nn import TemporalAttention
from .layer_norm import NormLin
from .support import UnsupportedModel, _close


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
