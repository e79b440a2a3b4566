"""PyG Temporal models that read a whole window at once (attention, convolution, batched recurrences)."""
from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .._require import require_pygt

require_pygt("stgnn_diag.integrations.pygt")

import torch_geometric_temporal.nn as pygt  # noqa: E402
from torch_geometric.utils import to_dense_adj  # noqa: E402

from ..calendar_codes import CALENDAR_EXOG_SIZES, calendar_codes, extend_codes  # noqa: E402
from ..pygt_layouts import exog_as_features, output_to_tsl, to_layout  # noqa: E402
from .base import PyGTModel, target_major  # noqa: E402


class A3TGCN2Model(PyGTModel):
    """A3T-GCN (Bai et al., 2021), PyG Temporal's batched ``A3TGCN2`` + read-out.

    Note: in PyG Temporal 0.56.2 the hidden state is not carried from one period to the next
    (each period is one T-GCN step from zeros, then attention-pooled), as in its source.
    """

    wrapped = "A3TGCN2"

    def __init__(self, input_size: int = 1, output_size: Optional[int] = None, horizon: int = 12,
                 n_nodes: Optional[int] = None, hidden_size: int = 32, exog_size: int = 0, window: int = 12):
        super().__init__(input_size, output_size, horizon, n_nodes, hidden_size, exog_size, window)
        self.net = pygt.A3TGCN2(self.in_channels, hidden_size, periods=window, batch_size=1)
        # PyG Temporal creates the attention weights on CUDA whenever CUDA exists (device bug):
        # recreate them as a normal parameter so .to(device) governs placement.
        self.net._attention = nn.Parameter(torch.empty(window).uniform_())
        self.readout = self.make_readout()

    def core(self, x, edge_index, edge_weight, u):
        h = self.net(to_layout(exog_as_features(x, u), "BNFT"), edge_index, edge_weight)  # [b, n, hidden]
        return self.readout_hidden(h)

    def reset_parameters(self) -> None:
        super().reset_parameters()
        nn.init.uniform_(self.net._attention)


class TGCN2Model(PyGTModel):
    """T-GCN (Zhao et al., 2019), PyG Temporal's batched ``TGCN2`` cell run over the window + read-out."""

    wrapped = "TGCN2"

    def __init__(self, input_size: int = 1, output_size: Optional[int] = None, horizon: int = 12,
                 n_nodes: Optional[int] = None, hidden_size: int = 32, exog_size: int = 0, window: int = 12):
        super().__init__(input_size, output_size, horizon, n_nodes, hidden_size, exog_size, window)
        self.cell = pygt.TGCN2(self.in_channels, hidden_size, batch_size=1)
        self.readout = self.make_readout()

    def core(self, x, edge_index, edge_weight, u):
        x = exog_as_features(x, u)
        h = None
        for t in range(x.size(1)):
            h = self.cell(x[:, t], edge_index, edge_weight, h)  # [b, n, hidden]
        return self.readout_hidden(h)


class ASTGCNModel(PyGTModel):
    """ASTGCN (Guo et al., AAAI 2019). Edge weights are not used by PyG Temporal's ASTGCN.

    Extra args: ``n_blocks`` (2), ``k`` (Chebyshev order, 2), ``time_strides`` (1).
    """

    wrapped = "ASTGCN"
    needs_n_nodes = True

    def __init__(self, input_size: int = 1, output_size: Optional[int] = None, horizon: int = 12,
                 n_nodes: Optional[int] = None, hidden_size: int = 32, exog_size: int = 0, window: int = 12,
                 n_blocks: int = 2, k: int = 2, time_strides: int = 1):
        super().__init__(input_size, output_size, horizon, n_nodes, hidden_size, exog_size, window)
        self.net = pygt.ASTGCN(nb_block=n_blocks, in_channels=self.in_channels, K=k, nb_chev_filter=hidden_size,
                               nb_time_filter=hidden_size, time_strides=time_strides,
                               num_for_predict=horizon * self.output_size, len_input=window,
                               num_of_vertices=n_nodes)

    def core(self, x, edge_index, edge_weight, u):
        y = self.net(to_layout(exog_as_features(x, u), "BNFT"), edge_index)  # [b, n, h * o]
        return output_to_tsl(y, "B N (H O)", self.horizon, self.output_size)


