"""PyG Temporal models behind the tsl forward contract (the zoo's ``pygt:`` namespace).

Every wrapper is built as ``Wrapper(input_size, output_size=None, horizon=12, n_nodes=None,
hidden_size=32, exog_size=0, window=12, **model_specific)`` and called as
``model(x [b, t, n, f], edge_index, edge_weight=None, u=None) -> [b, horizon, n, output_size]``.
Layouts are converted by :mod:`~stgnn_diag.integrations.pygt_layouts` only. Conventions:

* ``edge_index`` is ``[2, E]`` (source, target; info flows source -> target) or a SparseTensor
  ``adj_t``; missing weights are ones; ASTGCN takes no weights and ignores them.
* Covariates ``u`` (``[b, t, exog]`` or ``[b, t, n, exog]``) enter as extra input channels, except
  GMAN, which turns our calendar covariates into its day-of-week / step-of-day codes.
* Models that emit a hidden state get a linear read-out to ``horizon * output_size``.

This package's ``__init__`` imports nothing of PyG Temporal: it holds the one table of wrapped names
(:data:`MODELS`, which the zoo's ``pygt:`` namespace lists) and :func:`build`, which imports the wrapper's module
(``torch_geometric_temporal``, needing ``torch_sparse``) when a model is built. ``base`` holds
:class:`~stgnn_diag.integrations.pygt.base.PyGTModel`, ``snapshot_models`` the models that read a whole window, ``recurrent`` the cells run step by
step. Use ``stgnn_diag.create_model("pygt:Name", ...)`` to get the install hint when PyG Temporal is missing.
"""
from __future__ import annotations

import importlib
from typing import Dict, List, Tuple

from torch import nn

__all__ = ["MODELS", "NOT_WRAPPED", "build", "names", "wrapper_class"]

#: ``pygt:`` zoo name -> (module of this package, wrapper class): the one list of wrapped models.
MODELS: Dict[str, Tuple[str, str]] = {
    "A3TGCN2": ("snapshot_models", "A3TGCN2Model"),
    "AGCRN": ("snapshot_models", "AGCRNModel"),
    "ASTGCN": ("snapshot_models", "ASTGCNModel"),
    "BatchedDCRNN": ("snapshot_models", "BatchedDCRNNModel"),
    "DCRNN": ("recurrent", "DCRNNModel"),
    "GCLSTM": ("recurrent", "GCLSTMModel"),
    "GConvGRU": ("recurrent", "GConvGRUModel"),
    "GConvLSTM": ("recurrent", "GConvLSTMModel"),
    "GMAN": ("snapshot_models", "GMANModel"),
    "MTGNN": ("snapshot_models", "MTGNNModel"),
    "STConv": ("snapshot_models", "STGCNModel"),
    "TGCN": ("recurrent", "TGCNModel"),
    "TGCN2": ("snapshot_models", "TGCN2Model"),
}


#: PyG Temporal 0.56.2 models that are not in the zoo, and why.
NOT_WRAPPED: Dict[str, str] = {
    "MSTGCN": "broken: MSTGCNBlock reshapes [F, B, N, T] straight to [N, F, T * B] (a reshape, not a "
              "permute), mixing samples, nodes and channels whenever batch > 1 or channels > 1",
    "A3TGCN": "single-sample version of A3TGCN2 (wrapped)",
    "EvolveGCNH": "keeps its evolved weight on the module between calls (state leaks across batches); "
                  "output width = input width",
    "EvolveGCNO": "keeps its evolved weight on the module between calls (state leaks across batches)",
    "LRGCN": "relational: needs edge types",
    "DyGrEncoder": "dynamic-graph encoder over single snapshots with an LSTM on one feature stream; "
                   "no forecasting head",
    "MPNNLSTM": "reads a flattened stack of `window` snapshots with a fixed node count (its own layout)",
    "AAGCN": "skeleton action recognition: edge_index fixed at construction, input [N, C, T, V]",
    "DNNTSP": "next-basket set prediction on item embeddings",
    "HeteroGCLSTM": "heterogeneous graphs",
}


def names() -> List[str]:
    """The wrapped models' zoo names (without the ``pygt:`` prefix), sorted."""
    return sorted(MODELS)


def wrapper_class(name: str) -> type:
    """The wrapper class of ``name`` (imports PyG Temporal); ``ValueError`` listing the names for another."""
    if name not in MODELS:
        why = f" ({NOT_WRAPPED[name]})" if name in NOT_WRAPPED else ""
        raise ValueError(f"no PyG Temporal wrapper named {name!r}{why}; available: {names()}")
    module, cls = MODELS[name]
    return getattr(importlib.import_module(f"{__name__}.{module}"), cls)


def build(name: str, **kwargs) -> nn.Module:
    """Build the wrapper of PyG Temporal model ``name`` (see :data:`MODELS`)."""
    return wrapper_class(name)(**kwargs)
