"""stgnn_diag: diagonal-regularized temporal attention and spatio-temporal GNN tools for PyG / tsl.

Subpackages: :mod:`stgnn_diag.nn` (layers), :mod:`stgnn_diag.models` (T&S / TTS models),
:mod:`stgnn_diag.zoo` (registry), :mod:`stgnn_diag.datasets` (METR-LA, protocols),
:mod:`stgnn_diag.metrics`, :mod:`stgnn_diag.baselines`.
"""
__version__ = "0.1.0"

from .zoo import create_model, from_pretrained, list_models, register_model, save_pretrained  # noqa: E402

__all__ = ["__version__", "create_model", "from_pretrained", "list_models", "register_model", "save_pretrained"]
