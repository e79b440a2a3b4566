"""Time-then-Space (TTS): all temporal attention layers first, then all graph convolutions."""
from __future__ import annotations

from typing import Optional

from torch import Tensor, nn

from .base import STAttentionBase


class TTSAttentionModel(STAttentionBase):
    r"""TTS model: ``temporal_layers`` attention sub-layers, then ``spatial_layers`` graph sub-layers.

    This is the over-squashing paper's TTS template (L = 1): the sequence of each node is processed
    on its own first, and only then do nodes exchange information. With the defaults (3 + 3) it has
    the same temporal and spatial budgets as a 3-block T&S model.
    All other arguments: :class:`~stgnn_diag.models.base.STAttentionBase`.

    Shapes:
        x ``[batch, window, nodes, input_size]`` -> ``[batch, horizon, nodes, output_size]``.
    """

    def __init__(self, input_size: int, output_size: Optional[int] = None, horizon: int = 12,
                 n_nodes: Optional[int] = None, hidden_size: int = 64, exog_size: int = 0,
                 temporal_layers: int = 3, spatial_layers: int = 3, **kwargs):
        super().__init__(input_size, output_size, horizon, n_nodes, hidden_size, exog_size, **kwargs)
        for name, v in dict(temporal_layers=temporal_layers, spatial_layers=spatial_layers).items():
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}.")
        self.temporal = nn.ModuleList([self.temporal_sublayer() for _ in range(temporal_layers)])
        self.spatial = nn.ModuleList([self.graph_sublayer() for _ in range(spatial_layers)])
        self.temporal_cond = nn.ModuleList([self.make_condition() or nn.Identity() for _ in range(temporal_layers)])
        self.spatial_cond = nn.ModuleList([self.make_condition() or nn.Identity() for _ in range(spatial_layers)])

    def process(self, h: Tensor, edge_index: Tensor, edge_weight: Optional[Tensor] = None,
                u: Optional[Tensor] = None) -> Tensor:
        """``[b, t, n, hidden]`` -> ``[b, t, n, hidden]``: all temporal, then all spatial."""
        for ta, ct in zip(self.temporal, self.temporal_cond):
            h = self.run_block(lambda h, ta=ta, ct=ct: ta(h, self.condition(ct, u)), h)
        for gc, cs in zip(self.spatial, self.spatial_cond):
            h = self.run_block(lambda h, gc=gc, cs=cs: gc(h, edge_index, edge_weight, self.condition(cs, u)), h)
        return h
