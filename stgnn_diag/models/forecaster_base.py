"""Shared embedding, layer factories and window read-out of the forecaster family (``tas_attn_*``,
``tts_attn_*``): diagonal-regularized temporal attention with a graph convolution on the sensor graph."""
from __future__ import annotations

from typing import Optional, Tuple, Union

from torch import Tensor, nn

from .embeddings import CalendarNodeEmbedding, STEmbedding, fill_missing
from .inputs import check_inputs, check_mask, check_sizes, reset_children
from .seasonal_fallback import SeasonalFallback
from .sublayers import GraphSublayer, TemporalBlock, make_graph_conv
from .window_readout import HorizonHead, WindowSummary


class STForecasterBase(nn.Module):
    r"""Embedding -> spatio-temporal layers -> window read-out, following the tsl model contract.

    * **Embedding** (:class:`~stgnn_diag.models.embeddings.STEmbedding`): per token (``patch_size``
      consecutive steps; 1 by default) and node a linear map of the values plus learned time-of-day and
      weekday vectors (read from the covariates ``u``), a learned node vector and a learned
      (token, node) vector (which is also the position).
    * **Layers** (subclasses: T&S or TTS): :class:`~stgnn_diag.models.sublayers.TemporalBlock`\ s
      (the diagonal-regularized :class:`~stgnn_diag.nn.TemporalAttention` and a feed-forward
      sub-layer, post-LN) and graph sub-layers (diffusion convolution on the sensor graph).
    * **Read-out**: each node's whole window ``T x hidden`` is mapped to one vector of
      ``readout_size`` (:class:`~stgnn_diag.models.window_readout.WindowSummary`), to which a map of
      the embedded window itself (``embedding_skip``) and the calendar and node embeddings of the
      last step (``readout_embedding``) are added, then residual MLP layers and one linear map to all
      ``horizon`` steps (STID's read-out).

    The three stages are public for the sensitivity tools: ``encode`` (the embedding,
    ``[b, T / patch_size, N, hidden]``), ``process`` (the layers and the window summary, ``[b, 1, N, readout_size]``:
    one vector per node) and ``decode`` (the MLP head).

    Args:
        input_size: input channels per node and step.
        output_size: output channels (default: ``input_size``).
        horizon: predicted steps.
        n_nodes: nodes (needed by the node and adaptive embeddings).
        hidden_size: width ``d`` of the temporal and (T&S) graph layers.
        exog_size: channels of ``u``: 1 (time of day) or 8 (time of day + one-hot weekday), or 0: no calendar,
            which switches ``tod_embedding`` and ``dow_embedding`` off (a model without covariates).
        window: input steps (the read-out reads the whole window).
        heads: attention heads.
        diag, diag_p, diag_penalty, learn_penalty, residual, causal: passed to every
            :class:`~stgnn_diag.nn.TemporalAttention` (``residual=False`` is variant (a)).
        attn_dropout: dropout on the attention weights.
        dropout: dropout in the sub-layers and the read-out MLP.
        ffn_size: hidden width of the feed-forward sub-layers (0: none).
        tod_embedding: slots of the day of the time-of-day embedding (0: off; needs ``exog_size >= 1``).
        dow_embedding: a weekday embedding (needs ``exog_size >= 8``).
        node_embedding, adaptive_embedding: a learned vector per node / per (step, node) (need ``n_nodes``).
        readout_size: width ``H`` of the per-node read-out vector.
        readout_layers: residual MLP layers of the read-out.
        readout_embedding: add time-of-day, weekday and node embeddings of the last input step
            (``readout_size`` wide; the parts switched on for the input embedding) to the summary.
        embedding_skip: add a linear map of the whole embedded window (the layers' input) to the
            summary: STID's read-out of the raw window, beside the attention and graph layers.
        graph_conv, k, adaptive, emb_size: the graph convolution (``"diffusion"`` with ``k`` hops in
            both directions, optionally with a learned adjacency: ``True`` / ``"softmax"`` (Graph WaveNet's)
            or ``"lowrank"`` (:class:`~stgnn_diag.nn.LowRankAdjacency`); or ``"gcn"``).
        patch_size: steps per token (must divide ``window``): the layers run on ``window / patch_size``
            tokens per node, each embedding ``patch_size`` consecutive steps (PatchTST's patches).
        input_mask: the forward call takes ``x_mask`` (True = observed reading; named apart from tsl's
            ``mask``, which masks the targets) and the embedding reads each missing reading as the last observed one plus a flag
            (:class:`~stgnn_diag.models.embeddings.STEmbedding`).
        level_skip: add each node's last input reading (with ``input_mask``, the last observed one) to every
            predicted step: the layers and the read-out forecast the change from it. The forward output is then
            ``decode(process(encode(x))) + x[:, -1]``, so the sensitivity tools' ``wrt="encoded"`` and
            ``output="hidden"`` Jacobians leave the skip out; ``wrt="input"`` (the forward call) includes it.
        seasonal_fallback: with ``input_mask``, in evaluation mode a node whose whole window is missing is
            forecast as the median reading of its weekday and slot of the day at each target step
            (:class:`~stgnn_diag.models.seasonal_fallback.SeasonalFallback`: a table saved with the weights, set
            with ``model.fallback.set_table``; ``stgnn-diag train`` fits it on the training split). Training
            mode leaves the forecast as it is, so the learned weights do not depend on the option.

    Shapes:
        - x: ``[batch, window, nodes, input_size]``
        - edge_index: ``[2, E]`` (source, target), or a SparseTensor ``adj_t``; edge_weight ``[E]``
        - u: ``[batch, window, exog_size]`` or ``[batch, window, nodes, exog_size]``
        - x_mask (``input_mask=True`` only): ``[batch, window, nodes, input_size]`` bool, True = observed
        - output: ``[batch, horizon, nodes, output_size]``
    """

    #: Options added after the zoo's first weights were saved (their configurations list every other constructor
    #: argument). A saved configuration without one of them was saved before it existed and builds its model with the
    #: option's constructor default, the model as it was: :func:`stgnn_diag.zoo.registry.saved_model_kwargs`.
    ADDED_OPTIONS = ("input_mask", "level_skip", "seasonal_fallback")

    def __init__(self, input_size: int, output_size: Optional[int] = None, horizon: int = 12,
                 n_nodes: Optional[int] = None, hidden_size: int = 32, exog_size: int = 8, window: int = 12,
                 heads: int = 4, diag: str = "none", diag_p: float = 0.0, diag_penalty: float = 0.0,
                 learn_penalty: bool = False, residual: bool = True, causal: bool = False,
                 attn_dropout: float = 0.0, dropout: float = 0.0, ffn_size: int = 64, tod_embedding: int = 288,
                 dow_embedding: bool = True, node_embedding: bool = True, adaptive_embedding: bool = True,
                 readout_size: int = 128, readout_layers: int = 2, readout_embedding: bool = True,
                 embedding_skip: bool = False, graph_conv: str = "diffusion", k: int = 2,
                 adaptive: Union[bool, str] = False, emb_size: int = 10, patch_size: int = 1,
                 input_mask: bool = False, level_skip: bool = False, seasonal_fallback: bool = False):
        super().__init__()
        check_sizes(dict(input_size=input_size, horizon=horizon, hidden_size=hidden_size, window=window,
                         readout_size=readout_size), n_nodes, exog_size)
        if exog_size == 0:  # no calendar in u: the calendar embeddings would have nothing to read
            tod_embedding, dow_embedding = 0, False
        #: The calendar options as built (what :attr:`config` records: ``exog_size=0`` switches them off).
        self.resolved_options = {"tod_embedding": tod_embedding, "dow_embedding": dow_embedding}
        if tod_embedding and exog_size < 1:
            raise ValueError(f"tod_embedding={tod_embedding} needs exog_size >= 1 (channel 0 of u is the time of "
                             f"day); pass tod_embedding=0 to switch it off.")
        if dow_embedding and exog_size < 8:
            raise ValueError("dow_embedding=True needs exog_size >= 8 (channels 1..7 of u are the one-hot weekday); "
                             "pass dow_embedding=False to switch it off.")
        if exog_size and not (tod_embedding or dow_embedding):
            raise ValueError(f"exog_size={exog_size} but no part of the model reads u (tod_embedding=0, "
                             f"dow_embedding=False): pass exog_size=0 (train: --covariates none) or switch one on.")
        self.input_size, self.output_size = input_size, output_size or input_size
        self.horizon, self.n_nodes, self.hidden_size = horizon, n_nodes, hidden_size
        self.exog_size, self.window = exog_size, window
        self.embedding = STEmbedding(input_size, hidden_size, window, n_nodes, tod_embedding, dow_embedding,
                                     node_embedding, adaptive_embedding, patch_size, input_mask)
        self.input_mask = input_mask
        if not isinstance(level_skip, bool):
            raise ValueError(f"level_skip must be True or False, got {level_skip!r}.")
        if level_skip and self.output_size > input_size:
            raise ValueError(f"level_skip=True adds each node's last input reading to its output channels: it needs "
                             f"output_size <= input_size, got {self.output_size} > {input_size}.")
        self.level_skip = level_skip
        if not isinstance(seasonal_fallback, bool):
            raise ValueError(f"seasonal_fallback must be True or False, got {seasonal_fallback!r}.")
        if seasonal_fallback and not (input_mask and n_nodes and tod_embedding and exog_size >= 8):
            raise ValueError("seasonal_fallback=True forecasts nodes with no observed reading from a weekday x slot x "
                             "node table: it needs input_mask=True, n_nodes, and the time of day and weekday in u "
                             f"(tod_embedding > 0, exog_size >= 8); got input_mask={input_mask}, n_nodes={n_nodes}, "
                             f"tod_embedding={tod_embedding}, exog_size={exog_size}.")
        self.fallback = SeasonalFallback(tod_embedding, n_nodes, self.output_size) if seasonal_fallback else None
        self.patch_size, self.tokens = patch_size, self.embedding.tokens
        self.summary = WindowSummary(self.tokens, hidden_size, readout_size)
        self.skip = WindowSummary(self.tokens, hidden_size, readout_size) if embedding_skip else None
        self.readout_embedding = CalendarNodeEmbedding(readout_size, n_nodes, tod_embedding, dow_embedding,
                                                       node_embedding) if readout_embedding else None
        self.head = HorizonHead(readout_size, horizon, self.output_size, readout_layers, dropout)
        self._attn_kwargs = dict(diag=diag, diag_p=diag_p, diag_penalty=diag_penalty, learn_penalty=learn_penalty,
                                 residual=residual, causal=causal, dropout=attn_dropout)
        self._graph_kwargs = dict(kind=graph_conv, k=k, n_nodes=n_nodes, adaptive=adaptive, emb_size=emb_size)
        self._heads, self._ffn_size, self._dropout_p = heads, ffn_size, dropout

    # --- layer factories for subclasses ------------------------------------------------------------
    def temporal_block(self) -> TemporalBlock:
        """A new attention + feed-forward block of width ``hidden_size``."""
        return TemporalBlock(self.hidden_size, self._heads, self._ffn_size, self._dropout_p, **self._attn_kwargs)

    def graph_sublayer(self, dim: int) -> GraphSublayer:
        """A new ``LN(x + Drop(act(GC(x))))`` sub-layer of width ``dim``."""
        return GraphSublayer(dim, make_graph_conv(dim=dim, **self._graph_kwargs), dropout=self._dropout_p)

    def reset_parameters(self) -> None:
        """Restore a fresh model's initialisation (see :func:`~stgnn_diag.models.inputs.reset_children`)."""
        reset_children(self)

    # --- the tsl contract and the three stages ----------------------------------------------------
    def check_inputs(self, x: Tensor, edge_index, edge_weight: Optional[Tensor], u: Optional[Tensor]
                     ) -> Tuple[Tensor, Optional[Tensor], Optional[Tensor]]:
        """Validate the inputs; returns ``(edge_index, edge_weight, u [b, t, n, exog])``."""
        return check_inputs(self, x, edge_index, edge_weight, u)

    def encode(self, x: Tensor, u: Optional[Tensor] = None, x_mask: Optional[Tensor] = None) -> Tensor:
        """``[b, T, N, input_size]`` (and ``u [b, T, N, exog]``; with ``input_mask`` the ``x_mask`` of observed
        readings, None: all observed) -> ``[b, T / patch_size, N, hidden]``."""
        return self.embedding(x, u, x_mask)

    def process(self, h: Tensor, edge_index: Tensor, edge_weight: Optional[Tensor] = None,
                u: Optional[Tensor] = None) -> Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def summarize(self, h: Tensor, h0: Tensor, u: Optional[Tensor] = None) -> Tensor:
        """Each node's window ``[b, T', N, hidden]`` (``T'`` tokens) -> one vector ``[b, N, readout_size]``: a linear map
        of the layers' output ``h``, plus one of the embedding ``h0`` (``embedding_skip``), plus the
        calendar and node embeddings of the window's last step (``readout_embedding``)."""
        z = self.summary(h)
        if self.skip is not None:
            z = z + self.skip(h0)
        if self.readout_embedding is not None:
            e = self.readout_embedding(None if u is None else u[:, -1])
            if e is not None:
                z = z + e.to(z.dtype)
        return z

    def decode(self, h: Tensor) -> Tensor:
        """The output of :meth:`process` ``[b, 1, N, readout_size]`` -> ``[b, horizon, N, output_size]``."""
        return self.head(h.squeeze(1))

    def forward(self, x: Tensor, edge_index, edge_weight: Optional[Tensor] = None,
                u: Optional[Tensor] = None, x_mask: Optional[Tensor] = None) -> Tensor:
        edge_index, edge_weight, u = self.check_inputs(x, edge_index, edge_weight, u)
        x_mask = check_mask(self, x, x_mask)
        h = self.process(self.encode(x, u, x_mask), edge_index, edge_weight, u)
        y = self.decode(h)
        if self.level_skip:
            last = x if x_mask is None else fill_missing(x, x_mask)
            y = y + last[:, -1:, :, :self.output_size]
        if self.fallback is not None and x_mask is not None:
            observed = x_mask.expand_as(x)[..., :self.output_size].amax(1) > 0                    # [b, N, C]
            y = self.fallback(y, observed, u[:, -1])
        return y
