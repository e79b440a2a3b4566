"""Shared embedding, layer factories and window read-out of the forecaster family (``tas_attn_*``,
``tts_attn_*``): diagonal-regularized temporal attention with a graph convolution on the sensor graph."""
from __future__ import annotations

from typing import Optional, Tuple

from torch import Tensor, nn

from .embeddings import CalendarNodeEmbedding, STEmbedding, fill_missing
from ..nn.reset import reset_children
from .inputs import check_inputs, check_mask
from .options import ForecasterOptions, options_doc, options_signature
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
{options}

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

    def __init__(self, *args, **kwargs):
        super().__init__()
        #: The options as given (checked), and as built (:meth:`ForecasterOptions.resolved`).
        opts = ForecasterOptions(*args, **kwargs).resolved()
        self.options = opts
        #: The calendar options as built (what :attr:`config` records: ``exog_size=0`` switches them off).
        self.resolved_options = {"tod_embedding": opts.tod_embedding, "dow_embedding": opts.dow_embedding}
        self.input_size, self.output_size = opts.input_size, opts.output_size
        self.horizon, self.n_nodes, self.hidden_size = opts.horizon, opts.n_nodes, opts.hidden_size
        self.exog_size, self.window = opts.exog_size, opts.window
        self.embedding = STEmbedding(opts.input_size, opts.hidden_size, opts.window, opts.n_nodes, opts.tod_embedding,
                                     opts.dow_embedding, opts.node_embedding, opts.adaptive_embedding,
                                     opts.patch_size, opts.input_mask)
        self.input_mask, self.level_skip = opts.input_mask, opts.level_skip
        self.fallback = (SeasonalFallback(opts.tod_embedding, opts.n_nodes, opts.output_size)
                         if opts.seasonal_fallback else None)
        self.patch_size, self.tokens = opts.patch_size, self.embedding.tokens
        self.summary = WindowSummary(self.tokens, opts.hidden_size, opts.readout_size)
        self.skip = WindowSummary(self.tokens, opts.hidden_size, opts.readout_size) if opts.embedding_skip else None
        self.readout_embedding = (CalendarNodeEmbedding(opts.readout_size, opts.n_nodes, opts.tod_embedding,
                                                        opts.dow_embedding, opts.node_embedding)
                                  if opts.readout_embedding else None)
        self.head = HorizonHead(opts.readout_size, opts.horizon, opts.output_size, opts.readout_layers, opts.dropout)
        self._attn_kwargs = dict(diag=opts.diag, diag_p=opts.diag_p, diag_penalty=opts.diag_penalty,
                                 learn_penalty=opts.learn_penalty, residual=opts.residual, causal=opts.causal,
                                 dropout=opts.attn_dropout)
        self._graph_kwargs = dict(kind=opts.graph_conv, k=opts.k, n_nodes=opts.n_nodes, adaptive=opts.adaptive,
                                  emb_size=opts.emb_size)
        self._heads, self._ffn_size, self._dropout_p = opts.heads, opts.ffn_size, opts.dropout

    # --- layer factories for subclasses ------------------------------------------------------------
    def temporal_block(self) -> TemporalBlock:
        """A new attention + feed-forward block of width ``hidden_size``."""
        return TemporalBlock(self.hidden_size, self._heads, self._ffn_size, self._dropout_p, **self._attn_kwargs)

    def graph_sublayer(self, dim: int) -> GraphSublayer:
        """A new ``LN(x + Drop(act(GC(x))))`` sub-layer of width ``dim``."""
        return GraphSublayer(dim, make_graph_conv(dim=dim, **self._graph_kwargs), dropout=self._dropout_p)

    def reset_parameters(self) -> None:
        """Restore a fresh model's initialisation (see :func:`~stgnn_diag.nn.reset.reset_children`)."""
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


STForecasterBase.__init__.__signature__ = options_signature(ForecasterOptions)
STForecasterBase.__doc__ = STForecasterBase.__doc__.replace("{options}", options_doc(ForecasterOptions))
