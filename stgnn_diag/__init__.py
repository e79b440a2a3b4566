"""stgnn_diag: diagonal-regularized temporal attention and spatio-temporal GNN tools for PyG / tsl.

Subpackages: :mod:`stgnn_diag.nn` (layers), :mod:`stgnn_diag.models` (T&S / TTS models),
:mod:`stgnn_diag.zoo` (registry), :mod:`stgnn_diag.datasets` (METR-LA, protocols),
:mod:`stgnn_diag.metrics`, :mod:`stgnn_diag.baselines`.
"""
__version__ = "0.2.0"

from ._lazy import lazy_exports

#: Imported on first use (PEP 562), so that ``stgnn-diag --help`` does not load torch and PyG.
_WHERE = {name: "zoo" for name in ("create_model", "from_pretrained", "list_models", "register_model",
                                   "save_pretrained")}
__all__ = ["__version__", *_WHERE]
__getattr__, __dir__ = lazy_exports(__name__, _WHERE, submodules=(
    "nn", "models", "zoo", "datasets", "training", "sensitivity", "bench", "integrations", "metrics", "baselines",
    "tables", "cli"))
