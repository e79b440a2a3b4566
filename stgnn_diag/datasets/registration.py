"""The data set table: :func:`register_dataset` puts a class under its ``key``
(:mod:`~stgnn_diag.datasets.registry` looks names up in it)."""
from __future__ import annotations

from typing import Dict, Type

_REGISTRY: Dict[str, type] = {}


def register_dataset(cls: Type) -> Type:
    """Class decorator: register a :class:`~stgnn_diag.datasets.base.SensorDataset` subclass by its ``key``."""
    key = getattr(cls, "key", "")
    if not key or not key.isidentifier():
        raise ValueError(f"{cls.__name__}.key must be a lower-case identifier (e.g. 'metr_la'), got {key!r}")
    if key in _REGISTRY and _REGISTRY[key] is not cls:
        raise ValueError(f"a data set named {key!r} is already registered ({_REGISTRY[key].__name__})")
    _REGISTRY[key] = cls
    return cls
