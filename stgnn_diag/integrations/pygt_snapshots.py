"""Our models in a PyG Temporal-style training loop over snapshots.

PyG Temporal's examples loop over the ``Data`` snapshots of a ``StaticGraphTemporalSignal``::

    for snapshot in signal:
        y_hat = model(snapshot.x, snapshot.edge_index, snapshot.edge_attr)   # x [N, F, T]
        loss = loss + ((y_hat - snapshot.y) ** 2).mean()                     # y [N, H]

:class:`SnapshotModel` gives any model of our contract that call signature. The snapshot's
feature channels are split into the model's input (the first ``input_size``) and its covariates
(the rest, passed as a per-node ``u``), e.g. METR-LA's ``(speed, time of day)`` for a model built
with ``input_size=1, exog_size=1``. A PyG ``DataLoader`` batch of snapshots (``x [B * N, F, T]``,
disjoint graphs) is one big graph to the wrapped model, which is exact for models without
per-node parameters (build them with ``n_nodes=None``). Only torch is imported here.
"""
from __future__ import annotations

from typing import Optional

from torch import Tensor, nn

from .pygt_layouts import from_layout, tsl_to_snapshot_target


class SnapshotModel(nn.Module):
    """``model(x [N, F, T], edge_index, edge_weight) -> [N, horizon]`` around a tsl-contract model.

    Args:
        model: ``model(x [b, t, n, f], edge_index, edge_weight, u) -> [b, horizon, n, out]``.
        input_size: leading channels of the snapshot's ``x`` that are the model's input; the
            remaining channels are passed as covariates ``u`` (the model's ``exog_size``).

    Shapes:
        - x: ``[nodes, input_size + exog, window]`` (PyG Temporal's snapshot layout ``"NFT"``)
        - edge_index: ``[2, E]``, edge_weight: ``[E]`` or None (``snapshot.edge_attr``)
        - output: ``[nodes, horizon]`` if the model has one output channel (like METR-LA's
          ``snapshot.y``), else ``[nodes, out, horizon]``
    """

    def __init__(self, model: nn.Module, input_size: int = 1):
        super().__init__()
        self.model, self.input_size = model, input_size

    def forward(self, x: Tensor, edge_index, edge_weight: Optional[Tensor] = None) -> Tensor:
        if x.dim() != 3:
            raise ValueError(f"a snapshot's x is [nodes, features, time], got {tuple(x.shape)}")
        if x.size(1) < self.input_size:
            raise ValueError(f"x has {x.size(1)} channels, fewer than input_size={self.input_size}")
        seq = from_layout(x, "NFT")  # [1, t, n, f]
        inp, cov = seq[..., :self.input_size], seq[..., self.input_size:]
        y = self.model(inp, edge_index, edge_weight, cov if cov.size(-1) else None)
        return tsl_to_snapshot_target(y)

    def __repr__(self) -> str:
        return f"SnapshotModel({self.model.__class__.__name__}, input_size={self.input_size})"
