"""Data sets by name: ``get_dataset("metr_la", root=...)``, ``list_datasets()``.

A data set is a :class:`~stgnn_diag.datasets.base.SensorDataset` subclass decorated with
:func:`register_dataset`; its ``key`` is the name every command and result file uses (``--dataset``)::

    @register_dataset
    class MyCity(SensorDataset):
        key, name, layout = "my_city", "My City", Layout(folder="my_city", ...)

The built-in entries (``metr_la``, ``pems_bay``, and the synthetic ``lag_hop`` task) register on the first
lookup; their modules import only :mod:`~stgnn_diag.datasets.registration`, not this module.

A name may carry the data set's arguments in brackets, so that every command and result file can name a
configured data set: ``"lag_hop[hop=3,lag=5,graph=grid]"`` is ``get_dataset("lag_hop", hop=3, lag=5,
graph="grid")`` (values are read as int, float, true / false, else text).
"""
from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .._values import split_bracketed
from .registration import _REGISTRY, register_dataset  # noqa: F401  (re-exported)

#: The data set every command uses when none is named.
DEFAULT_DATASET = "metr_la"

def recorded_dataset(record: Mapping[str, Any]) -> str:
    """The data set a stored record names: a run's ``config.json``, a checkpoint's hyper-parameters, a pretrained
    configuration, a bench result's settings. Records written before data sets were an axis name none; they
    are runs on :data:`DEFAULT_DATASET` (METR-LA)."""
    return record.get("dataset") or DEFAULT_DATASET


def split_name(name: str) -> Tuple[str, Dict[str, Any]]:
    """``"lag_hop[hop=3,graph=grid]"`` -> ``("lag_hop", {"hop": 3, "graph": "grid"})``; a plain name has ``{}``."""
    return split_bracketed(name, "data set")


def dataset_slug(name: str) -> str:
    """A data set name as a folder name: ``"lag_hop[hop=3,lag=5]"`` -> ``"lag_hop-hop3-lag5"``; a list value's
    items are joined with ``+`` (``"lag_hop[lag=[1,95]]"`` -> ``"lag_hop-lag1+95"``)."""
    key, args = split_name(name)
    text = {k: "+".join(map(str, v)) if isinstance(v, list) else v for k, v in args.items()}
    return "-".join([key] + [f"{k}{v}" for k, v in text.items()])


def list_datasets() -> List[str]:
    """The registered data set names, sorted."""
    _load_builtin()
    return sorted(_REGISTRY)


def dataset_class(name: str) -> type:
    """The class registered as ``name``; a ``ValueError`` with the close names for an unknown one."""
    _load_builtin()
    name = split_name(name)[0]
    if name not in _REGISTRY:
        close = difflib.get_close_matches(str(name), _REGISTRY, n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"Unknown data set {name!r}; known: {', '.join(sorted(_REGISTRY))}.{hint}")
    return _REGISTRY[name]


def display_name(name: str) -> str:
    """The display name of data set ``name`` (``"METR-LA"``); ``name`` itself if it is not registered."""
    _load_builtin()
    key, args = split_name(name)
    if key not in _REGISTRY:
        return name
    return _REGISTRY[key].name + (f" ({', '.join(f'{k}={v}' for k, v in args.items())})" if args else "")


def check_dataset_name(name: str) -> str:
    """``name`` if it is registered (its bracketed arguments included), else the ``ValueError`` of
    :func:`dataset_class`."""
    dataset_class(name)
    return name


def get_dataset(name: str = DEFAULT_DATASET, root=None, **kwargs):
    """Load the data set registered as ``name``.

    Args:
        name: ``"metr_la"``, ``"pems_bay"``, ``"lag_hop"``, or any registered key (:func:`list_datasets`),
            optionally with arguments in brackets (``"lag_hop[hop=3]"``; keyword arguments win over them).
        root: data root (folder containing the data set folder), or the data set folder itself;
            ``None``: ``$STGNN_DIAG_DATA``, then the default folder.
        **kwargs: passed to the class (``download``, ``base_url``, ``speed_format``, ``progress``).
    """
    return dataset_class(name)(root, **{**split_name(name)[1], **kwargs})


def resolve_data_root(root=None, *, dataset: str = DEFAULT_DATASET, download: bool = True,
                      base_url: Optional[str] = None, progress: bool = True) -> Path:
    """Find (or download) data set ``dataset`` and return its data root
    (see :mod:`stgnn_diag.datasets.root` for the order)."""
    return dataset_class(dataset).resolve_root(root, download=download, base_url=base_url, progress=progress)


def dataset_dir(root, dataset: str = DEFAULT_DATASET) -> Path:
    """The folder of data set ``dataset`` for a data root (``root / "metr_la"``, or ``root`` if it is one)."""
    from .root import layout_dir

    return layout_dir(root, dataset_class(dataset).layout)


def _load_builtin() -> None:
    from . import largest_synthetic, metr_la, pems_bay, synthetic  # noqa: F401  (they register themselves)
