"""The read-out ``model.decode`` (with the last LayerNorm folded in) as one linear functional per node."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch
from torch import Tensor, nn
from torch.func import jvp

from ...models import STAttentionBase
from .layer_norm import NormLin
from .support import ELEMENTWISE, UnsupportedModel, _close


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
