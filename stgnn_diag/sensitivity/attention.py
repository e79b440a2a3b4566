"""Attention diagnostics for every :class:`~stgnn_diag.nn.TemporalAttention` in a model."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import torch
from torch import Tensor, nn

from ..nn import TemporalAttention
from .jacobian import window_mask
from .model_state import evaluation_mode


class NoAttentionError(ValueError):
    """The model holds no :class:`~stgnn_diag.nn.TemporalAttention` layer."""


@dataclass
class AttentionStats:
    """Attention of one layer, averaged over windows, nodes and query steps.

    Attributes:
        layer: module name inside the model.
        diag: the layer's diagonal mode; residual / causal: its flags.
        steps: sequence length T; heads: number of heads.
        diag_mass: ``[heads]`` mean diagonal weight ``a_ii`` (uniform attention: ``1 / T``).
        offdiag_mean: ``[heads]`` mean off-diagonal weight ``a_ij``, ``i != j``, over queries that
            have keys (uniform attention: ``1 / T``; ``1 / (T - 1)`` with a masked diagonal).
        entropy: ``[heads]`` mean row entropy in nats.
        max_entropy: mean of ``log(#admissible keys)`` over the rows (uniform attention).
        map: ``[T, T]`` attention averaged over windows, nodes and heads (rows = queries).
        head_maps: ``[heads, T, T]``.
    """

    layer: str
    diag: str
    residual: bool
    causal: bool
    steps: int
    heads: int
    diag_mass: Tensor
    offdiag_mean: Tensor
    entropy: Tensor
    max_entropy: float
    map: Tensor = field(repr=False)
    head_maps: Tensor = field(repr=False)

    @property
    def uniform(self) -> float:
        """``1 / T``, the weight of uniform attention."""
        return 1.0 / self.steps

    @property
    def diag_ratio(self) -> float:
        """Mean diagonal weight in units of ``1 / T`` (1: no preference for the own step)."""
        return float(self.diag_mass.mean()) * self.steps

    def to_dict(self) -> Dict[str, object]:
        return dict(layer=self.layer, diag=self.diag, residual=self.residual, causal=self.causal, steps=self.steps,
                    heads=self.heads, diag_mass=self.diag_mass.tolist(), offdiag_mean=self.offdiag_mean.tolist(),
                    entropy=self.entropy.tolist(), max_entropy=self.max_entropy, uniform=self.uniform,
                    diag_ratio=self.diag_ratio, map=self.map.tolist())


def attention_layers(model: nn.Module) -> Dict[str, TemporalAttention]:
    """``{name: layer}`` for every :class:`TemporalAttention` in ``model`` (in module order)."""
    return {name: m for name, m in model.named_modules() if isinstance(m, TemporalAttention)}


def _stats(name: str, layer: TemporalAttention, attn: Tensor) -> AttentionStats:
    # attn [b, n, heads, T, T]
    t = attn.shape[-1]
    bias, empty = layer.logit_bias(t, device=attn.device, dtype=attn.dtype)
    allowed = torch.ones(t, t, dtype=torch.bool, device=attn.device)
    if bias is not None:
        allowed = torch.isfinite(bias).reshape(-1, t, t).all(0)
    has_keys = allowed.any(-1) if empty is None else ~empty
    a = attn.double()
    eye = torch.eye(t, dtype=torch.bool, device=attn.device)
    off = ~eye & has_keys.unsqueeze(-1)
    diag_mass = a.diagonal(dim1=-2, dim2=-1).mean((0, 1, 3))
    offdiag = (a * off).sum((-2, -1)) / off.sum()
    ent = -(a * a.clamp_min(1e-300).log()).sum(-1)  # [b, n, h, T]
    rows = has_keys.to(a.dtype)
    entropy = (ent * rows).sum(-1).mean((0, 1)) / rows.sum()
    n_keys = allowed.sum(-1).clamp(min=1)
    max_ent = float((n_keys.double().log() * rows).sum() / rows.sum())
    head_maps = a.mean((0, 1))
    return AttentionStats(name, layer.diag, layer.residual, layer.causal, t, layer.heads, diag_mass.float(),
                          offdiag.mean((0, 1)).float(), entropy.float(), max_ent, head_maps.mean(0).float(),
                          head_maps.float())


@torch.no_grad()
def attention_diagnostics(model: nn.Module, x: Tensor, edge_index, edge_weight: Optional[Tensor] = None,
                          u: Optional[Tensor] = None, x_mask: Optional[Tensor] = None) -> List[AttentionStats]:
    """Run the model on ``x`` and summarise the attention of every temporal attention layer.

    The model runs in eval mode (switched and restored, with a warning, if it was training). Each
    :class:`TemporalAttention` is re-evaluated on its own input with ``return_attention=True``.

    Args:
        model: any model containing :class:`TemporalAttention` layers, called as
            ``model(x, edge_index, edge_weight, u)``.
        x: windows ``[batch, T, N, F]`` (or one window ``[T, N, F]``); more windows, better averages.
        edge_index, edge_weight, u: as for the model (``u`` with the same batch as ``x``).
        x_mask: observed readings like ``x`` (bool), for a model built with ``input_mask=True``
            (default: all observed).

    Returns:
        One :class:`AttentionStats` per layer, in module order.

    Raises:
        NoAttentionError: the model has no :class:`TemporalAttention` (a ``ValueError``).

    Shapes:
        x ``[B, T, N, F]`` -> per layer ``map [T, T]``, ``diag_mass [heads]``, ``head_maps [heads, T, T]``.
    """
    layers = attention_layers(model)
    if not layers:
        raise NoAttentionError(f"{type(model).__name__} has no stgnn_diag.nn.TemporalAttention layer; attention "
                               f"diagnostics need one (the Jacobian tools work on any model).")
    if x.dim() == 3:
        x = x.unsqueeze(0)
        if u is not None and u.dim() in (2, 3) and u.shape[0] == x.shape[1]:
            u = u.unsqueeze(0)
    x_mask = window_mask(model, x, x_mask)
    maps: Dict[str, List[Tensor]] = {name: [] for name in layers}
    busy = set()

    def make_hook(name: str):
        def hook(mod, args, kwargs, out):
            if name in busy:  # our own re-evaluation below
                return None
            busy.add(name)
            try:
                inp = args[0] if args else kwargs["x"]
                _, attn = mod(inp, return_attention=True)
                maps[name].append(attn)
            finally:
                busy.discard(name)
            return None
        return hook

    handles = [m.register_forward_hook(make_hook(n), with_kwargs=True) for n, m in layers.items()]
    try:
        with evaluation_mode(model, "the attention diagnostics"):
            kw = {}
            if edge_weight is not None:
                kw["edge_weight"] = edge_weight
            if u is not None:
                kw["u"] = u
            if x_mask is not None:
                kw["x_mask"] = x_mask
            model(x, edge_index, **kw)
    finally:
        for h in handles:
            h.remove()
    out = []
    for name, layer in layers.items():
        if not maps[name]:
            continue  # layer not used in forward
        out.append(_stats(name, layer, torch.cat(maps[name], 0)))
    return out


__all__ = ["AttentionStats", "NoAttentionError", "attention_diagnostics", "attention_layers"]
