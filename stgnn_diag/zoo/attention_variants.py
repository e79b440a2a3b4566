"""Zoo entries: the diagonal-sink paper's variants (a)-(e) in both arrangements, and ``paper_tas``."""
from __future__ import annotations

from typing import Dict, Type

from ..models import STAttentionBase, TASAttentionModel, TTSAttentionModel
from .registry import register_model

#: Shared defaults of the ``tas_attn_*`` / ``tts_attn_*`` entries (METR-LA-shaped: one speed channel,
#: 12 steps in and out). Override any of them in ``create_model``.
COMMON = dict(input_size=1, output_size=1, horizon=12, window=12, n_nodes=None, hidden_size=64,
              exog_size=0, heads=4, graph_conv="diffusion", k=2, pos_encoding="sinusoidal")

#: The paper's five variants as attention settings. The dropout rate of (d) is not published:
#: 0.1 is our choice. (e) uses the authors' shipped penalty c = -0.05.
VARIANTS: Dict[str, tuple] = {
    "noresid": ("(a) no residual around the temporal attention", dict(residual=False)),
    "none": ("(b) plain temporal attention, no diagonal regularizer", dict()),
    "mask": ("(c) diagonal mask: logit (i, i) = -inf in training and evaluation", dict(diag="mask")),
    "dropout": ("(d) diagonal dropout p = 0.1 (training only, no rescaling)", dict(diag="dropout", diag_p=0.1)),
    "penalty": ("(e) diagonal penalty c = -0.05 on the diagonal logits", dict(diag="penalty", diag_penalty=-0.05)),
}

ARRANGEMENTS: Dict[str, tuple] = {
    "tas_attn": (TASAttentionModel, "T&S", dict(n_layers=3)),
    "tts_attn": (TTSAttentionModel, "TTS", dict(temporal_layers=3, spatial_layers=3)),
}


def _entry(cls: Type[STAttentionBase], defaults: dict, doc: str):
    def entry(**overrides) -> STAttentionBase:
        return cls(**{**defaults, **overrides})

    entry.defaults = defaults
    entry.__doc__ = doc
    return entry


for _arch, (_cls, _label, _layers) in ARRANGEMENTS.items():
    for _variant, (_what, _attn) in VARIANTS.items():
        _name = f"{_arch}_{_variant}"
        _doc = f"{_label} attention model, paper variant {_what}; diffusion convolution on the sensor graph."
        register_model(_entry(_cls, {**COMMON, **_layers, **_attn}, _doc), name=_name,
                       tags=("paper-variant", _arch))

#: The diagonal-sink authors' reference configuration, with real message passing on the sensor graph
#: (their published graph layer keeps only diag(A), i.e. never mixes nodes).
PAPER_TAS = dict(input_size=1, output_size=1, horizon=12, window=12, n_nodes=None, hidden_size=72,
                 exog_size=1, exog_mode="blocks", n_layers=12, heads=8, pos_encoding="tape",
                 dropout=0.1, attn_dropout=0.1, activation="none", graph_conv="diffusion", k=2)

register_model(
    _entry(TASAttentionModel, PAPER_TAS,
           "The authors' reference T&S model (12 blocks, d=72, 8 heads, tAPE, time-of-day conditioning "
           "in every sub-layer, post-LN, no feed-forward) with a diffusion convolution on the sensor graph."),
    name="paper_tas", tags=("paper",))
