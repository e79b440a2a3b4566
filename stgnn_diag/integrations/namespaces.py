"""The ``tsl:`` and ``pygt:`` zoo namespaces: :data:`TSL` and :data:`PYGT`, declared in ``setup.cfg`` as entry
points of :data:`stgnn_diag.zoo.registry.NAMESPACE_GROUP`, which the zoo loads on the first namespaced lookup.

Neither tsl nor PyG Temporal is imported here: ``names()`` returns the static lists of wrappers
verified with tsl 0.9.5 / PyG Temporal 0.56.2 (the ``pygt:`` names are the keys of
:data:`stgnn_diag.integrations.pygt.MODELS`),
and ``create`` imports the integration only when a model is built, raising
:class:`~stgnn_diag.integrations._require.MissingDependencyError` with the install command when a
package is missing.
"""
from __future__ import annotations

from typing import List

from torch import nn

from ..zoo.registry import Namespace
from ._require import require_pygt, require_tsl

#: ``tsl:`` entries = the forecasting models of ``tsl.nn.models`` that work in tsl 0.9.5.
TSL_NAMES: List[str] = [
    "AGCRNModel", "ARModel", "DCRNNModel", "EvolveGCNModel", "FCRNNModel", "GRUGCNModel",
    "GatedGraphNetworkModel", "GraphWaveNetModel", "RNNEncGCNDecModel", "RNNModel", "STCNModel",
    "STIDModel", "TCNModel", "TransformerModel", "VARModel",
]

def tsl_names() -> List[str]:
    return list(TSL_NAMES)


def pygt_names() -> List[str]:
    from .pygt import names  # the package's __init__ imports nothing of PyG Temporal

    return names()


def create_tsl(name: str, **kwargs) -> nn.Module:
    """``create_model("tsl:<name>", ...)``: a :class:`~stgnn_diag.integrations.tsl_models.TSLModel`."""
    require_tsl(f'create_model("tsl:{name}")')
    from .tsl_models import build_tsl_model

    return build_tsl_model(name, **kwargs)


def create_pygt(name: str, **kwargs) -> nn.Module:
    """``create_model("pygt:<name>", ...)``: a :mod:`~stgnn_diag.integrations.pygt` wrapper."""
    require_pygt(f'create_model("pygt:{name}")')
    from .pygt import build

    return build(name, **kwargs)


#: The ``tsl:`` namespace provider.
TSL = Namespace(tsl_names, create_tsl)
#: The ``pygt:`` namespace provider.
PYGT = Namespace(pygt_names, create_pygt)
