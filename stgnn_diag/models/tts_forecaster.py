"""TTS forecaster: all temporal attention blocks first, then graph convolutions on each node's window."""
from __future__ import annotations

from typing import Optional

from torch import Tensor, nn

from .forecaster_base import STForecasterBase

SPATIAL_ON = ("summary", "steps")


class TTSForecaster(STForecasterBase):
    r"""TTS: ``temporal_layers`` temporal blocks, then ``spatial_layers`` graph sub-layers, then the head.

    Each node's sequence is processed on its own first; only then do nodes exchange information. With
    ``spatial_on="summary"`` (default) the graph layers act on each node's window summary
    ``[b, N, readout_size]`` (one message-passing step per window instead of one per step); with
    ``"steps"`` they act on every step ``[b, T, N, hidden]`` before the summary. All other arguments:
    :class:`~stgnn_diag.models.forecaster_base.STForecasterBase`.

    Stages: ``process`` runs the layers and the window summary -> ``[b, 1, N, readout_size]``;
    ``decode`` is the MLP head.

    Shapes:
        x ``[batch, window, nodes, input_size]`` -> ``[batch, horizon, nodes, output_size]``.
    """

    def __init__(self, *args, temporal_layers: int = 1, spatial_layers: int = 2, spatial_on: str = "summary",
                 **kwargs):
        super().__init__(*args, **kwargs)
        for name, v in dict(temporal_layers=temporal_layers, spatial_layers=spatial_layers).items():
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}.")
        if spatial_on not in SPATIAL_ON:
            raise ValueError(f"Unknown spatial_on {spatial_on!r}; choose one of {SPATIAL_ON}.")
        self.spatial_on = spatial_on
        width = self.summary.lin.out_features if spatial_on == "summary" else self.hidden_size
        self.temporal = nn.ModuleList([self.temporal_block() for _ in range(temporal_layers)])
        self.spatial = nn.ModuleList([self.graph_sublayer(width) for _ in range(spatial_layers)])

    def process(self, h: Tensor, edge_index: Tensor, edge_weight: Optional[Tensor] = None,
                u: Optional[Tensor] = None) -> Tensor:
        """``[b, T, N, hidden]`` -> temporal blocks, graph layers, window summary -> ``[b, 1, N, readout_size]``."""
        h0 = h
        for tb in self.temporal:
            h = tb(h)
        if self.spatial_on == "summary":
            h = self.summarize(h, h0, u)
        for gc in self.spatial:
            h = gc(h, edge_index, edge_weight)
        if self.spatial_on == "steps":
            h = self.summarize(h, h0, u)
        return h.unsqueeze(1)
