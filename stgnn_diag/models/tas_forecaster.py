"""T&S forecaster: temporal attention blocks and graph convolutions alternate on every token (step or patch)."""
from __future__ import annotations

from typing import Optional

from torch import Tensor, nn

from .forecaster_base import STForecasterBase


class TASForecaster(STForecasterBase):
    r"""T&S: ``n_layers`` blocks of [temporal block, graph sub-layer] on ``[b, T', N, hidden]``, then the
    window read-out (``T' = window / patch_size`` tokens per node: the steps, or patches of steps).

    Block ``l``: ``h = TB_l(h)`` (diagonal-regularized attention + feed-forward, each post-LN), then
    ``h = LN(h + act(GC_l(h)))`` at every token. All other arguments:
    :class:`~stgnn_diag.models.forecaster_base.STForecasterBase`.

    Stages: ``process`` runs the blocks and the window summary -> ``[b, 1, N, readout_size]``;
    ``decode`` is the MLP head.

    Shapes:
        x ``[batch, window, nodes, input_size]`` -> ``[batch, horizon, nodes, output_size]``.
    """

    def __init__(self, *args, n_layers: int = 2, **kwargs):
        super().__init__(*args, **kwargs)
        if not isinstance(n_layers, int) or n_layers < 1:
            raise ValueError(f"n_layers must be a positive integer, got {n_layers!r}.")
        self.n_layers = n_layers
        self.temporal = nn.ModuleList([self.temporal_block() for _ in range(n_layers)])
        self.spatial = nn.ModuleList([self.graph_sublayer(self.hidden_size) for _ in range(n_layers)])

    def process(self, h: Tensor, edge_index: Tensor, edge_weight: Optional[Tensor] = None,
                u: Optional[Tensor] = None) -> Tensor:
        """``[b, T', N, hidden]`` -> interleaved blocks -> window summary ``[b, 1, N, readout_size]``."""
        h0 = h
        for tb, gc in zip(self.temporal, self.spatial):
            h = gc(tb(h), edge_index, edge_weight)
        return self.summarize(h, h0, u).unsqueeze(1)
