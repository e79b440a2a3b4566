"""The forecasters' options, declared once: :class:`ForecasterOptions` holds each option's default, its
documentation and its check; :class:`~stgnn_diag.models.forecaster_base.STForecasterBase` takes its
constructor signature and the ``Args`` of its docstring from it.

Checks of a single option come from its ``kind`` (``"size"``: a positive int, ``"count"``: an int >= 0,
``"flag"``: True or False, ``"size or None"`` / ``"nodes"``: None or a positive int); options whose valid values a layer owns
(``diag``, ``graph_conv``, dropout rates, ``patch_size`` against ``window``) are checked by that layer, with
the option's name in the message. Checks across options are in :meth:`ForecasterOptions.__post_init__`.
"""
from __future__ import annotations

import inspect
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any, Optional, Union

__all__ = ["ForecasterOptions", "check_option", "options_doc", "options_signature"]


def option(default: Any = MISSING, doc: str = "", kind: Optional[str] = None):
    """A field of an options dataclass with its documentation and the kind of value it takes."""
    return field(default=default, metadata={"doc": doc, "kind": kind})


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


_KIND_CHECKS = {
    "size": (lambda v: _is_int(v) and v > 0, "a positive integer"),
    "count": (lambda v: _is_int(v) and v >= 0, "an integer >= 0"),
    "flag": (lambda v: isinstance(v, bool), "True or False"),
    "size or None": (lambda v: v is None or (_is_int(v) and v > 0), "a positive integer or None"),
    "nodes": (lambda v: v is None or (_is_int(v) and v > 0), "a positive integer (the sensors of the graph) or None"),
}


def check_option(name: str, value: Any, kind: Optional[str] = None) -> None:
    """``ValueError`` naming ``name`` unless ``value`` is of ``kind`` (a key of the kinds above; default: the kind
    :class:`ForecasterOptions` declares for ``name``)."""
    ok, what = _KIND_CHECKS[kind or _OPTION_KINDS[name]]
    if not ok(value):
        raise ValueError(f"{name} must be {what}, got {value!r}.")


