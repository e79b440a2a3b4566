"""Per-node read-out of a whole window: flatten the steps, project, residual MLP, one linear map to all
horizon steps (STID, Shao et al., CIKM 2022; STAEformer's output layer)."""
from __future__ import annotations

from torch import Tensor, nn


class WindowSummary(nn.Module):
    """One linear map of each node's whole window ``T x D -> H``.

    Shapes:
        ``[b, T, N, D]`` -> ``[b, N, H]``.
    """

    def __init__(self, window: int, dim: int, out_size: int):
        super().__init__()
        self.window, self.dim = window, dim
        self.lin = nn.Linear(window * dim, out_size)

    def forward(self, h: Tensor) -> Tensor:
        b, t, n, d = h.shape
        return self.lin(h.permute(0, 2, 1, 3).reshape(b, n, t * d))


class ResidualMLP(nn.Module):
    """``h + W_2 Drop(ReLU(W_1 h))`` (STID's encoder layer).

    Shapes:
        ``[*, H]`` -> ``[*, H]``.
    """

    def __init__(self, dim: int, dropout: float = 0.0):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.act, self.drop = nn.ReLU(), nn.Dropout(dropout)

    def forward(self, h: Tensor) -> Tensor:
        return h + self.fc2(self.drop(self.act(self.fc1(h))))


class HorizonHead(nn.Module):
    """Residual MLP layers, then one linear map ``H -> horizon x out`` per node.

    Shapes:
        ``[b, N, H]`` -> ``[b, horizon, N, out]``.
    """

    def __init__(self, dim: int, horizon: int, out_size: int, mlp_layers: int = 2, dropout: float = 0.0):
        super().__init__()
        self.horizon, self.out_size = horizon, out_size
        self.mlp = nn.Sequential(*[ResidualMLP(dim, dropout) for _ in range(mlp_layers)])
        self.out = nn.Linear(dim, horizon * out_size)

    def forward(self, z: Tensor) -> Tensor:
        b, n, _ = z.shape
        y = self.out(self.mlp(z)).view(b, n, self.horizon, self.out_size)
        return y.transpose(1, 2)
