"""Zoo entries: the diagonal-sink paper's variants (a)-(e) in both arrangements, and ``paper_tas``.

* ``tas_attn_*`` / ``tts_attn_*``: the library's forecasters (:class:`~stgnn_diag.models.TASForecaster`,
  :class:`~stgnn_diag.models.TTSForecaster`), one entry per variant; only the regularizer differs.
* ``tas_template_*`` / ``tts_template_*``: the same variants on the over-squashing paper's template
  (:class:`~stgnn_diag.models.TASAttentionModel` / :class:`~stgnn_diag.models.TTSAttentionModel`: post-LN
  attention and graph sub-layers on every step, a 12 x 12 time read-out); the structured Jacobian engine
  handles this template exactly.
* ``paper_tas``: the authors' reference configuration on the template.
"""
from __future__ import annotations

import inspect
from typing import Dict, Type

from torch import nn

from ..models import TASAttentionModel, TASForecaster, TTSAttentionModel, TTSForecaster
from .registry import constructor_arguments, register_model

#: Shared defaults of the ``tas_attn_*`` / ``tts_attn_*`` entries (METR-LA-shaped: one speed channel,
#: 12 steps in and out, time of day + weekday covariates). Override any of them in ``create_model``;
#: ``n_nodes`` is required (node and spatio-temporal embeddings).
COMMON = dict(input_size=1, output_size=1, horizon=12, window=12, n_nodes=None, hidden_size=32,
              exog_size=8, heads=4, ffn_size=64, tod_embedding=288, dow_embedding=True, node_embedding=True,
              adaptive_embedding=True, readout_size=128, readout_layers=2, graph_conv="diffusion", k=2)

#: The paper's five variants as attention settings. The dropout rate of (d) is not published:
#: 0.1 is our choice. (e) uses the authors' shipped penalty c = -0.05.
VARIANTS: Dict[str, tuple] = {
    "noresid": ("(a) no residual around the temporal attention", dict(residual=False)),
    "none": ("(b) plain temporal attention, no diagonal regularizer", dict()),
    "mask": ("(c) diagonal mask: logit (i, i) = -inf in training and evaluation", dict(diag="mask")),
    "dropout": ("(d) diagonal dropout p = 0.1 (training only, no rescaling)", dict(diag="dropout", diag_p=0.1)),
    "penalty": ("(e) diagonal penalty c = -0.05 on the diagonal logits", dict(diag="penalty", diag_penalty=-0.05)),
}

#: T&S learns a Graph-WaveNet adjacency beside the sensor graph (``adaptive=True``) and keeps two blocks, so that
#: attention and graph layers alternate; its blocks run on tokens of two steps (``patch_size=2``: 6 per node)
#: with one head and one diffusion hop, which cuts the passes over all (token, node) pairs that its step's time
#: goes to. TTS keeps the sensor graph alone and runs one temporal block, for the same reason. Why these
#: defaults, measured: models/results/probes.md.
ARRANGEMENTS: Dict[str, tuple] = {
    "tas_attn": (TASForecaster, "T&S", dict(n_layers=2, adaptive=True, patch_size=2, heads=1, k=1)),
    "tts_attn": (TTSForecaster, "TTS", dict(temporal_layers=1, spatial_layers=2)),
}


def _class_name(entry_name: str) -> str:
    """``"tts_attn_penalty"`` -> ``"TTSAttnPenalty"`` (the arrangement in capitals)."""
    parts = entry_name.split("_")
    return "".join(p.upper() if p in ("tas", "tts") else p.capitalize() for p in parts).replace("Tas", "TAS")


