"""Package exports imported on first use (PEP 562), so the command line parses ``--help`` without torch."""
from __future__ import annotations

import importlib
import pkgutil
import sys
from typing import Callable, Dict, Iterable, Tuple


def lazy_exports(package: str, where: Dict[str, str], submodules: Iterable[str] = ()) -> Tuple[Callable, Callable]:
    """``(__getattr__, __dir__)`` for ``package``: ``where`` maps an exported name to the submodule that
    defines it (``{"train": "fit"}``: ``package.fit.train``); ``submodules`` are importable as attributes.

    An export may not be named like a submodule of the package (importing the submodule would rebind the name
    to the module): ``ValueError`` at import time.
    """
    subs = tuple(submodules)
    path = getattr(sys.modules[package], "__path__", None)
    clashes = sorted(set(where) & {m.name for m in pkgutil.iter_modules(path)}) if path else []
    if clashes:
        raise ValueError(f"{package} exports {clashes} named like its submodules; rename the submodules.")

    def __getattr__(name: str):
        if name in where:
            value = getattr(importlib.import_module(f".{where[name]}", package), name)
            setattr(sys.modules[package], name, value)  # next time a plain attribute
            return value
        if name in subs:
            return importlib.import_module(f".{name}", package)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(where) | set(subs))

    return __getattr__, __dir__
