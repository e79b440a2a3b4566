"""Spatio-temporal attention models in the two arrangements, T&S and TTS (tsl model contract)."""
from .base import STAttentionBase
from .tas_attention_model import TASAttentionModel
from .tts_attention_model import TTSAttentionModel

__all__ = ["STAttentionBase", "TASAttentionModel", "TTSAttentionModel"]