class STGCNModel(PyGTModel):
    """STGCN (Yu et al., IJCAI 2018): ``n_blocks`` PyG Temporal ``STConv`` blocks + read-out over
    the remaining steps. Each block shortens time by ``2 * (kernel_size - 1)``.

    Extra args: ``n_blocks`` (2), ``kernel_size`` (3), ``k`` (Chebyshev order, 2).
    """

    wrapped = "STConv"
    needs_n_nodes = True

    def __init__(self, input_size: int = 1, output_size: Optional[int] = None, horizon: int = 12,
                 n_nodes: Optional[int] = None, hidden_size: int = 32, exog_size: int = 0, window: int = 12,
                 n_blocks: int = 2, kernel_size: int = 3, k: int = 2):
        super().__init__(input_size, output_size, horizon, n_nodes, hidden_size, exog_size, window)
        self.t_out = window - n_blocks * 2 * (kernel_size - 1)
        if self.t_out < 1:
            raise ValueError(f"window={window} is too short for {n_blocks} STConv blocks of kernel_size={kernel_size}.")
        self.blocks = nn.ModuleList([
            pygt.STConv(n_nodes, self.in_channels if i == 0 else hidden_size, hidden_size, hidden_size,
                        kernel_size=kernel_size, K=k) for i in range(n_blocks)])
        self.readout = nn.Linear(self.t_out * hidden_size, horizon * self.output_size)

    def core(self, x, edge_index, edge_weight, u):
        h = to_layout(exog_as_features(x, u), "BTNF")
        for block in self.blocks:
            h = block(h, edge_index, edge_weight)  # [b, t', n, hidden]
        b, t, n, d = h.shape
        h = h.permute(0, 2, 1, 3).reshape(b, n, t * d)
        return output_to_tsl(self.readout(F.relu(h)), "B N (H O)", self.horizon, self.output_size)


class GMANModel(PyGTModel):
    """GMAN (Zheng et al., AAAI 2020). Univariate (``input_size = output_size = 1``); the graph is
    not used (GMAN attends over all nodes). Its spatial embedding is a learned ``[n, heads * d]``
    table (the paper uses node2vec). The temporal embedding comes from our calendar covariates
    (``exog_size`` 1: time of day, 8: + weekday), continued over the horizon; ``exog_size=0``
    gives a constant temporal embedding.

    Extra args: ``n_blocks`` (L, 1), ``heads`` (K, 2), ``steps_per_day`` (288), ``bn_decay`` (0.1).
    """

    wrapped = "GMAN"
    needs_n_nodes = True

    def __init__(self, input_size: int = 1, output_size: Optional[int] = None, horizon: int = 12,
                 n_nodes: Optional[int] = None, hidden_size: int = 32, exog_size: int = 0, window: int = 12,
                 n_blocks: int = 1, heads: int = 2, steps_per_day: int = 288, bn_decay: float = 0.1):
        super().__init__(input_size, output_size, horizon, n_nodes, hidden_size, exog_size, window)
        if self.input_size != 1 or self.output_size != 1:
            raise ValueError("GMAN is univariate: input_size and output_size must be 1.")
        if exog_size not in (0,) + CALENDAR_EXOG_SIZES:
            raise ValueError(f"GMAN reads calendar covariates only (exog_size 0, 1 or 8), got {exog_size}.")
        if hidden_size % heads:
            raise ValueError(f"hidden_size={hidden_size} must be divisible by heads={heads}.")
        self.steps_per_day = steps_per_day
        self.net = pygt.GMAN(L=n_blocks, K=heads, d=hidden_size // heads, num_his=window, bn_decay=bn_decay,
                             steps_per_day=steps_per_day, use_bias=True, mask=False)
        self.spatial_embedding = nn.Parameter(torch.empty(n_nodes, hidden_size))
        nn.init.xavier_uniform_(self.spatial_embedding)

    def temporal_embedding(self, x: Tensor, u: Optional[Tensor]) -> Tensor:
        """GMAN's ``TE [b, window + horizon, 2]`` = ``(day_of_week, step_of_day)`` codes."""
        b, t = x.shape[:2]
        if u is None:
            return torch.zeros(b, t + self.horizon, 2, device=x.device)
        tod, dow = calendar_codes(u, self.steps_per_day)
        tod, dow = extend_codes(tod, dow, self.horizon, self.steps_per_day)
        dow = torch.zeros_like(tod) if dow is None else dow
        return torch.stack([dow, tod], dim=-1).to(x.dtype)

    def core(self, x, edge_index, edge_weight, u):
        y = self.net(to_layout(x, "BTN"), self.spatial_embedding, self.temporal_embedding(x, u))  # [b, h, n]
        return output_to_tsl(y, "B H N", self.horizon, self.output_size)

    def reset_parameters(self) -> None:
        super().reset_parameters()
        nn.init.xavier_uniform_(self.spatial_embedding)


