"""A seasonal level for nodes whose input window holds no observed reading.

With ``level_skip`` a forecaster adds each node's last observed input reading to its forecast. A node whose
whole window is missing has none (:func:`~stgnn_diag.models.embeddings.fill_missing` gives 0, the scaler's
mean). :class:`SeasonalLevel` gives it the mean reading of its weekday and slot of the day at the window's
last step instead: a table ``[7, slots, N, C]`` in the model's input units, fitted from training data
(``stgnn-diag train`` fits it from the training split: :func:`stgnn_diag.baselines.fit_historical_average`,
scaled like the inputs) and saved with the weights.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from .embeddings import DOW_CHANNELS, TOD_CHANNEL


class SeasonalLevel(nn.Module):
    """Table lookup ``level[dow(u), slot(u), node]`` of the window's last step, used where nothing was observed.

    Args:
        slots: slots of the day (288 for 5-minute data); the time of day in ``u[..., 0]`` is a fraction of it.
        n_nodes: nodes ``N``.
        channels: output channels ``C``.

    Shapes:
        - level ``[b, N, C]``: the last observed reading of each node (0 where there is none)
        - observed ``[b, N, C]``: whether the window holds an observed reading of the node
        - u_last ``[b, N, 8]``: the covariates of the window's last step (time of day, one-hot weekday)
        - output ``[b, N, C]``
    """

    def __init__(self, slots: int, n_nodes: int, channels: int):
        super().__init__()
        self.register_buffer("table", torch.zeros(7, slots, n_nodes, channels))
        self.register_buffer("fitted", torch.tensor(False))

    def set_table(self, table) -> None:
        """Store ``table`` ``[7, slots, N]`` or ``[7, slots, N, C]`` (weekday Monday first, slot, node, channel),
        in the model's input units (scaled like ``x``)."""
        t = torch.as_tensor(table, dtype=self.table.dtype)
        if t.dim() == 3:
            t = t.unsqueeze(-1).expand(*t.shape, self.table.size(-1))
        if t.shape != self.table.shape:
            raise ValueError(f"The seasonal table must be [7, slots, nodes, channels] = {tuple(self.table.shape)} "
                             f"(or without the channel axis), got {tuple(torch.as_tensor(table).shape)}.")
        if not bool(torch.isfinite(t).all()):
            raise ValueError("The seasonal table holds NaN or Inf.")
        self.table.copy_(t)
        self.fitted.fill_(True)

    def forward(self, level: Tensor, observed: Tensor, u_last: Tensor) -> Tensor:
        if not bool(self.fitted):
            raise ValueError("seasonal_level=True, but the model's seasonal table was never set: call "
                             "model.set_seasonal_level(table) with the mean reading per weekday, slot and node of the "
                             "training data in the model's input units (stgnn-diag train does it from the training split).")
        slots = self.table.size(1)
        slot = (u_last[..., TOD_CHANNEL].detach() * slots).round().long().clamp_(0, slots - 1)   # [b, N]
        dow = u_last[..., DOW_CHANNELS].detach().argmax(-1)                                     # [b, N]
        prior = self.table[dow, slot, torch.arange(self.table.size(2), device=level.device)]     # [b, N, C]
        return torch.where(observed, level, prior.to(level.dtype))
