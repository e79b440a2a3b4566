"""How the structured engine splits the input nodes into chunks that fit a memory budget."""
from __future__ import annotations

from typing import List, Sequence

import torch
from torch import Tensor


def tangent_row_bytes(steps: Sequence, columns: int, t: int, d: int, element_size: int) -> float:
    """Bytes one (input node, node) tangent row needs while it passes through ``steps``.

    A row is ``[columns, t, d]``; the estimate adds the graph steps' per-term products
    (``n_terms * d``), working buffers (``6 * d``) and the attention's score tensors
    (``2 * heads * t``), taking the largest graph / temporal step.
    """
    n_terms = max([len(s.weights) for s in steps if s.kind == "graph"] + [1])
    heads = max([s.heads for s in steps if s.kind == "temporal"] + [1])
    return columns * t * element_size * (n_terms * d + 6 * d + 2 * heads * t)


def pack_chunks(groups: Tensor, rows: Tensor, bytes_per_row: float, budget_mb: float) -> List[Tensor]:
    """Split ``groups [G]`` (input nodes, in order) into consecutive chunks within ``budget_mb``.

    Args:
        groups: ``[G]`` input nodes.
        rows: ``[G]`` tangent rows each input node has at the widest point of the propagation.
        bytes_per_row: from :func:`tangent_row_bytes`.
        budget_mb: memory budget of one chunk; a single node over budget still gets its own chunk.

    Returns:
        ``[chunk [G_i] (CPU long tensor), ...]``, covering ``groups`` in order.
    """
    chunks, cur, used = [], [], 0.0
    cap = budget_mb * 2**20
    for g, r in zip(groups.tolist(), rows.tolist()):
        need = r * bytes_per_row
        if cur and used + need > cap:
            chunks.append(torch.tensor(cur))
            cur, used = [], 0.0
        cur.append(g)
        used += need
    if cur:
        chunks.append(torch.tensor(cur))
    return chunks
