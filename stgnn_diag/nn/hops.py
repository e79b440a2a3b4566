"""Hop counts between the nodes of a graph: the ``h`` of the sensitivity tools' (hop, lag) profiles and of the
synthetic lag-hop task's sources."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch
from scipy.sparse.csgraph import shortest_path
from torch import Tensor

from .graph_utils import as_edge_index

__all__ = ["hop_distances"]


def hop_distances(edge_index, num_nodes: int, directed: bool = True) -> Tensor:
    """Shortest-path hop counts between all pairs of nodes.

    ``D[i, j]`` is the least number of edges on a path from node ``i`` to node ``j`` following the
    edges source -> target (``edge_index[0] -> edge_index[1]``, the direction messages travel in
    stgnn_diag), or ignoring the direction with ``directed=False``. ``D[i, i] = 0``; pairs with no
    path are ``inf``. Self-loops, duplicate edges and edge weights do not change hop counts.

    Args:
        edge_index: ``[2, E]`` integer tensor / array (or a SparseTensor ``adj_t``).
        num_nodes: number of nodes ``n`` (isolated nodes included).
        directed: follow edge directions.

    Returns:
        float64 tensor ``[n, n]`` of hop counts, ``inf`` where unreachable.

    Shapes:
        edge_index ``[2, E]`` -> ``[n, n]``.
    """
    if isinstance(edge_index, np.ndarray):
        edge_index = torch.as_tensor(edge_index)
    edge_index, _ = as_edge_index(edge_index, None)
    if not isinstance(edge_index, Tensor) or edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError(f"edge_index must have shape [2, E], got {getattr(edge_index, 'shape', None)}.")
    if not isinstance(num_nodes, (int, np.integer)) or num_nodes < 1:
        raise ValueError(f"num_nodes must be a positive integer, got {num_nodes!r}.")
    ei = edge_index.detach().cpu().long().numpy()
    if ei.size and (ei.min() < 0 or ei.max() >= num_nodes):
        raise ValueError(f"edge_index refers to node {int(ei.max())} (or a negative index) but num_nodes={num_nodes}.")
    adj = sp.csr_matrix((np.ones(ei.shape[1]), (ei[0], ei[1])), shape=(num_nodes, num_nodes))
    adj.data[:] = 1.0  # duplicates summed by csr construction: hop counts only need the pattern
    d = shortest_path(adj, method="D", directed=directed, unweighted=True)
    return torch.from_numpy(d)
