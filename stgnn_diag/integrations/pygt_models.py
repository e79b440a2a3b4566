"""PyG Temporal models behind the tsl forward contract (the zoo's ``pygt:`` namespace).

Every wrapper is built as ``Wrapper(input_size, output_size=None, horizon=12, n_nodes=None,
hidden_size=32, exog_size=0, window=12, **model_specific)`` and called as
``model(x [b, t, n, f], edge_index, edge_weight=None, u=None) -> [b, horizon, n, output_size]``.
Layouts are converted by :mod:`.pygt_layouts` only. Conventions:

* ``edge_index`` is ``[2, E]`` (source, target; info flows source -> target) or a SparseTensor
  ``adj_t``; missing weights are ones; ASTGCN takes no weights and ignores them.
* Covariates ``u`` (``[b, t, exog]`` or ``[b, t, n, exog]``) enter as extra input channels, except
  GMAN, which turns our calendar covariates into its day-of-week / step-of-day codes.
* Models that emit a hidden state get a linear read-out to ``horizon * output_size``.

Importing this module imports ``torch_geometric_temporal`` (needs ``torch_sparse``); use
``stgnn_diag.create_model("pygt:Name", ...)`` to get the install hint when it is missing.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple, Type

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._require import require_pygt

require_pygt("stgnn_diag.integrations.pygt_models")

import torch_geometric_temporal.nn as pygt  # noqa: E402
from torch_geometric.utils import sort_edge_index, to_dense_adj  # noqa: E402

from ..models.inputs import layout_hint  # noqa: E402
from ..nn import as_edge_index, check_edge_index  # noqa: E402
from .calendar_codes import CALENDAR_EXOG_SIZES, calendar_codes, extend_codes  # noqa: E402
from .pygt_layouts import disjoint_union, exog_as_features, output_to_tsl, to_layout  # noqa: E402


class PyGTModel(nn.Module):
    """Base of the PyG Temporal wrappers: argument mapping, input checks, covariates, read-out.

    The wrappers take **our** layout ``x [batch, time, nodes, features]`` (tsl's), not the layout of the
    PyG Temporal class they wrap (``[batch, nodes, features, time]`` for A3TGCN2 / ASTGCN ...): they convert
    inside. An input in a PyG Temporal layout is refused with the conversion
    (``stgnn_diag.integrations.pygt_layouts.from_layout``).

    Subclasses set :attr:`needs_n_nodes` / :attr:`fixed_window` and implement :meth:`core`.

    Args:
        input_size: input channels per node and step.
        output_size: output channels (default ``input_size``).
        horizon: predicted steps.
        n_nodes: number of nodes (required by models with per-node parameters).
        hidden_size: width of the wrapped model.
        exog_size: covariate channels of ``u`` (0: none).
        window: input steps (models with a fixed input length are built for it).

    Shapes:
        - x: ``[batch, window, nodes, input_size]``
        - edge_index: ``[2, E]`` or SparseTensor ``adj_t``; edge_weight: ``[E]`` or None
        - u: ``[batch, window, exog_size]`` or ``[batch, window, nodes, exog_size]``
        - output: ``[batch, horizon, nodes, output_size]``
    """

    #: PyG Temporal class wrapped (for ``repr`` and the docs).
    wrapped: str = ""
    needs_n_nodes: bool = False
    fixed_window: bool = True

    def __init__(self, input_size: int = 1, output_size: Optional[int] = None, horizon: int = 12,
                 n_nodes: Optional[int] = None, hidden_size: int = 32, exog_size: int = 0, window: int = 12):
        super().__init__()
        for name, v in dict(input_size=input_size, horizon=horizon, hidden_size=hidden_size, window=window).items():
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"{name} must be a positive integer, got {v!r}.")
        if exog_size < 0:
            raise ValueError(f"exog_size must be >= 0, got {exog_size}.")
        if self.needs_n_nodes and not n_nodes:
            raise ValueError(f"{type(self).__name__} has per-node parameters: pass n_nodes.")
        self.input_size, self.output_size = input_size, output_size or input_size
        self.horizon, self.n_nodes, self.hidden_size = horizon, n_nodes, hidden_size
        self.exog_size, self.window = exog_size, window

    @property
    def in_channels(self) -> int:
        """Channels the wrapped model reads: the input plus the covariates."""
        return self.input_size + self.exog_size

    def make_readout(self) -> nn.Linear:
        """``hidden -> horizon * output_size`` (for models that return a hidden state)."""
        return nn.Linear(self.hidden_size, self.horizon * self.output_size)

    def readout_hidden(self, h: Tensor) -> Tensor:
        """Hidden state ``[b, n, hidden]`` -> ``[b, horizon, n, output_size]`` (ReLU, then linear)."""
        return output_to_tsl(self.readout(F.relu(h)), "B N (H O)", self.horizon, self.output_size)

    def check_inputs(self, x: Tensor, edge_index, edge_weight: Optional[Tensor], u: Optional[Tensor]
                     ) -> Tuple[Tensor, Tensor, Optional[Tensor]]:
        """Validate; returns ``(edge_index, edge_weight [E] (ones if None), u)``."""
        if not isinstance(x, Tensor) or x.dim() != 4:
            shape = tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__
            raise ValueError(f"x must be [batch, time, nodes, features], got {shape}.")
        b, t, n, f = x.shape
        if f != self.input_size or (self.fixed_window and t != self.window):
            hint = layout_hint(tuple(x.shape), self)  # a PyG Temporal layout passed where ours is expected
            if f != self.input_size:
                raise ValueError(f"x has {f} features but the model was built with input_size={self.input_size}."
                                 f"{hint}")
            raise ValueError(f"x has {t} steps but the model was built with window={self.window}.{hint}")
        if self.n_nodes is not None and n != self.n_nodes:
            raise ValueError(f"x has {n} nodes but the model was built with n_nodes={self.n_nodes}.")
        edge_index, edge_weight = as_edge_index(edge_index, edge_weight)
        check_edge_index(edge_index, n, edge_weight)
        if edge_weight is None:
            edge_weight = torch.ones(edge_index.size(1), dtype=x.dtype, device=x.device)
        if self.exog_size == 0:
            if u is not None:
                raise ValueError("u was given but the model was built with exog_size=0.")
        else:
            if u is None or u.dim() not in (3, 4) or u.shape[:2] != (b, t) or u.size(-1) != self.exog_size:
                shape = None if u is None else tuple(u.shape)
                raise ValueError(f"u must be [{b}, {t}, {self.exog_size}] or [{b}, {t}, {n}, {self.exog_size}], "
                                 f"got {shape}.")
        return edge_index, edge_weight.to(x.dtype), u

    def forward(self, x: Tensor, edge_index, edge_weight: Optional[Tensor] = None,
                u: Optional[Tensor] = None) -> Tensor:
        edge_index, edge_weight, u = self.check_inputs(x, edge_index, edge_weight, u)
        return self.core(x, edge_index, edge_weight, u)

    def core(self, x: Tensor, edge_index: Tensor, edge_weight: Tensor, u: Optional[Tensor]) -> Tensor:
        raise NotImplementedError  # pragma: no cover

    def reset_parameters(self) -> None:
        for m in self.modules():
            if m is not self and hasattr(m, "reset_parameters"):
                m.reset_parameters()

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(input_size={self.input_size}, output_size={self.output_size}, "
                f"horizon={self.horizon}, hidden_size={self.hidden_size}, wraps="
                f"torch_geometric_temporal.nn.{self.wrapped})")


# --------------------------------------------------------------------- whole-sequence models
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


def target_major(edge_index: Tensor, edge_weight: Tensor) -> Tuple[Tensor, Tensor]:
    """Edges sorted by (target, source). PyG Temporal 0.56.2's ``DConv`` / ``BatchedDConv`` compute
    the backward-diffusion norms in the given edge order but apply them to the reversed edges in
    target-major order, so they only line up when the edges come sorted that way (PyG's
    ``dense_to_sparse`` and PyG Temporal's own METR-LA loader give source-major order)."""
    return sort_edge_index(edge_index, edge_weight, sort_by_row=False)


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


#: ``pygt:`` zoo name -> wrapper class. Keep in sync with ``namespaces.PYGT_NAMES`` (a test checks).
PYGT_MODELS: Dict[str, Type[PyGTModel]] = {
    "A3TGCN2": A3TGCN2Model,
    "AGCRN": AGCRNModel,
    "ASTGCN": ASTGCNModel,
    "BatchedDCRNN": BatchedDCRNNModel,
    "DCRNN": DCRNNModel,
    "GCLSTM": GCLSTMModel,
    "GConvGRU": GConvGRUModel,
    "GConvLSTM": GConvLSTMModel,
    "GMAN": GMANModel,
    "MTGNN": MTGNNModel,
    "STConv": STGCNModel,
    "TGCN": TGCNModel,
    "TGCN2": TGCN2Model,
}


#: PyG Temporal 0.56.2 models that are not in the zoo, and why.
NOT_WRAPPED: Dict[str, str] = {
    "MSTGCN": "broken: MSTGCNBlock reshapes [F, B, N, T] straight to [N, F, T * B] (a reshape, not a "
              "permute), mixing samples, nodes and channels whenever batch > 1 or channels > 1",
    "A3TGCN": "single-sample version of A3TGCN2 (wrapped)",
    "EvolveGCNH": "keeps its evolved weight on the module between calls (state leaks across batches); "
                  "output width = input width",
    "EvolveGCNO": "keeps its evolved weight on the module between calls (state leaks across batches)",
    "LRGCN": "relational: needs edge types",
    "DyGrEncoder": "dynamic-graph encoder over single snapshots with an LSTM on one feature stream; "
                   "no forecasting head",
    "MPNNLSTM": "reads a flattened stack of `window` snapshots with a fixed node count (its own layout)",
    "AAGCN": "skeleton action recognition: edge_index fixed at construction, input [N, C, T, V]",
    "DNNTSP": "next-basket set prediction on item embeddings",
    "HeteroGCLSTM": "heterogeneous graphs",
}


def build_pygt_model(name: str, **kwargs) -> PyGTModel:
    """Build the wrapper of PyG Temporal model ``name`` (see :data:`PYGT_MODELS`)."""
    if name not in PYGT_MODELS:
        raise ValueError(f"no PyG Temporal wrapper named {name!r}; available: {sorted(PYGT_MODELS)}")
    return PYGT_MODELS[name](**kwargs)
