"""Import guards for the optional integrations: an error that says exactly what to install.

tsl (``torch-spatiotemporal``) needs ``torch_scatter`` **and** ``torch_sparse`` at import; PyG
Temporal needs ``torch_sparse``. Both are compiled packages: PyPI only has their sources (a build
takes ~20 min), so the message points to PyG's wheel index for the installed torch / CUDA build.
"""
from __future__ import annotations

import importlib
from importlib import metadata
from typing import Dict, List, Optional, Sequence, Tuple

#: PyG's index of prebuilt ``torch-scatter`` / ``torch-sparse`` wheels.
PYG_WHEEL_INDEX = "https://data.pyg.org/whl/torch-{torch}+{cuda}.html"

#: extra -> [(import name, distribution name, what it is)]
REQUIREMENTS: Dict[str, List[Tuple[str, str, str]]] = {
    "tsl": [("torch_scatter", "torch-scatter", "compiled"),
            ("torch_sparse", "torch-sparse", "compiled"),
            ("tsl", "torch-spatiotemporal", "pure")],
    "pygt": [("torch_sparse", "torch-sparse", "compiled"),
             ("torch_geometric_temporal", "torch-geometric-temporal", "pure")],
}

#: Pinned versions of the pure-Python integration packages (``setup.cfg`` extras).
PINS = {"torch-spatiotemporal": "0.9.5", "torch-geometric-temporal": "0.56.2"}


class MissingDependencyError(ImportError):
    """An optional integration's package is missing; the message tells what to install."""


def torch_build() -> Tuple[str, str]:
    """``("2.13.0", "cpu")`` or ``("2.4.0", "cu121")``: the tags of PyG's wheel index for this torch."""
    import torch

    version = torch.__version__.split("+")[0]
    cuda = torch.version.cuda
    return version, ("cu" + cuda.replace(".", "")) if cuda else "cpu"


def wheel_index_url() -> str:
    """PyG's wheel index for the installed torch (``https://data.pyg.org/whl/torch-2.13.0+cpu.html``)."""
    version, cuda = torch_build()
    return PYG_WHEEL_INDEX.format(torch=version, cuda=cuda)


def install_hint(extra: str, missing: Sequence[str] = ()) -> str:
    """The install instructions for ``extra`` (``"tsl"`` or ``"pygt"``)."""
    version, cuda = torch_build()
    lines = [f'  pip install "stgnn-diag[{extra}]"',
             "and, because torch-scatter / torch-sparse have no wheels on PyPI, take them from PyG's "
             f"wheel index for your torch build (torch {version}, {cuda}):",
             f"  pip install torch-scatter torch-sparse -f {wheel_index_url()}",
             f"(generic form: -f {PYG_WHEEL_INDEX.replace('{torch}', '${TORCH}').replace('{cuda}', '${CUDA}')})"]
    if "torch-spatiotemporal" in missing:
        lines.append("Note: the PyPI package named 'tsl' is an unrelated tool; the library is "
                     "'torch-spatiotemporal' (imported as tsl).")
    return "\n".join(lines)


def _missing(extra: str) -> Dict[str, str]:
    """``{distribution: why}`` for the packages of ``extra`` that do not import."""
    out = {}
    for module, dist, _ in REQUIREMENTS[extra]:
        try:
            importlib.import_module(module)
        except ImportError as err:
            out[dist] = f"{type(err).__name__}: {err}"
            continue
        if module == "tsl" and not _is_torch_spatiotemporal():
            out[dist] = "the installed 'tsl' is not torch-spatiotemporal"
    return out


def _is_torch_spatiotemporal() -> bool:
    try:
        metadata.version("torch-spatiotemporal")
    except metadata.PackageNotFoundError:
        return False
    return True


def require(extra: str, feature: Optional[str] = None) -> None:
    """Raise :class:`MissingDependencyError` unless every package of ``extra`` imports.

    Args:
        extra: ``"tsl"`` or ``"pygt"`` (the ``setup.cfg`` extra).
        feature: what the user asked for, for the message (e.g. ``'create_model("tsl:DCRNNModel")'``).
    """
    if extra not in REQUIREMENTS:
        raise ValueError(f"unknown extra {extra!r}; choose one of {sorted(REQUIREMENTS)}")
    missing = _missing(extra)
    if not missing:
        if extra == "tsl":
            _warn_pandas()
        return
    what = feature or f"the {extra} integration"
    pinned = ", ".join(f"{d}=={PINS[d]}" if d in PINS else d for d in missing)
    why = "; ".join(f"{d}: {e}" for d, e in missing.items())
    raise MissingDependencyError(
        f"{what} needs {pinned}, which could not be imported ({why}). Install with\n"
        f"{install_hint(extra, list(missing))}")


def _warn_pandas() -> None:
    try:
        major = int(metadata.version("pandas").split(".")[0])
    except (metadata.PackageNotFoundError, ValueError):
        return
    if major >= 3:
        import warnings

        warnings.warn("tsl 0.9.5 breaks on pandas >= 3 (its datasets use freq='5T' and "
                      "replace(method=...)); install 'pandas<3' (the [tsl] extra pins it).", stacklevel=3)


def require_tsl(feature: Optional[str] = None) -> None:
    """Check that tsl (``torch-spatiotemporal``), ``torch_scatter`` and ``torch_sparse`` import."""
    require("tsl", feature)


def require_pygt(feature: Optional[str] = None) -> None:
    """Check that PyG Temporal and ``torch_sparse`` import."""
    require("pygt", feature)
