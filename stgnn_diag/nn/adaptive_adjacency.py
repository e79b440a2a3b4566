"""Learned (Graph-WaveNet-style) adjacency from node embeddings."""
from __future__ import annotations

import torch
from torch import Tensor, nn


class AdaptiveAdjacency(nn.Module):
    r"""``A = softmax(relu(E_1 E_2^T), dim=1)``, a dense row-stochastic adjacency ``[n, n]``.

    ``A[v, w]`` is the weight with which node ``v`` sends to node ``w`` (same direction convention
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

    def forward(self, num_nodes: int | None = None) -> Tensor:
        if num_nodes is not None and num_nodes != self.num_nodes:
            raise ValueError(f"The adaptive adjacency was built for {self.num_nodes} nodes, "
                             f"the input has {num_nodes}.")
        return torch.softmax(torch.relu(self.source @ self.target.T), dim=1)
