"""Sensor-graph helpers: dense adjacency -> edge list, and DCRNN's Gaussian-kernel adjacency.

Edge convention of the whole project: ``A[i, j] != 0`` gives the edge ``i -> j`` with
``edge_index[0] = source = i`` and ``edge_index[1] = target = j`` (as PyG's ``dense_to_sparse``;
NOT tsl's ``adj_to_edge_index``, which transposes). METR-LA's adjacency is asymmetric, so this matters.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence, Tuple

import numpy as np
import torch
from torch import Tensor

#: The convention above in one line (written into saved model configs).
EDGE_DIRECTION = ("edge_index[0] = source, edge_index[1] = target: A[i, j] != 0 is the edge i -> j "
                  "(PyG's dense_to_sparse; tsl's adj_to_edge_index gives the reverse)")


def dense_to_edge_index(adj) -> Tuple[Tensor, Tensor]:
    """Turn a dense adjacency into ``(edge_index, edge_weight)``, row-major order.

    Args:
        adj: ``[nodes, nodes]`` numpy array or tensor; ``adj[i, j] != 0`` is the edge ``i -> j``.

    Returns:
        ``edge_index`` long ``[2, E]`` (row 0 = source ``i``, row 1 = target ``j``) and
        ``edge_weight`` float32 ``[E]`` (``adj[i, j]``), same order as PyG's ``dense_to_sparse``.
    """
    a = torch.as_tensor(np.asarray(adj) if not isinstance(adj, Tensor) else adj)
    if a.dim() != 2 or a.size(0) != a.size(1):
        raise ValueError(f"adjacency must be square [nodes, nodes], got {tuple(a.shape)}")
    edge_index = a.nonzero(as_tuple=False).t().contiguous().long()
    edge_weight = a[edge_index[0], edge_index[1]].to(torch.float32)
    return edge_index, edge_weight


def distance_matrix(
    edges: Iterable[Tuple[object, object, float]], sensor_ids: Sequence[str]
) -> np.ndarray:
    """Directed distance matrix from ``(from_id, to_id, cost)`` rows (DCRNN's ``distances_la_2012.csv``).

    Rows whose ids are not in ``sensor_ids`` are skipped; a later duplicate overwrites an earlier one.

    Returns:
        ``dist`` float32 ``[nodes, nodes]``, ``dist[i, j]`` = distance ``i -> j``, ``inf`` where unknown.
    """
    index: Mapping[str, int] = {str(s): k for k, s in enumerate(sensor_ids)}
    n = len(index)
    dist = np.full((n, n), np.inf, dtype=np.float32)
    for src, dst, cost in edges:
        i, j = index.get(_id_str(src)), index.get(_id_str(dst))
        if i is None or j is None:
            continue
        dist[i, j] = cost
    return dist


def _id_str(x) -> str:
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    return str(x).strip()


def gaussian_kernel_adjacency(dist: np.ndarray, threshold: float = 0.1) -> np.ndarray:
    """DCRNN's recipe: ``w = exp(-(d / sigma)^2)``, sigma = std of the finite distances, ``w < threshold`` -> 0.

    Mirrors ``get_adjacency_matrix`` of DCRNN's ``gen_adj_mx.py`` (float32 throughout), so a matrix
    built from ``distances_la_2012.csv`` reproduces ``adj_mx.pkl``.

    Args:
        dist: ``[nodes, nodes]`` distances, ``inf`` where there is no road path.
        threshold: weights below it are set to 0 (DCRNN's ``normalized_k``).

    Returns:
        ``adj`` float32 ``[nodes, nodes]`` (``adj[i, j]`` weights the edge ``i -> j``).
    """
    dist = np.asarray(dist, dtype=np.float32)
    finite = dist[~np.isinf(dist)].flatten()
    if finite.size == 0:
        raise ValueError("distance matrix has no finite entry")
    std = finite.std()
    adj = np.exp(-np.square(dist / std))
    adj[adj < threshold] = 0
    return adj.astype(np.float32)
