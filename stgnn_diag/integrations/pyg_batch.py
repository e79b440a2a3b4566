"""Windows as PyG ``Data`` and mini-batches of several graphs (e.g. different sensor subsets).

Our models read ``x [batch, time, nodes, features]``, which needs the same nodes in every sample.
PyG batches graphs of different sizes as one disjoint graph with node-first attributes, so a
window becomes a ``Data`` with

* ``x [nodes, window, features]``, optional ``u [nodes, window, exog]`` (covariates per node),
  ``y`` / ``mask`` ``[nodes, horizon, out]``, ``edge_index [2, E]``, ``edge_weight [E]`` (where PyG's
  defaults look: ``ToSparseTensor()`` moves it into ``adj_t``, a SparseTensor, and the weights are kept).

:func:`forward_batch` runs a model of our contract on a ``Batch`` of such graphs in **one** call,
as a single sample whose nodes are all the graphs' nodes: every layer of our models acts per node
(temporal attention, layer norm, read-out) or along edges (graph convolutions), so the disjoint
union gives exactly the per-graph results (:func:`forward_per_graph`, the reference). Models with
per-node parameters (``n_nodes`` set, adaptive adjacency) or batch statistics need
:func:`forward_per_graph`. Only torch and torch_geometric are imported here.
"""
from __future__ import annotations

from typing import Optional, Sequence

import torch
from torch import Tensor, nn
from torch_geometric.data import Batch, Data
from torch_geometric.utils import subgraph


def window_to_data(x: Tensor, edge_index: Tensor, edge_weight: Optional[Tensor] = None, *,
                   u: Optional[Tensor] = None, y: Optional[Tensor] = None, mask: Optional[Tensor] = None,
                   nodes: Optional[Sequence[int]] = None) -> Data:
    """One window as a PyG ``Data`` with node-first attributes, optionally on a subset of sensors.

    Args:
        x: ``[window, nodes, features]``.
        edge_index: ``[2, E]`` (source, target); edge_weight ``[E]`` or None.
        u: covariates ``[window, exog]`` (shared; repeated per node) or ``[window, nodes, exog]``.
        y, mask: ``[horizon, nodes, out]``.
        nodes: keep only these sensors (in this order; edges between them are kept and relabelled
            with PyG's ``subgraph``). The ``Data`` stores them in ``node_ids``.

    Returns:
        ``Data(x [n, window, f], edge_index, edge_weight, u [n, window, e], y / mask [n, horizon, out],
        node_ids [n])`` (absent fields omitted).
    """
    if x.dim() != 3:
        raise ValueError(f"x must be [window, nodes, features], got {tuple(x.shape)}")
    n = x.size(1)
    ids = torch.arange(n) if nodes is None else torch.as_tensor(nodes, dtype=torch.long)
    if nodes is not None:
        # node k of the subgraph is sensor nodes[k] (PyG's subgraph keeps the order of the subset)
        edge_index, edge_weight = subgraph(ids, edge_index, edge_weight, relabel_nodes=True, num_nodes=n)
    data = Data(x=x[:, ids].transpose(0, 1), edge_index=edge_index, node_ids=ids)
    if edge_weight is not None:
        data.edge_weight = edge_weight
    if u is not None:
        if u.dim() == 2:
            u = u.unsqueeze(1).expand(-1, n, -1)
        data.u = u[:, ids].transpose(0, 1)
    if y is not None:
        data.y = y[:, ids].transpose(0, 1)
    if mask is not None:
        data.mask = mask[:, ids].transpose(0, 1)
    return data


def _graph_inputs(data: Data):
    x = data.x.transpose(0, 1).unsqueeze(0)  # [1, t, n, f]
    u = data.u.transpose(0, 1).unsqueeze(0) if getattr(data, "u", None) is not None else None
    weight, attr = getattr(data, "edge_weight", None), getattr(data, "edge_attr", None)
    if getattr(data, "adj_t", None) is not None:
        if weight is not None or attr is not None:  # ToSparseTensor(attr=...) left the weights out of adj_t
            raise ValueError("The Data holds adj_t and separate edge weights: the SparseTensor was built without "
                             "them. Use ToSparseTensor() on Data with edge_weight (window_to_data stores it there).")
        return x, data.adj_t, None, u
    if weight is None and attr is not None:
        if attr.dim() != 1:
            raise ValueError(f"edge_attr has shape {tuple(attr.shape)}; the models take one weight per edge "
                             f"(edge_weight [E]).")
        weight = attr
    return x, data.edge_index, weight, u


def forward_batch(model: nn.Module, batch: Data) -> Tensor:
    """Run ``model`` on a PyG ``Batch`` (or one ``Data``) of windows, all graphs in one call.

    Shapes:
        batch.x ``[total_nodes, window, f]`` -> ``[total_nodes, horizon, out]`` (node-first, like
        ``batch.y``).
    """
    x, adj, w, u = _graph_inputs(batch)
    return model(x, adj, w, u)[0].transpose(0, 1)


def forward_per_graph(model: nn.Module, batch: Batch) -> Tensor:
    """Reference for :func:`forward_batch`: one call per graph, outputs concatenated in batch order.

    Works for models with per-node parameters too (each graph must then have the model's nodes).
    """
    graphs = batch.to_data_list() if isinstance(batch, Batch) else [batch]
    return torch.cat([forward_batch(model, g) for g in graphs], dim=0)
