"""Learned (Graph-WaveNet-style) adjacency from node embeddings."""
from __future__ import annotations

import torch
from torch import Tensor, nn


class AdaptiveAdjacency(nn.Module):
    r"""A dense row-stochastic adjacency ``[n, n]`` learned from two node embeddings (Graph WaveNet's).

    ``A = softmax(relu(E_1 E_2^T), dim=1)``. ``A[v, w]`` is the weight with which node ``v`` sends to node ``w`` (same direction convention
    as a dense adjacency elsewhere in stgnn_diag). Unlike the diagonal-sink paper's published code,
    whose einsum keeps only ``diag(A)``, users of this module propagate with the full matrix.

    Args:
        num_nodes: number of nodes ``n``.
        emb_size: embedding size.

    Shapes:
        output: ``[n, n]``.
    """

    def __init__(self, num_nodes: int, emb_size: int = 10):
        super().__init__()
        self.num_nodes = num_nodes
        self.source = nn.Parameter(torch.empty(num_nodes, emb_size))
        self.target = nn.Parameter(torch.empty(num_nodes, emb_size))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.normal_(self.source)
        nn.init.normal_(self.target)

    def _check(self, num_nodes: int | None) -> None:
        if num_nodes is not None and num_nodes != self.num_nodes:
            raise ValueError(f"The adaptive adjacency was built for {self.num_nodes} nodes, "
                             f"the input has {num_nodes}.")

    def forward(self, num_nodes: int | None = None) -> Tensor:
        self._check(num_nodes)
        return torch.softmax(torch.relu(self.source @ self.target.T), dim=1)


class LowRankAdjacency(AdaptiveAdjacency):
    r"""A row-stochastic adjacency of rank at most ``emb_size``, applied without forming the ``[n, n]`` matrix.

    ``A[v, w] = phi(e_v) phi(f_w)^T / sum_w' phi(e_v) phi(f_w')^T`` with ``phi = softplus``, which
    :meth:`propagate` applies through its two ``[n, r]`` factors: linear in the nodes.

    Same direction convention and parameters as :class:`AdaptiveAdjacency`. Propagating ``A^T x`` (what
    node ``w`` receives) costs ``2 n r F`` instead of ``n^2 F``: at METR-LA's 207 nodes and ``r = 10``,
    about a tenth of the product with the dense matrix.

    Shapes:
        output: ``[n, n]``; :meth:`factors`: two ``[n, r]``; :meth:`propagate`: ``[n, F]`` -> ``[n, F]``.
    """

    def factors(self, num_nodes: int | None = None) -> tuple:
        """``(L, R)`` with ``A = L @ R.T``: ``L = phi(E_1) / z`` (``z_v``: row sums), ``R = phi(E_2)``."""
        self._check(num_nodes)
        left, right = nn.functional.softplus(self.source), nn.functional.softplus(self.target)
        z = left @ right.sum(0, keepdim=True).T  # [n, 1]: sum over w of phi(e_v) . phi(f_w)
        return left / z, right

    def forward(self, num_nodes: int | None = None) -> Tensor:
        left, right = self.factors(num_nodes)
        return left @ right.T

    def propagate(self, x: Tensor, add: Tensor | None = None) -> Tensor:
        """``A^T x`` (plus ``add``) for ``x [n, F]``: ``R (L^T x)``."""
        left, right = self.factors(x.size(0))
        inner = left.T @ x  # [r, F]
        return right @ inner if add is None else torch.addmm(add, right, inner)
