"""The hint an input-shape error gives when ``x`` is in one of PyG Temporal's layouts instead of ours."""
from __future__ import annotations

__all__ = ["layout_hint"]

#: PyG Temporal's 4-d layouts: where the time, node and feature axes of ``x`` are (see
#: :mod:`stgnn_diag.integrations.pygt_layouts`).
_LAYOUTS = {"BNFT": (3, 1, 2), "BFNT": (3, 2, 1)}


def layout_hint(shape, model) -> str:
    """A sentence naming the PyG Temporal layout that ``shape`` would fit, if one does."""
    n_nodes = getattr(model, "n_nodes", None)
    for name, (t_ax, n_ax, f_ax) in _LAYOUTS.items():
        if shape[t_ax] == model.window and shape[f_ax] == model.input_size and n_nodes in (None, shape[n_ax]):
            return (f" x looks like PyG Temporal's {name} layout ([batch, {'nodes, features' if name == 'BNFT' else 'features, nodes'}"
                    f", time]); the models take [batch, time, nodes, features]: "
                    f"stgnn_diag.integrations.pygt_layouts.from_layout(x, {name!r}).")
    return ""
