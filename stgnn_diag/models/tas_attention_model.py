"""Time-and-Space (T&S): temporal attention and graph convolution alternate, block after block."""
from __future__ import annotations

from typing import Optional

from torch import Tensor, nn

from .base import STAttentionBase


class TASAttentionModel(STAttentionBase):
    r"""T&S model: ``n_layers`` blocks of [temporal attention sub-layer, graph sub-layer].

    Block ``l``: ``h = LN(TA_l(h) + c^T_l(u))``, then ``h = LN(h + Drop(act(GC_l(h))) + c^S_l(u))``,
    where ``c`` are per-sub-layer covariate maps in ``exog_mode="blocks"`` (absent otherwise).
    With ``n_layers = L`` the temporal and the spatial budgets are both ``L`` layers, interleaved.
    All other arguments: :class:`~stgnn_diag.models.base.STAttentionBase`.

    Shapes:
        x ``[batch, window, nodes, input_size]`` -> ``[batch, horizon, nodes, output_size]``.
    """

    def __init__(self, input_size: int, output_size: Optional[int] = None, horizon: int = 12,
                 n_nodes: Optional[int] = None, hidden_size: int = 64, exog_size: int = 0,
                 n_layers: int = 3, **kwargs):
        super().__init__(input_size, output_size, horizon, n_nodes, hidden_size, exog_size, **kwargs)
        if not isinstance(n_layers, int) or n_layers < 1:
            raise ValueError(f"n_layers must be a positive integer, got {n_layers!r}.")
        self.n_layers = n_layers
        self.temporal = nn.ModuleList([self.temporal_sublayer() for _ in range(n_layers)])
        self.spatial = nn.ModuleList([self.graph_sublayer() for _ in range(n_layers)])
        self.temporal_cond = nn.ModuleList([self.make_condition() or nn.Identity() for _ in range(n_layers)])
        self.spatial_cond = nn.ModuleList([self.make_condition() or nn.Identity() for _ in range(n_layers)])

    def process(self, h: Tensor, edge_index: Tensor, edge_weight: Optional[Tensor] = None,
                u: Optional[Tensor] = None) -> Tensor:
        """``[b, t, n, hidden]`` -> ``[b, t, n, hidden]`` through the interleaved blocks."""
        blocks = zip(self.temporal, self.spatial, self.temporal_cond, self.spatial_cond)
        for ta, gc, ct, cs in blocks:
            def block(h, ta=ta, gc=gc, ct=ct, cs=cs):
                h = ta(h, self.condition(ct, u))
                return gc(h, edge_index, edge_weight, self.condition(cs, u))

            h = self.run_block(block, h)
        return h
