"""Zoo entries: the diagonal-sink paper's variants (a)-(e) in both arrangements, and ``paper_tas``.

One ``@register_model`` function an entry, with its defaults and shipped weight tags beside it:

* ``tas_attn_*`` / ``tts_attn_*``: the library's forecasters (:class:`~stgnn_diag.models.TASForecaster`,
  :class:`~stgnn_diag.models.TTSForecaster`); only the regularizer differs between the variants.
* ``tas_template_*`` / ``tts_template_*``: the same variants on the over-squashing paper's template
  (:class:`~stgnn_diag.models.TASAttentionModel` / :class:`~stgnn_diag.models.TTSAttentionModel`: post-LN
  attention and graph sub-layers on every step, a 12 x 12 time read-out); the structured Jacobian engine
  handles this template exactly.
* ``paper_tas``: the authors' reference configuration on the template.

Every entry takes ``pretrained`` (``True`` for its first tag, or a tag name) and any constructor argument as
an override: ``tas_attn_penalty(n_nodes=207, hidden_size=64)`` or ``create_model("tas_attn_penalty", ...)``.
"""
from __future__ import annotations

from typing import Dict, Union

from torch import nn

from ..models import TASAttentionModel, TASForecaster, TTSAttentionModel, TTSForecaster
from .entry import build, entry_class
from .registry import register_model

#: Shared defaults of the ``tas_attn_*`` / ``tts_attn_*`` entries (METR-LA-shaped: one speed channel,
#: 12 steps in and out, time of day + weekday covariates). ``n_nodes`` is required (node and
#: spatio-temporal embeddings).
COMMON = dict(input_size=1, output_size=1, horizon=12, window=12, n_nodes=None, hidden_size=32,
              exog_size=8, heads=4, ffn_size=64, tod_embedding=288, dow_embedding=True, node_embedding=True,
              adaptive_embedding=True, readout_size=128, readout_layers=2, graph_conv="diffusion", k=2)

#: The paper's five variants as attention settings. The dropout rate of (d) is not published:
#: 0.1 is our choice. (e) uses the authors' shipped penalty c = -0.05.
VARIANTS: Dict[str, dict] = {
    "noresid": dict(residual=False),
    "none": dict(),
    "mask": dict(diag="mask"),
    "dropout": dict(diag="dropout", diag_p=0.1),
    "penalty": dict(diag="penalty", diag_penalty=-0.05),
}

#: The forecasters' two arrangements, as entry-name prefixes: ``<arrangement>_<variant>``.
ARRANGEMENTS = ("tas_attn", "tts_attn")

#: T&S learns a Graph-WaveNet adjacency beside the sensor graph (``adaptive=True``) and keeps two blocks, so that
#: attention and graph layers alternate; its blocks run on tokens of two steps (``patch_size=2``: 6 per node)
#: with one head and one diffusion hop, which cuts the passes over all (token, node) pairs that its step's time
#: goes to. Why these defaults, measured: models/results/probes.md.
TAS_ATTN = {**COMMON, "n_layers": 2, "adaptive": True, "patch_size": 2, "heads": 1, "k": 1}
#: From ``entry.LARGE_GRAPH_NODES`` nodes on, the T&S entries learn a low-rank adjacency applied through its
#: factors instead of the dense softmax: linear in the nodes instead of quadratic (models/results/lowrank-cpu:
#: the same accuracy on METR-LA within the seeds' spread; benchmarks/bench_scale.py: the step's cost).
TAS_LARGE_GRAPH = {"adaptive": "lowrank"}
TAS_LARGE_GRAPH_NOTE = "linear in the nodes where the dense learned adjacency is quadratic"
#: TTS keeps the sensor graph alone and runs one temporal block, for the same reason.
TTS_ATTN = {**COMMON, "temporal_layers": 1, "spatial_layers": 2}
#: Defaults of the template entries (the over-squashing paper's design, at the paper's width 64).
TEMPLATE = dict(input_size=1, output_size=1, horizon=12, window=12, n_nodes=None, hidden_size=64,
                exog_size=0, heads=4, graph_conv="diffusion", k=2, pos_encoding="sinusoidal")
