"""The ``diag=`` name -> regularizer class table that :func:`register_regularizer` fills."""
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
