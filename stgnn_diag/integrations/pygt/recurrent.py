"""PyG Temporal's single-snapshot recurrent cells, run step by step over the window with a read-out."""
from __future__ import annotations

from typing import Optional

from torch import nn

from .._require import require_pygt

require_pygt("stgnn_diag.integrations.pygt")

import torch_geometric_temporal.nn as pygt  # noqa: E402

from ..pygt_layouts import disjoint_union, exog_as_features, to_layout  # noqa: E402
from .base import PyGTModel, target_major  # noqa: E402


class RecurrentCellModel(PyGTModel):
    """A PyG Temporal single-snapshot cell (``X [N, F]``) run over the window on the batch as a
    disjoint union of graphs (layout ``"T(BN)F"``), then a read-out of the last hidden state."""

    fixed_window = False
    #: the cell returns ``(H, C)`` (LSTM cells)
    lstm: bool = False
    #: the cell needs target-major edges (see :func:`target_major`)
    sort_edges: bool = False

    def make_cell(self, k: int) -> nn.Module:  # pragma: no cover - abstract
        raise NotImplementedError

    def __init__(self, input_size: int = 1, output_size: Optional[int] = None, horizon: int = 12,
                 n_nodes: Optional[int] = None, hidden_size: int = 32, exog_size: int = 0, window: int = 12,
                 k: int = 2):
        super().__init__(input_size, output_size, horizon, n_nodes, hidden_size, exog_size, window)
        self.k = k
        self.cell = self.make_cell(k)
        self.readout = self.make_readout()

    def core(self, x, edge_index, edge_weight, u):
        b, _, n, _ = x.shape
        seq = to_layout(exog_as_features(x, u), "T(BN)F")  # [t, b * n, f]
        ei, ew = disjoint_union(edge_index, edge_weight, b, n)
        if self.sort_edges:
            ei, ew = target_major(ei, ew)
        h = c = None
        for xt in seq:
            if self.lstm:
                h, c = self.cell(xt, ei, ew, h, c)
            else:
                h = self.cell(xt, ei, ew, h)
        return self.readout_hidden(h.view(b, n, -1))


class GConvGRUModel(RecurrentCellModel):
    """GConvGRU (Seo et al., 2018): Chebyshev graph convolutions in a GRU. Extra args: ``k`` (2)."""

    wrapped = "GConvGRU"

    def make_cell(self, k):
        return pygt.GConvGRU(self.in_channels, self.hidden_size, K=k)


class GConvLSTMModel(RecurrentCellModel):
    """GConvLSTM (Seo et al., 2018): Chebyshev graph convolutions in an LSTM. Extra args: ``k`` (2)."""

    wrapped = "GConvLSTM"
    lstm = True

    def make_cell(self, k):
        return pygt.GConvLSTM(self.in_channels, self.hidden_size, K=k)


class GCLSTMModel(RecurrentCellModel):
    """GC-LSTM (Chen et al., 2018): an LSTM with a Chebyshev convolution on the hidden state.
    Extra args: ``k`` (2)."""

    wrapped = "GCLSTM"
    lstm = True

    def make_cell(self, k):
        return pygt.GCLSTM(self.in_channels, self.hidden_size, K=k)


class DCRNNModel(RecurrentCellModel):
    """DCRNN encoder cell (Li et al., ICLR 2018), PyG Temporal's single-snapshot ``DCRNN``, with
    target-major edges (see :func:`target_major`). Extra args: ``k`` (diffusion steps, 2)."""

    wrapped = "DCRNN"
    sort_edges = True

    def make_cell(self, k):
        return pygt.DCRNN(self.in_channels, self.hidden_size, K=k)


class TGCNModel(RecurrentCellModel):
    """T-GCN cell (Zhao et al., 2019), PyG Temporal's single-snapshot ``TGCN`` (GCN, no ``k``)."""

    wrapped = "TGCN"

    def __init__(self, input_size: int = 1, output_size: Optional[int] = None, horizon: int = 12,
                 n_nodes: Optional[int] = None, hidden_size: int = 32, exog_size: int = 0, window: int = 12):
        super().__init__(input_size, output_size, horizon, n_nodes, hidden_size, exog_size, window, k=1)

    def make_cell(self, k):
        return pygt.TGCN(self.in_channels, self.hidden_size)
