"""DCRNN-style diffusion convolution as a PyG ``MessagePassing`` layer on ``[b, t, n, f]``."""
from __future__ import annotations

import warnings
from typing import List, Optional, Tuple

import torch
from torch import Tensor, nn
from torch.nn import functional as F
from torch_geometric.nn import MessagePassing

from .adaptive_adjacency import AdaptiveAdjacency, LowRankAdjacency
from .graph_utils import as_edge_index, check_edge_index, random_walk_weights
from .transforms import functorch_active


PROPAGATIONS = ("auto", "csr", "dense", "scatter")
#: Learned adjacencies: Graph WaveNet's ``softmax(relu(E_1 E_2^T))``, or its rank-``emb_size`` counterpart.
ADAPTIVE_KINDS = {"softmax": AdaptiveAdjacency, "lowrank": LowRankAdjacency}


class DiffusionConv(MessagePassing):
    r"""Diffusion convolution (Li et al., DCRNN, ICLR 2018) with optional adaptive adjacency.

    .. math::
        X' = X W_0 + \sum_{k=1}^{K} \big(P_f^k X W_{f,k} + P_b^k X W_{b,k}\big)
             \; [+ \sum_{k=1}^{K} \tilde A^k X W_{a,k}]

    with the forward random-walk support ``P_f = (D_O^{-1} A)^T`` (messages along the edges,
    weights divided by the source's out-degree) and the backward support ``P_b = (D_I^{-1} A^T)^T``
    (messages against the edges). See :mod:`stgnn_diag.nn.graph_utils` for the edge-direction
    convention. With ``adaptive_nodes`` set, K hops over a learned adjacency are added (really
    propagated, node to node): Graph WaveNet's ``softmax(relu(E_1 E_2^T))`` or a low-rank one
    (:class:`~stgnn_diag.nn.adaptive_adjacency.LowRankAdjacency`, applied without forming ``[n, n]``).

    Args:
        in_channels: input features ``f``.
        out_channels: output features.
        k: diffusion hops K (>= 1).
        root_weight: include the ``X W_0`` term.
        bidirectional: include the backward support.
        adaptive_nodes: number of nodes for a learned adjacency (None: no adaptive support).
        emb_size: node-embedding size of the adaptive adjacency.
        adaptive_kind: ``"softmax"`` (Graph WaveNet) or ``"lowrank"``.
        bias: add a bias.
        dense_max_nodes: with ``propagation="auto"`` off the CPU (or under ``torch.func``), up to
            this many nodes propagate with a dense ``[n, n]`` support; above it, PyG's gather/scatter.
        propagation: ``"auto"`` (sparse CSR products on the CPU, else as ``dense_max_nodes`` says),
            ``"csr"``, ``"dense"`` or ``"scatter"`` (PyG's ``propagate``). All give the same result.

    Shapes:
        - x: ``[*, nodes, in_channels]`` (e.g. ``[batch, time, nodes, in_channels]``)
        - edge_index: ``[2, E]`` (or a SparseTensor ``adj_t``), edge_weight: ``[E]`` or None
        - output: ``[*, nodes, out_channels]``
    """

    def __init__(self, in_channels: int, out_channels: int, k: int = 2, root_weight: bool = True,
                 bidirectional: bool = True, adaptive_nodes: Optional[int] = None, emb_size: int = 10,
                 bias: bool = True, dense_max_nodes: int = 2048, propagation: str = "auto",
                 adaptive_kind: str = "softmax"):
        super().__init__(aggr="add", node_dim=-2)
        if propagation not in PROPAGATIONS:
            raise ValueError(f"Unknown propagation {propagation!r}; choose one of {PROPAGATIONS}.")
        self.dense_max_nodes, self.propagation = dense_max_nodes, propagation
        self._support_cache = None
        if k < 1:
            raise ValueError(f"k (diffusion hops) must be >= 1, got {k}.")
        self.in_channels, self.out_channels, self.k = in_channels, out_channels, k
        self.root_weight, self.bidirectional = root_weight, bidirectional
        if adaptive_kind not in ADAPTIVE_KINDS:
            raise ValueError(f"Unknown adaptive_kind {adaptive_kind!r}; choose one of {tuple(ADAPTIVE_KINDS)}.")
        self.adaptive = ADAPTIVE_KINDS[adaptive_kind](adaptive_nodes, emb_size) if adaptive_nodes else None
        n_supports = (2 if bidirectional else 1) + (1 if self.adaptive is not None else 0)
        self.lin = nn.Linear(in_channels * (k * n_supports + int(root_weight)), out_channels, bias=bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.lin.reset_parameters()
        if self.adaptive is not None:
            self.adaptive.reset_parameters()

    def _support(self, edge_index: Tensor, weight: Tensor, n: int, x: Tensor) -> Optional[Tensor]:
        """The propagation matrix ``S[target, source]`` ``[n, n]`` for ``x``: sparse CSR on the CPU
        outside ``torch.func`` transforms and ``torch.compile``, dense up to ``dense_max_nodes`` nodes, else
        None (PyG's gather / scatter ``propagate``).

        On a sparse sensor graph a CSR product touches only the edges, where a dense product touches all
        ``n^2`` entries and ``propagate()`` broadcasts the edge index to the whole message tensor; dense
        products are what ``torch.func`` (vmap / jvp) can trace. ``benchmarks/bench_speed_cost.py`` prints
        the figures.
        """
        mode = self.propagation
        if mode == "auto":
            plain_cpu = x.device.type == "cpu" and not functorch_active() and not torch.compiler.is_compiling()
            mode = "csr" if plain_cpu else "dense" if n <= self.dense_max_nodes else "scatter"
        if mode == "csr":
            idx = torch.stack([edge_index[1], edge_index[0]])
            coo = torch.sparse_coo_tensor(idx, weight.to(x.dtype), (n, n), device=x.device, check_invariants=False)
            with warnings.catch_warnings():  # "Sparse CSR tensor support is in beta state"
                warnings.simplefilter("ignore", UserWarning)
                return coo.coalesce().to_sparse_csr()
        if mode == "dense":
            support = torch.zeros(n, n, dtype=x.dtype, device=x.device)
            support.index_put_((edge_index[1], edge_index[0]), weight.to(x.dtype), accumulate=True)
            return support
        return None

    def supports(self, edge_index: Tensor, edge_weight: Optional[Tensor], x: Tensor
                 ) -> List[Tuple[Tensor, Tensor, Optional[Tensor]]]:
        """``(edge_index, weights, propagation matrix or None)`` of each fixed support (forward, then
        backward when bidirectional), cached for the last graph seen while its tensors are unchanged
        and the weights need no gradient (the same graph on every call is the common case). Inside
        ``torch.compile`` they are part of the graph (no cache: the compiler keeps what it can)."""
        n = x.size(-2)
        cache = not torch.compiler.is_compiling() and (edge_weight is None or not edge_weight.requires_grad)
        if cache:  # compared by identity, then their in-place versions and the call
            graph = (edge_index, edge_weight)
            key = (edge_index._version, None if edge_weight is None else edge_weight._version, n, x.dtype,
                   x.device, functorch_active())
            cached = self._support_cache
            if cached is not None and cached[0][0] is edge_index and cached[0][1] is edge_weight \
                    and cached[1] == key:
                return cached[2]
        out = []
        directions = [edge_index, edge_index.flip(0)] if self.bidirectional else [edge_index]
        for ei in directions:
            w = random_walk_weights(ei, edge_weight, n)
            out.append((ei, w, self._support(ei, w, n, x)))
        if cache:
            self._support_cache = (graph, key, out)
        return out

    def _diffuse(self, x: Tensor, edge_index: Tensor, weight: Tensor, support: Optional[Tensor]) -> List[Tensor]:
        if support is not None:
            return self._dense_hops(x, support)
        hops, h = [], x
        for _ in range(self.k):
            h = self.propagate(edge_index, x=h, edge_weight=weight)
            hops.append(h)
        return hops

    def _dense_hops(self, x: Tensor, support: Tensor) -> List[Tensor]:
        """K hops ``S^k x`` for a support ``[n, n]`` (dense or CSR) on ``x [*, n, f]`` (node-major GEMMs)."""
        h = x.movedim(-2, 0)  # [n, *, f]
        lead = h.shape
        h, hops = h.reshape(lead[0], -1), []
        for _ in range(self.k):
            h = self.message_and_aggregate(support, h)
            hops.append(h.view(lead).movedim(0, -2))
        return hops

    def message_and_aggregate(self, support: Tensor, x: Tensor) -> Tensor:
        """Fused message passing with a support ``[n, n]`` (rows = targets, dense or CSR) on ``x [n, F]``."""
        return support @ x

    def forward(self, x: Tensor, edge_index, edge_weight: Optional[Tensor] = None) -> Tensor:
        edge_index, edge_weight = as_edge_index(edge_index, edge_weight)
        n = x.size(-2)
        check_edge_index(edge_index, n, edge_weight)
        fixed = self.supports(edge_index, edge_weight, x)
        mats = [s for _, _, s in fixed]
        if self.adaptive is not None:  # a[v, w]: v sends to w, i.e. support[w, v]; a low-rank one applies itself
            low_rank = isinstance(self.adaptive, LowRankAdjacency)
            mats.append(self.adaptive if low_rank else self.adaptive(n).T)
        if all(m is not None for m in mats):
            return self._weights_first(x, mats)
        out = [x] if self.root_weight else []
        for ei, w, support in fixed:
            out += self._diffuse(x, ei, w, support)
        if self.adaptive is not None:
            out += self._dense_hops(x, self.adaptive(n).T if low_rank else mats[-1])
        return self.lin(torch.cat(out, dim=-1))

    def _weights_first(self, x: Tensor, mats: List[Tensor]) -> Tensor:
        r"""``X W_0 + sum_S sum_k S^k X W_{S,k}`` as ``S (X W_1 + S (X W_2 + ...))`` (Horner), node-major.

        The same map as ``lin(cat([X, S X, S^2 X, ...]))`` with the same parameters, without
        materialising the ``(1 + K * supports)``-times wider concatenation: on the CPU, at T&S's
        ``[32, 12, 207, 32]``, the concatenation and its copies cost more than the products.

        Shapes:
            x ``[*, n, in]``, each support ``[n, n]`` (dense or CSR, rows = targets) or a
            :class:`~stgnn_diag.nn.adaptive_adjacency.LowRankAdjacency` -> ``[*, n, out]``.
        """
        n, d_in, d_out = x.size(-2), self.in_channels, self.out_channels
        xn = x.movedim(-2, 0)
        lead = xn.shape[:-1]
        xf = xn.reshape(-1, d_in)  # [n * rest, in], node-major
        w = self.lin.weight.view(d_out, -1, d_in)  # blocks [root, S_1 hops 1..K, S_2 hops 1..K, ...]
        bias = self.lin.bias

        def proj(i: int, b: Optional[Tensor] = None) -> Tensor:
            return F.linear(xf, w[:, i], b).view(n, -1)  # [n, rest * out]

        # each "y + S @ acc" is one addmm: for a CSR support, "S @ acc" alone first zero-fills a new output and
        # the sum then makes another pass over it
        i = 0
        total = None
        if self.root_weight:
            total, i, bias = proj(0, bias), 1, None
        for support in mats:
            acc = proj(i + self.k - 1)
            for j in range(self.k - 2, -1, -1):
                acc = _hop(support, acc, proj(i + j))
            total = _hop(support, acc, total)
            i += self.k
        out = total.view(*lead, d_out)
        if bias is not None:
            out = out + bias
        return out.movedim(0, -2)

    def message(self, x_j: Tensor, edge_weight: Tensor) -> Tensor:
        return edge_weight.view(-1, 1) * x_j

    def __repr__(self) -> str:
        extra = ", adaptive" if self.adaptive is not None else ""
        return f"{self.__class__.__name__}({self.in_channels}, {self.out_channels}, k={self.k}{extra})"


def _hop(support, x: Tensor, add: Optional[Tensor] = None) -> Tensor:
    """``add + S x`` (``S x`` when ``add`` is None) for a support ``[n, n]`` (dense or CSR) or a low-rank adjacency."""
    if isinstance(support, LowRankAdjacency):
        return support.propagate(x, add)
    return support @ x if add is None else torch.addmm(add, support, x)
