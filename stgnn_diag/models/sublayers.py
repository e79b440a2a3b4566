"""The two sub-layers the T&S and TTS models are stacked from (post-LayerNorm, as in the paper)."""
from __future__ import annotations

from typing import Optional, Union

from torch import Tensor, nn
from torch_geometric.nn import GCNConv

from ..nn import DiffusionConv, TemporalAttention

GRAPH_CONVS = ("diffusion", "gcn")
ADAPTIVE = (False, True, "softmax", "lowrank")
ACTIVATIONS = {"none": nn.Identity, "relu": nn.ReLU, "gelu": nn.GELU, "elu": nn.ELU}


def make_graph_conv(kind: str, dim: int, *, k: int = 2, n_nodes: Optional[int] = None,
                    adaptive: Union[bool, str] = False, emb_size: int = 10) -> nn.Module:
    """A graph convolution ``dim -> dim`` on ``[b, t, n, dim]``: ``"diffusion"`` or ``"gcn"``.

    ``adaptive``: a learned adjacency beside the graph's (diffusion only): ``False``, ``True`` / ``"softmax"``
    (Graph WaveNet's) or ``"lowrank"`` (:class:`~stgnn_diag.nn.LowRankAdjacency`).
    """
    if adaptive not in ADAPTIVE:
        raise ValueError(f"adaptive must be one of {ADAPTIVE}, got {adaptive!r}.")
    if kind == "diffusion":
        if adaptive and n_nodes is None:
            raise ValueError(f"adaptive={adaptive!r} needs n_nodes (the adjacency is learned per node).")
        return DiffusionConv(dim, dim, k=k, adaptive_nodes=n_nodes if adaptive else None, emb_size=emb_size,
                             adaptive_kind=adaptive if isinstance(adaptive, str) else "softmax")
    if kind == "gcn":
        if adaptive:
            raise ValueError(f"adaptive={adaptive!r} is available with graph_conv='diffusion' only.")
        return GCNConv(dim, dim)
    raise ValueError(f"Unknown graph_conv {kind!r}; choose one of {GRAPH_CONVS}.")


def make_activation(name: str) -> nn.Module:
    if name not in ACTIVATIONS:
        raise ValueError(f"Unknown activation {name!r}; choose one of {tuple(ACTIVATIONS)}.")
    return ACTIVATIONS[name]()


class TemporalSublayer(nn.Module):
    """``LN(TA(x) + cond(u))`` where ``TA`` holds the residual (or not: variant (a)).

    Shapes:
        x ``[b, t, n, d]``, cond ``[b, t, n, d]`` or None -> ``[b, t, n, d]``.
    """

    def __init__(self, dim: int, heads: int, out_dropout: float = 0.0, **attn_kwargs):
        super().__init__()
        self.attention = TemporalAttention(dim, heads, out_dropout=out_dropout, **attn_kwargs)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: Tensor, cond: Optional[Tensor] = None) -> Tensor:
        h = self.attention(x)
        return self.norm(h if cond is None else h + cond)


class GraphSublayer(nn.Module):
    """``LN(x + Drop(act(GC(x))) + cond(u))`` with a graph convolution over the sensor graph.

    Shapes:
        x ``[b, t, n, d]``, edge_index ``[2, E]``, edge_weight ``[E]`` -> ``[b, t, n, d]``.
    """

    def __init__(self, dim: int, conv: nn.Module, activation: str = "relu", dropout: float = 0.0):
        super().__init__()
        self.conv = conv
        self.act = make_activation(activation)
        self.dropout = nn.Dropout(dropout)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: Tensor, edge_index, edge_weight: Optional[Tensor] = None,
                cond: Optional[Tensor] = None) -> Tensor:
        h = x + self.dropout(self.act(self.conv(x, edge_index, edge_weight)))
        return self.norm(h if cond is None else h + cond)


class FeedForward(nn.Module):
    """``LN(x + W_2 Drop(act(W_1 x)))``: the position-wise feed-forward sub-layer (post-LN).

    Shapes:
        ``[*, d]`` -> ``[*, d]``.
    """

    def __init__(self, dim: int, hidden: int, activation: str = "gelu", dropout: float = 0.0):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, hidden), nn.Linear(hidden, dim)
        self.act, self.drop = make_activation(activation), nn.Dropout(dropout)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: Tensor) -> Tensor:
        return self.norm(x + self.drop(self.fc2(self.act(self.fc1(x)))))


class TemporalBlock(nn.Module):
    """A temporal attention sub-layer ``LN(TA(x))`` followed by a feed-forward sub-layer (or none).

    ``sublayer_dropout`` acts on each sub-layer's output; ``attn_kwargs`` go to
    :class:`~stgnn_diag.nn.TemporalAttention` (its ``dropout`` is on the attention weights).

    Shapes:
        ``[b, t, n, d]`` -> ``[b, t, n, d]``.
    """

    def __init__(self, dim: int, heads: int, ffn_size: int, sublayer_dropout: float = 0.0, **attn_kwargs):
        super().__init__()
        self.attention = TemporalSublayer(dim, heads, out_dropout=sublayer_dropout, **attn_kwargs)
        self.ffn = FeedForward(dim, ffn_size, dropout=sublayer_dropout) if ffn_size else None

    def forward(self, x: Tensor) -> Tensor:
        h = self.attention(x)
        return h if self.ffn is None else self.ffn(h)
