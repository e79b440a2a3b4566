"""LayerNorm over the last dimension, linearised: statistics, output and the in-place JVP (:class:`NormLin`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import torch
from torch import Tensor, nn

from .support import UnsupportedModel


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
