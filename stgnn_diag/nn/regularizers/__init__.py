"""Diagonal regularizers as modules, chosen by name (``TemporalAttention(diag="mask")``).

A regularizer is a :class:`~stgnn_diag.nn.regularizers.base.DiagonalRegularizer` subclass in its own file,
decorated with :func:`register_regularizer`, plus one import line below::

    @register_regularizer
    class DiagonalMask(DiagonalRegularizer):
        name = "mask"
        def removed(self, t, device=None): return torch.eye(t, dtype=torch.bool, device=device)
"""
from __future__ import annotations

from typing import Dict, Tuple, Type

_REGISTRY: Dict[str, type] = {}


def register_regularizer(cls: Type) -> Type:
    """Class decorator: make ``cls`` selectable as ``diag=cls.name``."""
    if not cls.name or cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise ValueError(f"{cls.__name__}: a regularizer needs a new, non-empty name (got {cls.name!r}).")
    _REGISTRY[cls.name] = cls
    return cls


def regularizer_names() -> Tuple[str, ...]:
    """The registered ``diag=`` names, in registration order."""
    return tuple(_REGISTRY)


def make_regularizer(diag: str, *, diag_p: float = 0.0, diag_penalty: float = 0.0, learn_penalty: bool = False,
                     heads: int = 1):
    """The regularizer registered as ``diag``, built from :class:`~stgnn_diag.nn.TemporalAttention`'s arguments.

    Raises:
        ValueError: an unknown name, or arguments the regularizer would ignore or cannot take.
    """
    if diag not in _REGISTRY:
        raise ValueError(f"Unknown diag mode {diag!r}; choose one of {regularizer_names()}.")
    return _REGISTRY[diag].from_args(diag_p=diag_p, diag_penalty=diag_penalty, learn_penalty=learn_penalty,
                                     heads=heads)


from .base import DiagonalRegularizer  # noqa: E402
from .none import NoRegularizer  # noqa: E402
from .mask import DiagonalMask  # noqa: E402
from .dropout import DiagonalDropout  # noqa: E402
from .penalty import DiagonalPenalty  # noqa: E402

__all__ = ["DiagonalRegularizer", "NoRegularizer", "DiagonalMask", "DiagonalDropout", "DiagonalPenalty",
           "register_regularizer", "regularizer_names", "make_regularizer"]
