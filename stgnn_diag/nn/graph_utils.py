"""Edge-index helpers shared by the graph layers and models.

Convention (used everywhere in stgnn_diag): ``edge_index[0]`` is the source and
``edge_index[1]`` the target of an edge, and one message-passing hop moves information from
source to target (PyG's ``flow="source_to_target"``). From a dense adjacency ``A``,
``A[i, j] != 0`` gives the edge ``i -> j`` (PyG's ``dense_to_sparse``; tsl's
``adj_to_edge_index`` transposes, giving ``j -> i``).
"""
from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch import Tensor
from torch_geometric.utils import scatter


def as_edge_index(edge_index, edge_weight: Optional[Tensor] = None) -> Tuple[Tensor, Optional[Tensor]]:
    """Return ``(edge_index [2, E], edge_weight [E] or None)`` from an edge index or a SparseTensor.

    A ``torch_sparse.SparseTensor`` is read with PyG's convention that it holds the *transposed*
    adjacency ``adj_t[target, source]``, so ``GCNConv(x, adj.t())`` and ``model(x, adj.t())`` agree
    with ``model(x, edge_index)``.
    """
    if hasattr(edge_index, "coo") and not isinstance(edge_index, Tensor):  # torch_sparse.SparseTensor
        if edge_weight is not None:
            raise ValueError("Pass edge weights inside the SparseTensor, not as edge_weight.")
        row, col, value = edge_index.coo()
        return torch.stack([col, row]), value
    if isinstance(edge_index, Tensor) and edge_index.is_sparse:
        adj_t = edge_index.coalesce()
        row, col = adj_t.indices()
        return torch.stack([col, row]), adj_t.values()
    return edge_index, edge_weight


def check_edge_index(edge_index, num_nodes: int, edge_weight: Optional[Tensor] = None) -> None:
    """Raise a clear ``TypeError`` / ``ValueError`` if ``edge_index`` cannot index ``num_nodes`` nodes."""
    if not isinstance(edge_index, Tensor):
        raise TypeError(f"edge_index must be a torch.Tensor [2, E] (or a SparseTensor), got {type(edge_index).__name__}.")
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"edge_index must have shape [2, num_edges], got {tuple(edge_index.shape)}.")
    if edge_index.dtype not in (torch.long, torch.int32, torch.int64):
        raise TypeError(f"edge_index must hold integers (torch.long), got {edge_index.dtype}.")
    if edge_index.numel() > 0 and not torch.compiler.is_compiling():  # values: a device sync, no graph
        lo, hi = int(edge_index.min()), int(edge_index.max())
        if lo < 0:
            raise ValueError(f"edge_index holds a negative node index ({lo}).")
        if hi >= num_nodes:
            raise ValueError(f"edge_index refers to node {hi} but the input has only {num_nodes} nodes "
                             f"(x.shape[2]); the node count disagrees with the graph.")
    if edge_weight is not None:
        if not isinstance(edge_weight, Tensor) or edge_weight.shape != (edge_index.size(1),):
            shape = tuple(edge_weight.shape) if isinstance(edge_weight, Tensor) else type(edge_weight).__name__
            raise ValueError(f"edge_weight must have shape [num_edges] = [{edge_index.size(1)}], got {shape}.")


def random_walk_weights(edge_index: Tensor, edge_weight: Optional[Tensor], num_nodes: int) -> Tensor:
    """Edge weights divided by the out-degree of their source: ``w_e / sum_{e': src(e')=src(e)} w_e'``.

    Propagating with these weights is DCRNN's forward diffusion step ``(D_O^{-1} A)^T x``:
    ``x'_i = sum_{j -> i} A[j, i] / d_out(j) x_j``. Applied to ``edge_index.flip(0)`` it gives
    the backward step ``(D_I^{-1} A^T)^T x``.

    Shapes:
        edge_index ``[2, E]``, edge_weight ``[E]`` or None (ones) -> ``[E]``.
    """
    src = edge_index[0]
    if edge_weight is None:
        edge_weight = torch.ones(src.numel(), device=src.device)
    deg = scatter(edge_weight, src, dim=0, dim_size=num_nodes, reduce="sum")
    inv = deg.reciprocal().masked_fill(deg == 0, 0.0)
    return edge_weight * inv[src]