@dataclass(frozen=True)
class ForecasterOptions:
    """Every constructor option of the forecaster family (``tas_attn_*``, ``tts_attn_*``) but the layer counts,
    which the arrangements add. Building one checks it; :meth:`resolved` is what the model builds."""

    input_size: int = option(doc="input channels per node and step.", kind="size")
    output_size: Optional[int] = option(None, "output channels (default: ``input_size``).", kind="size or None")
    horizon: int = option(12, "predicted steps.", kind="size")
    n_nodes: Optional[int] = option(None, "nodes (needed by the node and adaptive embeddings).", kind="nodes")
    hidden_size: int = option(32, "width ``d`` of the temporal and (T&S) graph layers.", kind="size")
    exog_size: int = option(8, "channels of ``u``: 1 (time of day) or 8 (time of day + one-hot weekday), or 0: no "
                               "calendar, which switches ``tod_embedding`` and ``dow_embedding`` off (a model "
                               "without covariates).", kind="count")
    window: int = option(12, "input steps (the read-out reads the whole window).", kind="size")
    heads: int = option(4, "attention heads.", kind="size")
    diag: str = option("none", "the diagonal regularizer of every :class:`~stgnn_diag.nn.TemporalAttention`: "
                               "``none``, ``mask``, ``dropout``, ``penalty`` (see there).")
    diag_p: float = option(0.0, "diagonal dropout rate (``diag='dropout'``).")
    diag_penalty: float = option(0.0, "penalty on the diagonal logits (``diag='penalty'``).")
    learn_penalty: bool = option(False, "learn the penalty (one per head) from ``diag_penalty``.", kind="flag")
    residual: bool = option(True, "the attention's residual connection (``False`` is variant (a)).", kind="flag")
    causal: bool = option(False, "causal attention (each step attends to itself and the past).", kind="flag")
    attn_dropout: float = option(0.0, "dropout on the attention weights.")
    dropout: float = option(0.0, "dropout in the sub-layers and the read-out MLP.")
    ffn_size: int = option(64, "hidden width of the feed-forward sub-layers (0: none).", kind="count")
    tod_embedding: int = option(288, "slots of the day of the time-of-day embedding (0: off; needs "
                                     "``exog_size >= 1``).", kind="count")
    dow_embedding: bool = option(True, "a weekday embedding (needs ``exog_size >= 8``).", kind="flag")
    node_embedding: bool = option(True, "a learned vector per node (needs ``n_nodes``).", kind="flag")
    adaptive_embedding: bool = option(True, "a learned vector per (token, node), which is also the position "
                                            "(needs ``n_nodes``).", kind="flag")
    readout_size: int = option(128, "width ``H`` of the per-node read-out vector.", kind="size")
    readout_layers: int = option(2, "residual MLP layers of the read-out.", kind="count")
    readout_embedding: bool = option(True, "add time-of-day, weekday and node embeddings of the last input step "
                                           "(``readout_size`` wide; the parts switched on for the input embedding) "
                                           "to the summary.", kind="flag")
    embedding_skip: bool = option(False, "add a linear map of the whole embedded window (the layers' input) to the "
                                         "summary: STID's read-out of the raw window, beside the attention and graph "
                                         "layers.", kind="flag")
    graph_conv: str = option("diffusion", "the graph convolution: ``\"diffusion\"`` (``k`` hops in both directions) "
                                          "or ``\"gcn\"``.")
    k: int = option(2, "diffusion hops.", kind="size")
    adaptive: Union[bool, str] = option(False, "a learned adjacency beside the sensor graph: ``True`` / "
                                               "``\"softmax\"`` (Graph WaveNet's) or ``\"lowrank\"`` "
                                               "(:class:`~stgnn_diag.nn.LowRankAdjacency`).")
    emb_size: int = option(10, "node-embedding size of the adaptive adjacency.", kind="size")
    patch_size: int = option(1, "steps per token (must divide ``window``): the layers run on ``window / "
                                "patch_size`` tokens per node, each embedding ``patch_size`` consecutive steps "
                                "(PatchTST's patches).", kind="size")
    input_mask: bool = option(False, "the forward call takes ``x_mask`` (True = observed reading; named apart from "
                                     "tsl's ``mask``, which masks the targets) and the embedding reads each missing "
                                     "reading as the last observed one plus a flag "
                                     "(:class:`~stgnn_diag.models.embeddings.STEmbedding`).", kind="flag")
    level_skip: bool = option(False, "add each node's last input reading (with ``input_mask``, the last observed "
                                     "one) to every predicted step: the layers and the read-out forecast the change "
                                     "from it. The forward output is then ``decode(process(encode(x))) + x[:, -1]``, "
                                     "so the sensitivity tools' ``wrt=\"encoded\"`` and ``output=\"hidden\"`` "
                                     "Jacobians leave the skip out; ``wrt=\"input\"`` (the forward call) includes "
                                     "it.", kind="flag")
    seasonal_fallback: bool = option(False, "with ``input_mask``, in evaluation mode a node whose whole window is "
                                            "missing is forecast as the median reading of its weekday and slot of "
                                            "the day at each target step "
                                            "(:class:`~stgnn_diag.models.seasonal_fallback.SeasonalFallback`: a "
                                            "table saved with the weights; ``stgnn-diag train`` fits it on the "
                                            "training split). Training mode leaves the forecast as it is.",
                                     kind="flag")

    def __post_init__(self):
        for f in fields(self):
            kind = f.metadata["kind"]
            if kind is not None:
                check_option(f.name, getattr(self, f.name), kind)
        tod, dow = self.resolved_calendar()
        if tod and self.exog_size < 1:
            raise ValueError(f"tod_embedding={tod} needs exog_size >= 1 (channel 0 of u is the time of day); pass "
                             f"tod_embedding=0 to switch it off.")
        if dow and self.exog_size < 8:
            raise ValueError("dow_embedding=True needs exog_size >= 8 (channels 1..7 of u are the one-hot weekday); "
                             "pass dow_embedding=False to switch it off.")
        if self.exog_size and not (tod or dow):
            raise ValueError(f"exog_size={self.exog_size} but no part of the model reads u (tod_embedding=0, "
                             f"dow_embedding=False): pass exog_size=0 (train: --covariates none) or switch one on.")
        out = self.output_size or self.input_size
        if self.level_skip and out > self.input_size:
            raise ValueError(f"level_skip=True adds each node's last input reading to its output channels: it needs "
                             f"output_size <= input_size, got {out} > {self.input_size}.")
        if self.seasonal_fallback and not (self.input_mask and self.n_nodes and tod and self.exog_size >= 8):
            raise ValueError("seasonal_fallback=True forecasts nodes with no observed reading from a weekday x slot x "
                             "node table: it needs input_mask=True, n_nodes, and the time of day and weekday in u "
                             f"(tod_embedding > 0, exog_size >= 8); got input_mask={self.input_mask}, "
                             f"n_nodes={self.n_nodes}, tod_embedding={tod}, exog_size={self.exog_size}.")

    def resolved_calendar(self):
        """``(tod_embedding, dow_embedding)`` as built: both off with ``exog_size=0`` (nothing to read)."""
        return (0, False) if self.exog_size == 0 else (self.tod_embedding, self.dow_embedding)

    def resolved(self) -> "ForecasterOptions":
        """The options the model builds: ``output_size`` filled in, the calendar switched off without ``u``."""
        tod, dow = self.resolved_calendar()
        return replace(self, output_size=self.output_size or self.input_size, tod_embedding=tod, dow_embedding=dow)


#: The declared kind of each option that has one.
_OPTION_KINDS = {f.name: f.metadata["kind"] for f in fields(ForecasterOptions) if f.metadata["kind"]}


def options_signature(options: type, owner: Optional[inspect.Signature] = None) -> inspect.Signature:
    """``__init__(self, <the options' fields, with their defaults>)``: what ``inspect.signature`` (and so tsl's
    argument filters, our zoo's argument checks and Sphinx) read for a constructor taking ``*args, **kwargs``."""
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for f in fields(options):
        default = inspect.Parameter.empty if f.default is MISSING else f.default
        params.append(inspect.Parameter(f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default,
                                        annotation=f.type))
    return inspect.Signature(params)


def options_doc(options: type, indent: str = "        ") -> str:
    """The ``Args:`` lines (Google style) of the options' fields, each ``name: doc``, wrapped at 110 columns."""
    import textwrap

    lines = []
    for f in fields(options):
        lines += textwrap.wrap(f"{f.name}: {f.metadata['doc']}", 110, initial_indent=indent,
                               subsequent_indent=indent + "    ")
    return "\n".join(lines)
