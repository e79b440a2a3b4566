"""stgnn_diag: diagonal-regularized temporal attention and spatio-temporal GNN tools for PyG / tsl."""
__version__ = "0.1.0"

from .zoo import create_model, list_models, register_model  # noqa: E402

__all__ = ["__version__", "create_model", "list_models", "register_model"]
