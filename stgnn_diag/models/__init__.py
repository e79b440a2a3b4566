"""Spatio-temporal attention models in the two arrangements, T&S and TTS (tsl model contract).

* :class:`TASForecaster` / :class:`TTSForecaster`: the zoo's ``tas_attn_*`` / ``tts_attn_*`` family
  (embeddings, attention + feed-forward blocks, diffusion convolution, window read-out).
* :class:`TASAttentionModel` / :class:`TTSAttentionModel`: the diagonal-sink paper's template (the
  authors' reference ``paper_tas``): post-LN attention and graph sub-layers, a 12 x 12 time read-out.
"""
from .base import STAttentionBase
from .forecaster_base import STForecasterBase
from .tas_attention_model import TASAttentionModel
from .tas_forecaster import TASForecaster
from .tts_attention_model import TTSAttentionModel
from .tts_forecaster import TTSForecaster

__all__ = ["STAttentionBase", "STForecasterBase", "TASAttentionModel", "TASForecaster", "TTSAttentionModel",
           "TTSForecaster"]
