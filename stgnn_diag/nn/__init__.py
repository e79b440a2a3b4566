"""Layers: diagonal-regularized temporal attention, graph convolutions, positional encodings."""
from .adaptive_adjacency import AdaptiveAdjacency, LowRankAdjacency
from .diag_schedule import DiagonalSchedule, attention_layers, set_diagonal_strength
from .diagonal import DIAG_MODES, diagonal_logit_bias, regularizer_logit_bias
from .regularizers import (DiagonalDropout, DiagonalMask, DiagonalPenalty, DiagonalRegularizer, NoRegularizer,
                           make_regularizer, register_regularizer, regularizer_names)
from .diffusion_conv import DiffusionConv
from .graph_utils import as_edge_index, check_edge_index, random_walk_weights
from .positional import PE_KINDS, PositionalEncoding
from .temporal_attention import TemporalAttention

__all__ = [
    "AdaptiveAdjacency", "LowRankAdjacency", "DiagonalSchedule", "attention_layers", "set_diagonal_strength", "DIAG_MODES", "diagonal_logit_bias",
    "regularizer_logit_bias", "DiagonalRegularizer", "NoRegularizer", "DiagonalMask", "DiagonalDropout",
    "DiagonalPenalty", "make_regularizer", "register_regularizer", "regularizer_names", "DiffusionConv", "as_edge_index",
    "check_edge_index", "random_walk_weights", "PE_KINDS", "PositionalEncoding", "TemporalAttention",
]
