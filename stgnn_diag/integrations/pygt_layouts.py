"""The one place where PyG Temporal's tensor layouts meet the tsl layout ``[batch, time, nodes, features]``.

PyG Temporal has no common layout; each model reads its own:

=============  =======================================  ===============================================
layout         shape                                    models (PyG Temporal 0.56.2)
=============  =======================================  ===============================================
``"BTNF"``     ``[batch, time, nodes, features]``       STConv, BatchedDCRNN (tsl's layout)
``"BNFT"``     ``[batch, nodes, features, time]``       A3TGCN2, ASTGCN, MSTGCN
``"BTN"``      ``[batch, time, nodes]`` (1 feature)     GMAN
``"BFNT"``     ``[batch, features, nodes, time]``       MTGNN
``"NFT"``      ``[nodes, features, time]`` (1 sample)   A3TGCN, snapshots of ``StaticGraphTemporalSignal``
``"T(BN)F"``   per step ``[batch * nodes, features]``   recurrent cells (GConvGRU, GConvLSTM, GCLSTM,
                                                        DCRNN, TGCN): one snapshot ``[N, F]`` per call,
                                                        the batch as a disjoint union of graphs
=============  =======================================  ===============================================

Outputs come back as ``[batch, nodes, horizon * out]`` (ASTGCN), ``[batch, horizon * out,
nodes, 1]`` (MTGNN), ``[batch, horizon, nodes]`` (GMAN), ``[nodes, horizon]`` (snapshot targets), or
a hidden state that a read-out maps to ``horizon * out``. :func:`to_layout` and :func:`from_layout`
convert both ways; nothing else in :mod:`stgnn_diag.integrations` permutes PyG Temporal tensors.

Only torch is imported here.
"""
from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch import Tensor

#: Input layouts understood by :func:`to_layout` / :func:`from_layout`.
INPUT_LAYOUTS = ("BTNF", "BNFT", "BTN", "BFNT", "NFT", "T(BN)F")
#: Output layouts understood by :func:`output_to_tsl`.
OUTPUT_LAYOUTS = ("B N (H O)", "B (H O) N 1", "B H N", "B H N O", "N (H O)", "N O H")


def _check_btnf(x: Tensor) -> Tuple[int, int, int, int]:
    if x.dim() != 4:
        raise ValueError(f"expected [batch, time, nodes, features], got shape {tuple(x.shape)}")
    return tuple(x.shape)  # type: ignore[return-value]


def to_layout(x: Tensor, layout: str) -> Tensor:
    """``[batch, time, nodes, features]`` -> ``layout``.

    ``"BTN"`` needs one feature; ``"NFT"`` needs a batch of one (a single snapshot); ``"T(BN)F"``
    stacks the batch into the node axis (sample ``b`` holds nodes ``b * n ... b * n + n - 1``).
    """
    b, t, n, f = _check_btnf(x)
    if layout == "BTNF":
        return x
    if layout == "BNFT":
        return x.permute(0, 2, 3, 1)
    if layout == "BFNT":
        return x.permute(0, 3, 2, 1)
    if layout == "BTN":
        if f != 1:
            raise ValueError(f"layout BTN holds one feature per node, got {f}")
        return x[..., 0]
    if layout == "NFT":
        if b != 1:
            raise ValueError(f"layout NFT holds a single sample, got a batch of {b}")
        return x[0].permute(1, 2, 0)
    if layout == "T(BN)F":
        return x.transpose(0, 1).reshape(t, b * n, f)
    raise ValueError(f"unknown layout {layout!r}; choose one of {INPUT_LAYOUTS}")


