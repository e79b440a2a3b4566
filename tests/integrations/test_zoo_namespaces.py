"""Every ``tsl:`` and ``pygt:`` zoo entry on METR-LA-shaped input (207 nodes, batch 2), real packages."""
from __future__ import annotations

import pytest
import torch
from torch_sparse import SparseTensor

import stgnn_diag
from stgnn_diag.zoo import UnknownModelError

TSL = stgnn_diag.list_models("tsl:*")
PYGT = stgnn_diag.list_models("pygt:*")
ALL = TSL + PYGT
SMALL = dict(input_size=1, output_size=1, horizon=12, n_nodes=207, hidden_size=8, window=12)


def test_namespaces_list_the_verified_wrappers():
    import tsl.nn.models as tsl_nn_models

    import torch_geometric_temporal.nn as pygt_nn

    from stgnn_diag.integrations import pygt
    from stgnn_diag.integrations.tsl_models import NOT_WRAPPED, TSL_SPECS

    assert len(TSL) == 15 and len(PYGT) == 13
    assert TSL == sorted(f"tsl:{n}" for n in TSL_SPECS)
    assert PYGT == sorted(f"pygt:{n}" for n in pygt.MODELS)
    for name in pygt.MODELS:  # each name builds the wrapper of the PyG Temporal class of that name
        klass = pygt.wrapper_class(name)
        assert issubclass(klass, pygt.base.PyGTModel) and hasattr(pygt_nn, klass.wrapped), name
    assert not set(pygt.MODELS) & set(pygt.NOT_WRAPPED) and all(hasattr(pygt_nn, n) for n in pygt.NOT_WRAPPED)
    with pytest.raises(ValueError, match="MSTGCN.*broken"):
        pygt.build("MSTGCN")
    # every model class tsl 0.9.5 ships is either wrapped or listed (with a reason) as not wrapped
    shipped = set(tsl_nn_models.classes) - {"BaseModel"}
    assert shipped == set(TSL_SPECS) | set(NOT_WRAPPED)
    assert not set(TSL_SPECS) & set(NOT_WRAPPED)


def test_unknown_namespaced_names_raise():
    with pytest.raises(UnknownModelError, match="tsl:DCRNNModel"):
        stgnn_diag.create_model("tsl:DCRNNModle")
    with pytest.raises(UnknownModelError):
        stgnn_diag.create_model("tsl:GRINModel")  # imputation model: not a zoo entry
    with pytest.raises(UnknownModelError):
        stgnn_diag.create_model("nope:GMAN")


@pytest.mark.parametrize("name", ALL)
def test_forward_contract_on_metr_la(name, metr_batch):
    x, ei, ew = metr_batch["x"], metr_batch["edge_index"], metr_batch["edge_weight"]
    model = stgnn_diag.create_model(name, exog_size=0, **SMALL).eval()  # eval: no dropout, BN running stats
    ref = model(x, ei, ew)
    assert ref.shape == (2, 12, 207, 1)
    assert torch.isfinite(ref).all()
    ref.abs().mean().backward()
    assert sum(float(p.grad.abs().sum()) for p in model.parameters() if p.grad is not None) > 0
    ref = ref.detach()
    with torch.no_grad():
        # a layout bug that mixes samples would leak sample 1's change into sample 0
        x2 = x.clone()
        x2[1] = torch.randn_like(x2[1])
        out = model(x2, ei, ew)
        assert torch.allclose(out[0], ref[0], atol=1e-5)
        assert not torch.allclose(out[1], ref[1], atol=1e-5)
        # a SparseTensor adj_t (PyG's transposed layout, other edge order) is the same graph
        adj_t = SparseTensor(row=ei[1], col=ei[0], value=ew, sparse_sizes=(207, 207))
        assert torch.allclose(model(x, adj_t), ref, atol=1e-4)


@pytest.mark.parametrize("name", ALL)
def test_covariates_reach_the_model(name, metr_batch):
    x, ei, ew, u = metr_batch["x"][:1], metr_batch["edge_index"], metr_batch["edge_weight"], metr_batch["u"][:1]
    model = stgnn_diag.create_model(name, exog_size=8, **SMALL).eval()
    with torch.no_grad():
        y = model(x, ei, ew, u)
        assert y.shape == (1, 12, 207, 1) and torch.isfinite(y).all()
        u2 = u.clone()
        u2[..., 0] = (u2[..., 0] + 0.25) % 1.0  # six hours later
        u2[..., 1:] = u2[..., 1:].roll(3, dims=-1)  # another weekday
        assert not torch.allclose(model(x, ei, ew, u2), y, atol=1e-6)
    with pytest.raises(ValueError):
        model(x, ei, ew)  # u missing


@pytest.mark.parametrize("name", ["tsl:GatedGraphNetworkModel", "tsl:ARModel", "pygt:ASTGCN", "pygt:GMAN"])
def test_argument_mapping_checks(name, metr_batch):
    x, ei, ew = metr_batch["x"], metr_batch["edge_index"], metr_batch["edge_weight"]
    model = stgnn_diag.create_model(name, exog_size=0, **{**SMALL, "horizon": 3})
    assert model(x, ei, ew).shape == (2, 3, 207, 1)
    with pytest.raises(ValueError, match="window|steps"):
        model(x[:, :6], ei, ew)  # built for window=12
    with pytest.raises(ValueError, match="n_nodes|nodes"):
        model(x[:, :, :100], ei[:, (ei < 100).all(0)], ew[(ei < 100).all(0)])


@pytest.mark.parametrize("name", ["pygt:ASTGCN", "pygt:MTGNN", "pygt:TGCN2", "pygt:STConv", "tsl:DCRNNModel"])
def test_multi_channel_input_and_output(name, metr_batch):
    """One entry per output layout ("B N (H O)", "B (H O) N 1", hidden-state read-outs)."""
    x = torch.cat([metr_batch["x"], metr_batch["x"] ** 2], dim=-1)
    model = stgnn_diag.create_model(name, **{**SMALL, "input_size": 2, "output_size": 3, "horizon": 4})
    assert model(x, metr_batch["edge_index"], metr_batch["edge_weight"]).shape == (2, 4, 207, 3)