def _entry_class(cls: Type[nn.Module], name: str, defaults: dict, doc: str) -> type:
    """A subclass of ``cls`` whose constructor starts from the entry's defaults, so that
    ``type(create_model(name))(**kwargs)`` builds the named variant (tsl's ``Predictor(model_class=...,
    model_kwargs=...)`` idiom), with tsl's ``filter_model_args_``. Defined at module level: pickles and
    passes the safe loader by name."""
    accepted = set(defaults) | constructor_arguments(cls)

    def __init__(self, **overrides):
        cls.__init__(self, **{**defaults, **overrides})

    def filter_model_args_(klass, model_args: dict) -> None:
        """Drop (in place) the keys of ``model_args`` the entry does not take, as tsl's models do."""
        for key in [k for k in model_args if k not in accepted]:
            del model_args[key]

    new = type(_class_name(name), (cls,), {"__init__": __init__, "__doc__": doc, "__module__": __name__,
                                           "filter_model_args_": classmethod(filter_model_args_),
                                           "entry_name": name, "entry_defaults": dict(defaults)})
    globals()[new.__name__] = new
    return new


def _entry(cls: Type[nn.Module], defaults: dict, doc: str, name: str):
    klass = _entry_class(cls, name, defaults, doc)

    def entry(**overrides) -> nn.Module:
        return klass(**overrides)

    entry.defaults = defaults
    entry.model_class = klass
    entry.accepts = frozenset(set(defaults) | constructor_arguments(cls))
    entry.__doc__ = doc
    return entry


for _arch, (_cls, _label, _layers) in ARRANGEMENTS.items():
    for _variant, (_what, _attn) in VARIANTS.items():
        _name = f"{_arch}_{_variant}"
        _graph = "the sensor graph + a learned adjacency" if _layers.get("adaptive") else "the sensor graph"
        _tokens = f"tokens of {_layers['patch_size']} steps" if _layers.get("patch_size", 1) > 1 else "one token a step"
        _doc = (f"{_label} forecaster, paper variant {_what}; {_tokens}, calendar / node / adaptive embeddings, "
                f"attention + feed-forward blocks, diffusion convolution on {_graph}, window read-out.")
        register_model(_entry(_cls, {**COMMON, **_layers, **_attn}, _doc, _name), name=_name,
                       tags=("paper-variant", _arch))

#: Defaults of the template entries (the over-squashing paper's design, at the paper's width 64).
TEMPLATE = dict(input_size=1, output_size=1, horizon=12, window=12, n_nodes=None, hidden_size=64,
                exog_size=0, heads=4, graph_conv="diffusion", k=2, pos_encoding="sinusoidal")
TEMPLATE_ARRANGEMENTS: Dict[str, tuple] = {
    "tas_template": (TASAttentionModel, "T&S", dict(n_layers=3)),
    "tts_template": (TTSAttentionModel, "TTS", dict(temporal_layers=3, spatial_layers=3)),
}

for _arch, (_cls, _label, _layers) in TEMPLATE_ARRANGEMENTS.items():
    for _variant, (_what, _attn) in VARIANTS.items():
        _doc = (f"{_label} template model (the over-squashing paper's), paper variant {_what}; post-LN attention "
                f"and diffusion sub-layers on every step, 12 x 12 time read-out.")
        register_model(_entry(_cls, {**TEMPLATE, **_layers, **_attn}, _doc, f"{_arch}_{_variant}"),
                       name=f"{_arch}_{_variant}",
                       tags=("paper-variant", "template", _arch))

#: The diagonal-sink authors' reference configuration, with real message passing on the sensor graph
#: (their published graph layer keeps only diag(A), i.e. never mixes nodes).
PAPER_TAS = dict(input_size=1, output_size=1, horizon=12, window=12, n_nodes=None, hidden_size=72,
                 exog_size=1, exog_mode="blocks", n_layers=12, heads=8, pos_encoding="tape",
                 dropout=0.1, attn_dropout=0.1, activation="none", graph_conv="diffusion", k=2)

register_model(
    _entry(TASAttentionModel, PAPER_TAS,
           "The authors' reference T&S model (12 blocks, d=72, 8 heads, tAPE, time-of-day conditioning "
           "in every sub-layer, post-LN, no feed-forward) with a diffusion convolution on the sensor graph.",
           "paper_tas"),
    name="paper_tas", tags=("paper",))
