"""Package exports imported on first use (PEP 562), so the command line parses ``--help`` without torch."""
from __future__ import annotations

import importlib
import sys
import types
from typing import Callable, Dict, Iterable, Tuple


def lazy_exports(package: str, where: Dict[str, str], submodules: Iterable[str] = ()) -> Tuple[Callable, Callable]:
    """``(__getattr__, __dir__)`` for ``package``: ``where`` maps an exported name to the submodule that
    defines it (``{"train": "train"}``: ``package.train.train``); ``submodules`` are importable as attributes.

    An export named like its submodule (``training.train``, ``training.evaluate``) stays the export once the
    submodule is imported, as after an eager ``from .train import train``: the import system's binding of the
    submodule on the package is not kept.
    """
    subs = tuple(submodules)

    def __getattr__(name: str):
        if name in where:
            value = getattr(importlib.import_module(f".{where[name]}", package), name)
            object.__setattr__(sys.modules[package], name, value)  # next time a plain attribute
            return value
        if name in subs:
            return importlib.import_module(f".{name}", package)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(where) | set(subs))

    class _Package(types.ModuleType):
        def __setattr__(self, name, value):
            if name in where and isinstance(value, types.ModuleType):
                return  # a submodule named like an export: the export (loaded on first use) wins
            super().__setattr__(name, value)

    sys.modules[package].__class__ = _Package
    return __getattr__, __dir__
