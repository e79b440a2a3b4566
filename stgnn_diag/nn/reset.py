"""Re-initialising a module as a fresh one would be."""
from __future__ import annotations

from torch import nn

__all__ = ["reset_children"]


def reset_children(module: nn.Module) -> None:
    """Re-initialise ``module``'s sub-modules as a fresh model would: each top-most sub-module that has
    its own ``reset_parameters`` runs it (a :class:`~stgnn_diag.nn.TemporalAttention` its Xavier init)
    and is not walked further, so the default init of the ``nn.Linear`` layers inside it does not
    overwrite the layer's own."""
    for child in module.children():
        if hasattr(child, "reset_parameters"):
            child.reset_parameters()
        else:
            reset_children(child)