TAS_TEMPLATE = {**TEMPLATE, "n_layers": 3}
TTS_TEMPLATE = {**TEMPLATE, "temporal_layers": 3, "spatial_layers": 3}
#: The diagonal-sink authors' reference configuration, with real message passing on the sensor graph
#: (their published graph layer keeps only diag(A), i.e. never mixes nodes).
PAPER_TAS = dict(input_size=1, output_size=1, horizon=12, window=12, n_nodes=None, hidden_size=72,
                 exog_size=1, exog_mode="blocks", n_layers=12, heads=8, pos_encoding="tape",
                 dropout=0.1, attn_dropout=0.1, activation="none", graph_conv="diffusion", k=2)

#: The shipped weight tags (``stgnn_diag/zoo/weights/<name>.<tag>.pt``; the first is ``pretrained=True``'s):
#: every entry's seed-0 unit at the ``cpu-15min`` budget, and for ``tas_attn_none`` the 10-epoch units
#: (models/results/ten-epochs).
CPU15 = ("metr_la_cpu15",)
TEN_EPOCH_TAGS = ("metr_la_cpu_e10", "metr_la_cpu_e10_mask", "metr_la_e10_mask_skip_p1",
                  "metr_la_e10_mask_skip_p1_fallback")


# -- tas_attn_* --------------------------------------------------------------------------------------------

TASAttnNoresid = entry_class(TASForecaster, "tas_attn_noresid", {**TAS_ATTN, **VARIANTS["noresid"]},
                             large_graph=TAS_LARGE_GRAPH,
                             large_graph_note=TAS_LARGE_GRAPH_NOTE)


