"""Package exports imported on first use (PEP 562), so the command line parses ``--help`` without torch."""
from __future__ import annotations

import importlib
from typing import Callable, Dict, Iterable, Tuple


def lazy_exports(package: str, where: Dict[str, str], submodules: Iterable[str] = ()) -> Tuple[Callable, Callable]:
    """``(__getattr__, __dir__)`` for ``package``: ``where`` maps an exported name to the submodule that
    defines it (``{"train": "train"}``: ``package.train.train``); ``submodules`` are importable as attributes."""
    subs = tuple(submodules)

    def __getattr__(name: str):
        if name in where:
            return getattr(importlib.import_module(f".{where[name]}", package), name)
        if name in subs:
            return importlib.import_module(f".{name}", package)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(where) | set(subs))

    return __getattr__, __dir__
