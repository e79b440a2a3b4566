"""Diagonal regularizers as modules, chosen by name (``TemporalAttention(diag="mask")``).

A regularizer is a :class:`~stgnn_diag.nn.regularizers.base.DiagonalRegularizer` subclass in its own file,
decorated with :func:`~stgnn_diag.nn.regularizers.registry.register_regularizer`, plus one import line below::

    @register_regularizer
    class DiagonalMask(DiagonalRegularizer):
        name = "mask"
        def removed(self, t, device=None): return torch.eye(t, dtype=torch.bool, device=device)
"""
from .registry import make_regularizer, register_regularizer, regularizer_names
from .base import DiagonalRegularizer
from .none import NoRegularizer
from .mask import DiagonalMask
from .dropout import DiagonalDropout
from .penalty import DiagonalPenalty

__all__ = ["DiagonalRegularizer", "NoRegularizer", "DiagonalMask", "DiagonalDropout", "DiagonalPenalty",
           "register_regularizer", "regularizer_names", "make_regularizer"]
