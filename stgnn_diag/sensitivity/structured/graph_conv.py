"""Graph convolutions as affine maps ``sum_k M_k x W_k^T + b``, and ``M_k`` by columns (CSC) for sparse products."""
from __future__ import annotations

from typing import List, Optional, Tuple

import torch
from torch import Tensor, nn

from ...nn import DiffusionConv, as_edge_index, random_walk_weights
from .support import UnsupportedModel


def _dense_from_edges(index: Tensor, weight: Tensor, n: int, dtype) -> Tensor:
    """``M [n, n]`` with ``M[target, source] += weight`` (one message-passing hop as a matrix)."""
    m = torch.zeros(n, n, dtype=torch.float64, device=index.device)
    m.index_put_((index[1], index[0]), weight.to(torch.float64), accumulate=True)
    return m.to(dtype)


def conv_terms(conv: nn.Module, edge_index, edge_weight: Optional[Tensor], n: int, dtype
               ) -> Tuple[List[Tuple[Optional[Tensor], Tensor]], Optional[Tensor]]:
    """Write a graph convolution as ``sum_k M_k x W_k^T + b``.

    Returns:
        ``([(M_k [n, n] or None for the identity, W_k [out, in]), ...], b [out] or None)``.
    """
    ei, ew = as_edge_index(edge_index, edge_weight)
    if isinstance(conv, DiffusionConv):
        w = conv.lin.weight
        d_in = conv.in_channels
        mats: List[Optional[Tensor]] = [None] if conv.root_weight else []

        def powers(p: Tensor) -> List[Tensor]:
            out, h = [], p
            for _ in range(conv.k):
                out.append(h)
                h = p @ h
            return out

        mats += powers(_dense_from_edges(ei, random_walk_weights(ei, ew, n), n, torch.float64))
        if conv.bidirectional:
            rev = ei.flip(0)
            mats += powers(_dense_from_edges(rev, random_walk_weights(rev, ew, n), n, torch.float64))
        if conv.adaptive is not None:
            mats += powers(conv.adaptive(n).detach().to(torch.float64).T)
        if w.shape[1] != d_in * len(mats):
            raise UnsupportedModel("DiffusionConv weight does not match its supports")
        terms = [(None if m is None else m.to(dtype), w[:, i * d_in:(i + 1) * d_in])
                 for i, m in enumerate(mats)]
        return terms, conv.lin.bias
    try:
        from torch_geometric.nn import GCNConv
        from torch_geometric.nn.conv.gcn_conv import gcn_norm
    except ImportError:  # pragma: no cover
        GCNConv = None
    if GCNConv is not None and isinstance(conv, GCNConv):
        if conv.normalize:
            ei2, w2 = gcn_norm(ei, ew, n, conv.improved, conv.add_self_loops, conv.flow, dtype=torch.float64)
        else:
            ei2 = ei
            w2 = ew if ew is not None else torch.ones(ei.size(1), dtype=torch.float64, device=ei.device)
        if conv.flow != "source_to_target":
            ei2 = ei2.flip(0)
        return [(_dense_from_edges(ei2, w2, n, dtype), conv.lin.weight)], conv.bias
    raise UnsupportedModel(f"graph convolution {type(conv).__name__} is not supported by the structured engine")



def _csc(m: Optional[Tensor], n: int, device, dtype) -> Tuple[Tensor, Tensor, Tensor]:
    if m is None:
        m = torch.eye(n, device=device, dtype=dtype)
    mt = m.T.contiguous()  # rows of mt = columns of m
    col, row = mt.nonzero(as_tuple=True)
    ptr = torch.zeros(n + 1, dtype=torch.long, device=device)
    ptr[1:] = torch.cumsum(torch.bincount(col, minlength=n), 0)
    return ptr, row, mt[col, row]
