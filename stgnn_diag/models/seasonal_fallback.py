"""A seasonal forecast for nodes whose input window holds no observed reading.

A forecaster that sees none of a node's readings (every step of its window missing: a sensor down) has
nothing of the node to go on. :class:`SeasonalFallback` forecasts the node's historical median there
instead: the median reading of its weekday and slot of the day at each target step (the constant of least
absolute error), from a table ``[7, slots, N, C]`` in the model's input units fitted on training data
(``stgnn-diag train`` fits it on the training split: :func:`stgnn_diag.baselines.fit_historical_median`,
scaled like the inputs) and saved with the weights. The shipped tags leave it out of their weights file (it
is a function of the training data, 1.7 MB for METR-LA, larger than the model): the engine fits it when it
loads them, and ``stgnn_diag.training.fit_fallback_table(model)`` does it in a user's own pipeline.

It is an inference rule: it applies in evaluation mode only. In training mode the forecaster's output is
left as it is, so the learned weights do not depend on the option and the table can be set on any
trained model.
"""
from __future__ import annotations

from typing import List

import torch
from torch import Tensor, nn

from .embeddings import DOW_CHANNELS, TOD_CHANNEL


class SeasonalFallback(nn.Module):
    """Replace the forecast of unobserved nodes by ``table[weekday, slot, node]`` of each target step.

    Target step ``h`` (1-based) is ``h`` slots after the window's last step (one step is one slot of the
    table: fit it on data of the same sampling step), wrapping past midnight to the next weekday and past
    Sunday to Monday.

    Args:
        slots: slots of the day (288 for 5-minute data); the time of day in ``u[..., 0]`` is a fraction of it.
        n_nodes: nodes ``N``.
        channels: output channels ``C``.

    Shapes:
        - y ``[b, horizon, N, C]``: the forecast (model units)
        - observed ``[b, N, C]`` bool: whether the window holds an observed reading of the node
        - u_last ``[b, N, 8]``: covariates of the window's last step (time of day, one-hot weekday Monday first)
        - output ``[b, horizon, N, C]``
    """

    def __init__(self, slots: int, n_nodes: int, channels: int):
        super().__init__()
        self.register_buffer("table", torch.zeros(7, slots, n_nodes, channels))
        self.register_buffer("fitted", torch.tensor(False))

    def set_table(self, table) -> None:
        """Store ``table`` ``[7, slots, N]`` or ``[7, slots, N, C]`` (weekday Monday first, slot, node,
        channel) in the model's input units (scaled like ``x``)."""
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

    def lookup(self, u_last: Tensor, horizon: int) -> Tensor:
        """``table`` at target steps ``1..horizon`` after the window's last step: ``[b, horizon, N, C]``."""
        slots = self.table.size(1)
        slot = (u_last[..., TOD_CHANNEL].detach() * slots).round().long().clamp_(0, slots - 1)   # [b, N]
        dow = u_last[..., DOW_CHANNELS].detach().argmax(-1)                                     # [b, N]
        ahead = slot[:, None] + torch.arange(1, horizon + 1, device=slot.device)[None, :, None]  # [b, H, N]
        day = (dow[:, None] + ahead // slots) % 7
        node = torch.arange(self.table.size(2), device=slot.device)
        return self.table[day, ahead % slots, node]

    def forward(self, y: Tensor, observed: Tensor, u_last: Tensor) -> Tensor:
        if self.training:
            return y
        if not bool(self.fitted):
            raise ValueError("seasonal_fallback=True, but the model's seasonal table was never set (shipped "
                             "weights leave it out): call stgnn_diag.training.fit_fallback_table(model), which fits "
                             "it on the training split the weights were trained on, or model.fallback.set_table(table) "
                             "with the median reading per weekday, slot and node of the training data in the "
                             "model's input units.")
        prior = self.lookup(u_last, y.size(1)).to(y.dtype)
        return torch.where(observed[:, None], y, prior)


def table_keys(model: nn.Module) -> List[str]:
    """The ``state_dict`` keys of ``model``'s seasonal tables (``fallback.table``, ``fallback.fitted``): fitted
    from data, not learned, so a weights file may leave them out and have them fitted at load."""
    return [f"{name}.{key}" if name else key for name, m in model.named_modules() if isinstance(m, SeasonalFallback)
            for key in ("table", "fitted")]