def from_layout(x: Tensor, layout: str, batch_size: Optional[int] = None) -> Tensor:
    """``layout`` -> ``[batch, time, nodes, features]`` (inverse of :func:`to_layout`).

    ``"T(BN)F"`` needs ``batch_size``; ``"NFT"`` gives a batch of one; ``"BTN"`` one feature.
    """
    if layout == "BTNF":
        return x
    if layout == "BNFT":
        return x.permute(0, 3, 1, 2)
    if layout == "BFNT":
        return x.permute(0, 3, 2, 1)
    if layout == "BTN":
        return x.unsqueeze(-1)
    if layout == "NFT":
        return x.permute(2, 0, 1).unsqueeze(0)
    if layout == "T(BN)F":
        if batch_size is None:
            raise ValueError("layout T(BN)F needs batch_size to split the nodes")
        t, bn, f = x.shape
        return x.reshape(t, batch_size, bn // batch_size, f).transpose(0, 1)
    raise ValueError(f"unknown layout {layout!r}; choose one of {INPUT_LAYOUTS}")


def output_to_tsl(y: Tensor, layout: str, horizon: int, output_size: int) -> Tensor:
    """A PyG Temporal model's output -> ``[batch, horizon, nodes, output_size]``.

    Layouts (``H`` = horizon, ``O`` = output_size; ``(H O)`` is one axis, H major):
    ``"B N (H O)"`` (ASTGCN with ``num_for_predict = H * O``, or a read-out of a hidden
    state), ``"B (H O) N 1"`` (MTGNN with ``out_dim = H * O``), ``"B H N"`` (GMAN, ``O = 1``),
    ``"B H N O"`` (already tsl), ``"N (H O)"`` and ``"N O H"`` (one snapshot; batch of one).
    """
    h, o = horizon, output_size
    if layout == "B N (H O)":
        b, n, _ = y.shape
        return y.reshape(b, n, h, o).transpose(1, 2)
    if layout == "B (H O) N 1":
        b, _, n, _ = y.shape
        return y[..., 0].reshape(b, h, o, n).transpose(2, 3)
    if layout == "B H N":
        if o != 1:
            raise ValueError(f"layout 'B H N' holds one output channel, got output_size={o}")
        return y.unsqueeze(-1)
    if layout == "B H N O":
        return y
    if layout == "N (H O)":
        n = y.size(0)
        return y.reshape(n, h, o).transpose(0, 1).unsqueeze(0)
    if layout == "N O H":
        return y.permute(2, 0, 1).unsqueeze(0)
    raise ValueError(f"unknown output layout {layout!r}; choose one of {OUTPUT_LAYOUTS}")


def tsl_to_snapshot_target(y: Tensor) -> Tensor:
    """``[1, horizon, nodes, out]`` -> a snapshot target: ``[nodes, horizon]`` if ``out == 1``
    (PyG Temporal's METR-LA ``y``), else ``[nodes, out, horizon]``."""
    b, h, n, o = _check_btnf(y)
    if b != 1:
        raise ValueError(f"a snapshot holds a single sample, got a batch of {b}")
    return y[0, :, :, 0].t() if o == 1 else y[0].permute(1, 2, 0)


def snapshot_target_to_tsl(y: Tensor) -> Tensor:
    """Inverse of :func:`tsl_to_snapshot_target`: ``[nodes, horizon]`` or ``[nodes, out, horizon]``
    -> ``[1, horizon, nodes, out]``."""
    if y.dim() == 2:
        return y.t().unsqueeze(0).unsqueeze(-1)
    if y.dim() == 3:
        return y.permute(2, 0, 1).unsqueeze(0)
    raise ValueError(f"a snapshot target is [nodes, horizon] or [nodes, out, horizon], got {tuple(y.shape)}")


def disjoint_union(edge_index: Tensor, edge_weight: Optional[Tensor], batch_size: int,
                   n_nodes: int) -> Tuple[Tensor, Tensor]:
    """Repeat one graph ``batch_size`` times as disjoint copies (node ``v`` of sample ``b`` is
    ``b * n_nodes + v``), to run single-snapshot layers on a batch stacked by :func:`to_layout`
    ``"T(BN)F"``. Missing weights become ones.

    Shapes:
        edge_index ``[2, E]``, edge_weight ``[E]`` -> ``[2, batch_size * E]``, ``[batch_size * E]``.
    """
    if edge_weight is None:
        edge_weight = torch.ones(edge_index.size(1), device=edge_index.device)
    offsets = torch.arange(batch_size, device=edge_index.device).repeat_interleave(edge_index.size(1)) * n_nodes
    return edge_index.repeat(1, batch_size) + offsets, edge_weight.repeat(batch_size)


def exog_as_features(x: Tensor, u: Optional[Tensor]) -> Tensor:
    """Append covariates to the node features: ``x [b, t, n, f]``, ``u [b, t, e]`` or
    ``[b, t, n, e]`` -> ``[b, t, n, f + e]`` (``u`` None: ``x`` unchanged).

    The PyG Temporal models have no exogenous input, so covariates enter as extra input channels.
    """
    if u is None:
        return x
    if u.dim() == 3:
        u = u.unsqueeze(2).expand(-1, -1, x.size(2), -1)
    return torch.cat([x, u.to(x.dtype)], dim=-1)
