"""Shared encoder, read-out and input checks of the attention-based spatio-temporal models."""
from __future__ import annotations

from typing import Optional, Tuple, Union

import torch
import torch.utils.checkpoint
from torch import Tensor, nn

from ..nn import PositionalEncoding
from ..calendar import check_calendar
from ..nn.reset import reset_children
from .inputs import check_inputs
from .options import check_option
from .sublayers import GraphSublayer, TemporalSublayer, make_activation, make_graph_conv

EXOG_MODES = ("input", "blocks")


class STAttentionBase(nn.Module):
    """Encoder -> spatio-temporal layers -> read-out, following the tsl model contract.

    Subclasses implement :meth:`process`. The three stages are public so the sensitivity tools can
    differentiate w.r.t. the encoded input (``encode``), as in the over-squashing paper.

    Args:
        input_size: input channels per node and step.
        output_size: output channels (default: ``input_size``).
        horizon: number of predicted steps.
        n_nodes: number of nodes; when given the input is checked against it (needed for
            ``adaptive=True``).
        hidden_size: width ``d`` of every layer.
        exog_size: channels of the exogenous covariates ``u`` (0: none).
        window: number of input steps the model reads (fixed: the read-out maps time ``window ->
            horizon``).
        pos_encoding: ``"sinusoidal"``, ``"tape"``, ``"learned"`` or ``"none"``.
        exog_mode: ``"input"`` (covariates added once to the encoding) or ``"blocks"`` (a linear
            map of the covariates added in every sub-layer, as in the paper's reference model).
        dropout: dropout after the encoding and on each sub-layer's output.
        activation: activation after each graph convolution and in the read-out.
        heads: attention heads per temporal layer.
        diag, diag_p, diag_penalty, learn_penalty, residual, causal: passed to every
            :class:`~stgnn_diag.nn.TemporalAttention` (see there; ``residual=False`` is variant (a)).
        attn_dropout: dropout on the attention weights.
        graph_conv: ``"diffusion"`` (DCRNN-style, K hops both directions) or ``"gcn"``.
        k: diffusion hops.
        adaptive: add a learned adjacency to the diffusion convolution (needs n_nodes): ``True`` /
            ``"softmax"`` (Graph WaveNet's) or ``"lowrank"`` (:class:`~stgnn_diag.nn.LowRankAdjacency`).
        emb_size: node-embedding size of the adaptive adjacency.
        checkpoint_blocks: in training, recompute each block's activations in the backward pass instead of
            keeping them (``torch.utils.checkpoint``, non-reentrant, random state preserved so dropout masks
            repeat): memory holds one block's activations at a time, for the price of one more forward pass.
            The same outputs and gradients either way.

    Shapes:
        - x: ``[batch, window, nodes, input_size]``
        - edge_index: ``[2, E]`` (source, target), or a SparseTensor ``adj_t``; edge_weight ``[E]``
        - u: ``[batch, window, exog_size]`` or ``[batch, window, nodes, exog_size]``
        - output: ``[batch, horizon, nodes, output_size]``
    """

    def __init__(self, input_size: int, output_size: Optional[int] = None, horizon: int = 12,
                 n_nodes: Optional[int] = None, hidden_size: int = 64, exog_size: int = 0,
                 window: int = 12, pos_encoding: str = "sinusoidal", exog_mode: str = "input",
                 dropout: float = 0.0, activation: str = "relu", heads: int = 4, diag: str = "none",
                 diag_p: float = 0.0, diag_penalty: float = 0.0, learn_penalty: bool = False,
                 residual: bool = True, causal: bool = False, attn_dropout: float = 0.0,
                 graph_conv: str = "diffusion", k: int = 2, adaptive: Union[bool, str] = False, emb_size: int = 10,
                 node_embedding: bool = False, tod_embedding: int = 0, checkpoint_blocks: bool = False):
        super().__init__()
        for name, value in dict(input_size=input_size, output_size=output_size, horizon=horizon, n_nodes=n_nodes,
                                hidden_size=hidden_size, exog_size=exog_size, window=window, heads=heads,
                                emb_size=emb_size, tod_embedding=tod_embedding).items():
            check_option(name, value)  # the kinds ForecasterOptions declares for these names
        if exog_mode not in EXOG_MODES:
            raise ValueError(f"Unknown exog_mode {exog_mode!r}; choose one of {EXOG_MODES}.")
        if node_embedding and n_nodes is None:
            raise ValueError("node_embedding=True needs n_nodes (one learned vector per node).")
        if tod_embedding and exog_size == 0:
            raise ValueError(f"tod_embedding={tod_embedding} needs exog_size >= 1 (channel 0 of u is the time "
                             f"of day); use 0 to switch it off.")
        self.input_size, self.output_size = input_size, output_size or input_size
        self.horizon, self.n_nodes, self.hidden_size = horizon, n_nodes, hidden_size
        self.exog_size, self.window, self.exog_mode = exog_size, window, exog_mode
        self.encoder = nn.Linear(input_size, hidden_size)
        self.exog_encoder = nn.Linear(exog_size, hidden_size) if exog_size and exog_mode == "input" else None
        self.pos_encoding = PositionalEncoding(hidden_size, window, pos_encoding)
        self.node_emb = nn.Parameter(torch.empty(n_nodes, hidden_size)) if node_embedding else None
        self.tod_emb = nn.Embedding(tod_embedding, hidden_size) if tod_embedding else None
        self._init_node_embedding()
        self.dropout = nn.Dropout(dropout)
        self.time_readout = nn.Linear(window, horizon)
        self.readout = nn.Sequential(make_activation(activation), nn.Linear(hidden_size, self.output_size))
        self._attn_kwargs = dict(diag=diag, diag_p=diag_p, diag_penalty=diag_penalty, learn_penalty=learn_penalty,
                                 residual=residual, causal=causal, dropout=attn_dropout)
        self._graph_kwargs = dict(kind=graph_conv, k=k, n_nodes=n_nodes, adaptive=adaptive, emb_size=emb_size)
        self._heads, self._dropout_p, self._activation = heads, dropout, activation
        self.checkpoint_blocks = bool(checkpoint_blocks)

    def _init_node_embedding(self) -> None:
        if self.node_emb is not None:
            nn.init.xavier_uniform_(self.node_emb)

    # --- helpers for subclasses -------------------------------------------------------------
    def run_block(self, block, h: Tensor) -> Tensor:
        """``block(h)``, under activation checkpointing when built with ``checkpoint_blocks=True`` and training
        with gradients."""
        if self.checkpoint_blocks and self.training and torch.is_grad_enabled():
            return torch.utils.checkpoint.checkpoint(block, h, use_reentrant=False)
        return block(h)

    def make_condition(self) -> Optional[nn.Module]:
        """A covariate map ``exog_size -> hidden`` for one sub-layer in ``"blocks"`` mode, else None."""
        if self.exog_size and self.exog_mode == "blocks":
            return nn.Linear(self.exog_size, self.hidden_size)
        return None

    def temporal_sublayer(self) -> TemporalSublayer:
        """A new ``LN(TA(x) + cond)`` sub-layer with this model's attention settings."""
        return TemporalSublayer(self.hidden_size, self._heads, out_dropout=self._dropout_p, **self._attn_kwargs)

    def graph_sublayer(self) -> GraphSublayer:
        """A new ``LN(x + Drop(act(GC(x))) + cond)`` sub-layer with this model's graph settings."""
        conv = make_graph_conv(dim=self.hidden_size, **self._graph_kwargs)
        return GraphSublayer(self.hidden_size, conv, activation=self._activation, dropout=self._dropout_p)

    @staticmethod
    def condition(cond: nn.Module, u: Optional[Tensor]) -> Optional[Tensor]:
        """Apply a sub-layer's covariate map (``nn.Identity`` placeholder: no conditioning)."""
        return None if isinstance(cond, nn.Identity) or u is None else cond(u)

    # --- input checks -------------------------------------------------------------------------
    def check_inputs(self, x: Tensor, edge_index, edge_weight: Optional[Tensor], u: Optional[Tensor]
                     ) -> Tuple[Tensor, Optional[Tensor], Optional[Tensor]]:
        """Validate the inputs; returns ``(edge_index, edge_weight, u [b, t, n, exog])``."""
        return check_inputs(self, x, edge_index, edge_weight, u)

    # --- the three stages -----------------------------------------------------------------------
    def encode(self, x: Tensor, u: Optional[Tensor] = None) -> Tensor:
        """``[b, t, n, input_size]`` -> first hidden representation ``[b, t, n, hidden]``."""
        h = self.encoder(x)
        if self.exog_encoder is not None:
            h = h + self.exog_encoder(u)
        if self.node_emb is not None:
            h = h + self.node_emb.to(h.dtype)
        if self.tod_emb is not None:
            check_calendar(u, tod=True, dow=False)
            slots = self.tod_emb.num_embeddings
            slot = (u[..., 0].detach() * slots).round().long().clamp_(0, slots - 1)  # [b, t, n]
            h = h + self.tod_emb(slot).to(h.dtype)
        return self.dropout(self.pos_encoding(h))

    def process(self, h: Tensor, edge_index: Tensor, edge_weight: Optional[Tensor] = None,
                u: Optional[Tensor] = None) -> Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def decode(self, h: Tensor) -> Tensor:
        """``[b, window, n, hidden]`` -> ``[b, horizon, n, output_size]`` (time map, then features)."""
        h = self.time_readout(h.transpose(1, -1)).transpose(1, -1)
        return self.readout(h)

    def forward(self, x: Tensor, edge_index, edge_weight: Optional[Tensor] = None,
                u: Optional[Tensor] = None) -> Tensor:
        edge_index, edge_weight, u = self.check_inputs(x, edge_index, edge_weight, u)
        h = self.encode(x, u)
        h = self.process(h, edge_index, edge_weight, u)
        return self.decode(h)

    def reset_parameters(self) -> None:
        """Restore a fresh model's initialisation (see :func:`~stgnn_diag.nn.reset.reset_children`)."""
        reset_children(self)
        self._init_node_embedding()