@register_model(model_class=TASAttnNoresid, tags=("paper-variant", "tas_attn"), pretrained_tags=CPU15)
def tas_attn_noresid(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """T&S forecaster, paper variant (a) no residual around the temporal attention.

    Tokens of two steps, calendar / node / adaptive embeddings, attention + feed-forward blocks, diffusion
    convolution on the sensor graph + a learned adjacency (low-rank from 1,000 nodes on: linear in the nodes),
    window read-out.
    """
    return build(TASAttnNoresid, pretrained, kwargs)


TASAttnNone = entry_class(TASForecaster, "tas_attn_none", {**TAS_ATTN, **VARIANTS["none"]},
                          large_graph=TAS_LARGE_GRAPH,
                          large_graph_note=TAS_LARGE_GRAPH_NOTE)


@register_model(model_class=TASAttnNone, tags=("paper-variant", "tas_attn"), pretrained_tags=CPU15 + TEN_EPOCH_TAGS)
def tas_attn_none(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """T&S forecaster, paper variant (b) plain temporal attention, no diagonal regularizer.

    Tokens of two steps, calendar / node / adaptive embeddings, attention + feed-forward blocks, diffusion
    convolution on the sensor graph + a learned adjacency (low-rank from 1,000 nodes on: linear in the nodes),
    window read-out.
    """
    return build(TASAttnNone, pretrained, kwargs)


TASAttnMask = entry_class(TASForecaster, "tas_attn_mask", {**TAS_ATTN, **VARIANTS["mask"]},
                          large_graph=TAS_LARGE_GRAPH,
                          large_graph_note=TAS_LARGE_GRAPH_NOTE)


@register_model(model_class=TASAttnMask, tags=("paper-variant", "tas_attn"), pretrained_tags=CPU15)
def tas_attn_mask(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """T&S forecaster, paper variant (c) diagonal mask: logit (i, i) = -inf in training and evaluation.

    Tokens of two steps, calendar / node / adaptive embeddings, attention + feed-forward blocks, diffusion
    convolution on the sensor graph + a learned adjacency (low-rank from 1,000 nodes on: linear in the nodes),
    window read-out.
    """
    return build(TASAttnMask, pretrained, kwargs)


TASAttnDropout = entry_class(TASForecaster, "tas_attn_dropout", {**TAS_ATTN, **VARIANTS["dropout"]},
                             large_graph=TAS_LARGE_GRAPH,
                             large_graph_note=TAS_LARGE_GRAPH_NOTE)


@register_model(model_class=TASAttnDropout, tags=("paper-variant", "tas_attn"), pretrained_tags=CPU15)
def tas_attn_dropout(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """T&S forecaster, paper variant (d) diagonal dropout p = 0.1 (training only, no rescaling).

    Tokens of two steps, calendar / node / adaptive embeddings, attention + feed-forward blocks, diffusion
    convolution on the sensor graph + a learned adjacency (low-rank from 1,000 nodes on: linear in the nodes),
    window read-out.
    """
    return build(TASAttnDropout, pretrained, kwargs)


TASAttnPenalty = entry_class(TASForecaster, "tas_attn_penalty", {**TAS_ATTN, **VARIANTS["penalty"]},
                             large_graph=TAS_LARGE_GRAPH,
                             large_graph_note=TAS_LARGE_GRAPH_NOTE)


@register_model(model_class=TASAttnPenalty, tags=("paper-variant", "tas_attn"), pretrained_tags=CPU15)
def tas_attn_penalty(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """T&S forecaster, paper variant (e) diagonal penalty c = -0.05 on the diagonal logits.

    Tokens of two steps, calendar / node / adaptive embeddings, attention + feed-forward blocks, diffusion
    convolution on the sensor graph + a learned adjacency (low-rank from 1,000 nodes on: linear in the nodes),
    window read-out.
    """
    return build(TASAttnPenalty, pretrained, kwargs)



# -- tts_attn_* --------------------------------------------------------------------------------------------

TTSAttnNoresid = entry_class(TTSForecaster, "tts_attn_noresid", {**TTS_ATTN, **VARIANTS["noresid"]})


@register_model(model_class=TTSAttnNoresid, tags=("paper-variant", "tts_attn"), pretrained_tags=CPU15)
def tts_attn_noresid(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """TTS forecaster, paper variant (a) no residual around the temporal attention.

    One token a step, calendar / node / adaptive embeddings, one attention + feed-forward block, diffusion
    convolution on the sensor graph, window read-out.
    """
    return build(TTSAttnNoresid, pretrained, kwargs)


TTSAttnNone = entry_class(TTSForecaster, "tts_attn_none", {**TTS_ATTN, **VARIANTS["none"]})


@register_model(model_class=TTSAttnNone, tags=("paper-variant", "tts_attn"), pretrained_tags=CPU15)
def tts_attn_none(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """TTS forecaster, paper variant (b) plain temporal attention, no diagonal regularizer.

    One token a step, calendar / node / adaptive embeddings, one attention + feed-forward block, diffusion
    convolution on the sensor graph, window read-out.
    """
    return build(TTSAttnNone, pretrained, kwargs)


TTSAttnMask = entry_class(TTSForecaster, "tts_attn_mask", {**TTS_ATTN, **VARIANTS["mask"]})


@register_model(model_class=TTSAttnMask, tags=("paper-variant", "tts_attn"), pretrained_tags=CPU15)
def tts_attn_mask(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """TTS forecaster, paper variant (c) diagonal mask: logit (i, i) = -inf in training and evaluation.

    One token a step, calendar / node / adaptive embeddings, one attention + feed-forward block, diffusion
    convolution on the sensor graph, window read-out.
    """
    return build(TTSAttnMask, pretrained, kwargs)


TTSAttnDropout = entry_class(TTSForecaster, "tts_attn_dropout", {**TTS_ATTN, **VARIANTS["dropout"]})


@register_model(model_class=TTSAttnDropout, tags=("paper-variant", "tts_attn"), pretrained_tags=CPU15)
def tts_attn_dropout(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """TTS forecaster, paper variant (d) diagonal dropout p = 0.1 (training only, no rescaling).

    One token a step, calendar / node / adaptive embeddings, one attention + feed-forward block, diffusion
    convolution on the sensor graph, window read-out.
    """
    return build(TTSAttnDropout, pretrained, kwargs)


TTSAttnPenalty = entry_class(TTSForecaster, "tts_attn_penalty", {**TTS_ATTN, **VARIANTS["penalty"]})


@register_model(model_class=TTSAttnPenalty, tags=("paper-variant", "tts_attn"), pretrained_tags=CPU15)
def tts_attn_penalty(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """TTS forecaster, paper variant (e) diagonal penalty c = -0.05 on the diagonal logits.

    One token a step, calendar / node / adaptive embeddings, one attention + feed-forward block, diffusion
    convolution on the sensor graph, window read-out.
    """
    return build(TTSAttnPenalty, pretrained, kwargs)



# -- tas_template_* ----------------------------------------------------------------------------------------

TASTemplateNoresid = entry_class(TASAttentionModel, "tas_template_noresid", {**TAS_TEMPLATE, **VARIANTS["noresid"]})


@register_model(model_class=TASTemplateNoresid, tags=("paper-variant", "template", "tas_template"), pretrained_tags=CPU15)
def tas_template_noresid(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """T&S template model, paper variant (a) no residual around the temporal attention.

    The over-squashing paper's template: post-LN attention and diffusion sub-layers on every step, 12 x 12
    time read-out.
    """
    return build(TASTemplateNoresid, pretrained, kwargs)


TASTemplateNone = entry_class(TASAttentionModel, "tas_template_none", {**TAS_TEMPLATE, **VARIANTS["none"]})


@register_model(model_class=TASTemplateNone, tags=("paper-variant", "template", "tas_template"), pretrained_tags=CPU15)
def tas_template_none(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """T&S template model, paper variant (b) plain temporal attention, no diagonal regularizer.

    The over-squashing paper's template: post-LN attention and diffusion sub-layers on every step, 12 x 12
    time read-out.
    """
    return build(TASTemplateNone, pretrained, kwargs)


TASTemplateMask = entry_class(TASAttentionModel, "tas_template_mask", {**TAS_TEMPLATE, **VARIANTS["mask"]})


@register_model(model_class=TASTemplateMask, tags=("paper-variant", "template", "tas_template"), pretrained_tags=CPU15)
def tas_template_mask(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """T&S template model, paper variant (c) diagonal mask: logit (i, i) = -inf in training and evaluation.

    The over-squashing paper's template: post-LN attention and diffusion sub-layers on every step, 12 x 12
    time read-out.
    """
    return build(TASTemplateMask, pretrained, kwargs)


TASTemplateDropout = entry_class(TASAttentionModel, "tas_template_dropout", {**TAS_TEMPLATE, **VARIANTS["dropout"]})


@register_model(model_class=TASTemplateDropout, tags=("paper-variant", "template", "tas_template"), pretrained_tags=CPU15)
def tas_template_dropout(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """T&S template model, paper variant (d) diagonal dropout p = 0.1 (training only, no rescaling).

    The over-squashing paper's template: post-LN attention and diffusion sub-layers on every step, 12 x 12
    time read-out.
    """
    return build(TASTemplateDropout, pretrained, kwargs)


TASTemplatePenalty = entry_class(TASAttentionModel, "tas_template_penalty", {**TAS_TEMPLATE, **VARIANTS["penalty"]})


@register_model(model_class=TASTemplatePenalty, tags=("paper-variant", "template", "tas_template"), pretrained_tags=CPU15)
def tas_template_penalty(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """T&S template model, paper variant (e) diagonal penalty c = -0.05 on the diagonal logits.

    The over-squashing paper's template: post-LN attention and diffusion sub-layers on every step, 12 x 12
    time read-out.
    """
    return build(TASTemplatePenalty, pretrained, kwargs)



# -- tts_template_* ----------------------------------------------------------------------------------------

TTSTemplateNoresid = entry_class(TTSAttentionModel, "tts_template_noresid", {**TTS_TEMPLATE, **VARIANTS["noresid"]})


@register_model(model_class=TTSTemplateNoresid, tags=("paper-variant", "template", "tts_template"), pretrained_tags=CPU15)
def tts_template_noresid(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """TTS template model, paper variant (a) no residual around the temporal attention.

    The over-squashing paper's template: post-LN attention and diffusion sub-layers on every step, 12 x 12
    time read-out.
    """
    return build(TTSTemplateNoresid, pretrained, kwargs)


TTSTemplateNone = entry_class(TTSAttentionModel, "tts_template_none", {**TTS_TEMPLATE, **VARIANTS["none"]})


@register_model(model_class=TTSTemplateNone, tags=("paper-variant", "template", "tts_template"), pretrained_tags=CPU15)
def tts_template_none(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """TTS template model, paper variant (b) plain temporal attention, no diagonal regularizer.

    The over-squashing paper's template: post-LN attention and diffusion sub-layers on every step, 12 x 12
    time read-out.
    """
    return build(TTSTemplateNone, pretrained, kwargs)


TTSTemplateMask = entry_class(TTSAttentionModel, "tts_template_mask", {**TTS_TEMPLATE, **VARIANTS["mask"]})


@register_model(model_class=TTSTemplateMask, tags=("paper-variant", "template", "tts_template"), pretrained_tags=CPU15)
def tts_template_mask(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """TTS template model, paper variant (c) diagonal mask: logit (i, i) = -inf in training and evaluation.

    The over-squashing paper's template: post-LN attention and diffusion sub-layers on every step, 12 x 12
    time read-out.
    """
    return build(TTSTemplateMask, pretrained, kwargs)


TTSTemplateDropout = entry_class(TTSAttentionModel, "tts_template_dropout", {**TTS_TEMPLATE, **VARIANTS["dropout"]})


@register_model(model_class=TTSTemplateDropout, tags=("paper-variant", "template", "tts_template"), pretrained_tags=CPU15)
def tts_template_dropout(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """TTS template model, paper variant (d) diagonal dropout p = 0.1 (training only, no rescaling).

    The over-squashing paper's template: post-LN attention and diffusion sub-layers on every step, 12 x 12
    time read-out.
    """
    return build(TTSTemplateDropout, pretrained, kwargs)


TTSTemplatePenalty = entry_class(TTSAttentionModel, "tts_template_penalty", {**TTS_TEMPLATE, **VARIANTS["penalty"]})


@register_model(model_class=TTSTemplatePenalty, tags=("paper-variant", "template", "tts_template"), pretrained_tags=CPU15)
def tts_template_penalty(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """TTS template model, paper variant (e) diagonal penalty c = -0.05 on the diagonal logits.

    The over-squashing paper's template: post-LN attention and diffusion sub-layers on every step, 12 x 12
    time read-out.
    """
    return build(TTSTemplatePenalty, pretrained, kwargs)


# -- paper_tas -------------------------------------------------------------------------------------------------

#: From ``entry.LARGE_GRAPH_NODES`` nodes on, ``paper_tas`` recomputes each of its 12 blocks' activations in the
#: backward pass instead of keeping them all (``checkpoint_blocks``): its memory is linear in the nodes either
#: way, but the kept activations of 12 blocks outgrow a 24 GB machine before 8,600 nodes.
PAPER_TAS_LARGE_GRAPH = {"checkpoint_blocks": True}

PaperTAS = entry_class(TASAttentionModel, "paper_tas", PAPER_TAS, large_graph=PAPER_TAS_LARGE_GRAPH,
                       large_graph_note="one block's activations kept at a time in training, so that large graphs "
                                        "fit in memory")


@register_model(model_class=PaperTAS, tags=("paper",), pretrained_tags=CPU15)
def paper_tas(pretrained: Union[bool, str] = False, **kwargs) -> nn.Module:
    """The authors' reference T&S model with a diffusion convolution on the sensor graph.

    12 blocks, d = 72, 8 heads, tAPE, time-of-day conditioning in every sub-layer, post-LN, no feed-forward.
    """
    return build(PaperTAS, pretrained, kwargs)