class MTGNNModel(PyGTModel):
    """MTGNN (Wu et al., KDD 2020) on the given graph (``build_adj=False``) or a learned one.

    The given graph enters as the dense ``A_tilde[v, w]`` = weight of the edge ``w -> v`` (MixProp
    sums ``A_tilde[v, w] h_w`` into node ``v``); MTGNN also propagates over ``A_tilde^T``.

    Extra args: ``layers`` (3), ``gcn_depth`` (2), ``build_adj`` (False), ``dropout`` (0.3),
    ``subgraph_size`` (20), ``node_dim`` (40).
    """

    wrapped = "MTGNN"
    needs_n_nodes = True

    def __init__(self, input_size: int = 1, output_size: Optional[int] = None, horizon: int = 12,
                 n_nodes: Optional[int] = None, hidden_size: int = 32, exog_size: int = 0, window: int = 12,
                 layers: int = 3, gcn_depth: int = 2, build_adj: bool = False, dropout: float = 0.3,
                 subgraph_size: int = 20, node_dim: int = 40):
        super().__init__(input_size, output_size, horizon, n_nodes, hidden_size, exog_size, window)
        self.build_adj = build_adj
        self.net = pygt.MTGNN(gcn_true=True, build_adj=build_adj, gcn_depth=gcn_depth, num_nodes=n_nodes,
                              kernel_set=[2, 3, 6, 7], kernel_size=7, dropout=dropout,
                              subgraph_size=min(subgraph_size, n_nodes), node_dim=node_dim,
                              dilation_exponential=1, conv_channels=hidden_size, residual_channels=hidden_size,
                              skip_channels=hidden_size, end_channels=hidden_size, seq_length=window,
                              in_dim=self.in_channels, out_dim=horizon * self.output_size, layers=layers,
                              propalpha=0.05, tanhalpha=3, layer_norm_affline=True)

    def core(self, x, edge_index, edge_weight, u):
        a = None
        if not self.build_adj:
            a = to_dense_adj(edge_index, edge_attr=edge_weight, max_num_nodes=x.size(2))[0].t()
        y = self.net(to_layout(exog_as_features(x, u), "BFNT"), a)  # [b, h * o, n, 1]
        return output_to_tsl(y, "B (H O) N 1", self.horizon, self.output_size)


class BatchedDCRNNModel(PyGTModel):
    """DCRNN encoder (Li et al., ICLR 2018), PyG Temporal's ``BatchedDCRNN`` + read-out of the last state.

    Edges are passed target-major (see :func:`target_major`). Extra args: ``k`` (diffusion steps, 2).
    """

    wrapped = "BatchedDCRNN"
    fixed_window = False

    def __init__(self, input_size: int = 1, output_size: Optional[int] = None, horizon: int = 12,
                 n_nodes: Optional[int] = None, hidden_size: int = 32, exog_size: int = 0, window: int = 12,
                 k: int = 2):
        super().__init__(input_size, output_size, horizon, n_nodes, hidden_size, exog_size, window)
        self.net = pygt.BatchedDCRNN(self.in_channels, hidden_size, K=k)
        self.readout = self.make_readout()

    def core(self, x, edge_index, edge_weight, u):
        edge_index, edge_weight = target_major(edge_index, edge_weight)
        h = self.net(to_layout(exog_as_features(x, u), "BTNF"), edge_index, edge_weight)  # [b, t, n, hidden]
        return self.readout_hidden(h[:, -1])


class AGCRNModel(PyGTModel):
    """AGCRN (Bai et al., NeurIPS 2020): PyG Temporal's ``AGCRN`` cell over the window (learned
    adjacency from node embeddings; the given graph is not used) + read-out.

    Extra args: ``k`` (Chebyshev order, 2), ``emb_size`` (10).
    """

    wrapped = "AGCRN"
    needs_n_nodes = True
    fixed_window = False

    def __init__(self, input_size: int = 1, output_size: Optional[int] = None, horizon: int = 12,
                 n_nodes: Optional[int] = None, hidden_size: int = 32, exog_size: int = 0, window: int = 12,
                 k: int = 2, emb_size: int = 10):
        super().__init__(input_size, output_size, horizon, n_nodes, hidden_size, exog_size, window)
        self.cell = pygt.AGCRN(number_of_nodes=n_nodes, in_channels=self.in_channels, out_channels=hidden_size,
                               K=k, embedding_dimensions=emb_size)
        self.node_embedding = nn.Parameter(torch.empty(n_nodes, emb_size))
        nn.init.xavier_uniform_(self.node_embedding)
        self.readout = self.make_readout()

    def core(self, x, edge_index, edge_weight, u):
        x = exog_as_features(x, u)
        h = None
        for t in range(x.size(1)):
            h = self.cell(x[:, t], self.node_embedding, h)  # [b, n, hidden]
        return self.readout_hidden(h)

    def reset_parameters(self) -> None:
        super().reset_parameters()
        nn.init.xavier_uniform_(self.node_embedding)


# --------------------------------------------------------------------- single-snapshot recurrent cells
