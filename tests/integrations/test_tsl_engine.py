"""The zoo inside tsl.engines.Predictor (real tsl 0.9.5, pytorch_lightning), checkpoints on torch >= 2.6."""
from __future__ import annotations

import pickle

import pytest
import pytorch_lightning as pl
import torch

import stgnn_diag
from stgnn_diag.integrations.tsl_data import tsl_datamodule
from stgnn_diag.integrations.tsl_engine import (load_checkpoint, load_model_weights, load_predictor, make_predictor,
                                                zoo_model)
from stgnn_diag.zoo import get_entry

OURS = stgnn_diag.list_models(native=True)
pytestmark = [pytest.mark.filterwarnings("ignore:You called `self.log:UserWarning"),  # logger=False on purpose
              pytest.mark.filterwarnings("ignore:`isinstance.treespec, LeafSpec.` is deprecated")]  # lightning 2.6
#: tiny versions of the entries (the keys an entry does not have are left out)
TINY = dict(hidden_size=8, heads=2, n_layers=1, temporal_layers=1, spatial_layers=1, n_nodes=207)


@pytest.fixture(scope="module")
def datamodules(metr_la):
    """Few windows of real METR-LA: without covariates, with time of day (``paper_tas``), with the calendar
    (time of day + weekday: the forecasters)."""
    out = {}
    for cov in (None, "tod", "calendar"):
        dm = tsl_datamodule(metr_la, covariates=cov, batch_size=2, max_windows=4)
        dm.setup()
        out[cov] = dm
    return out


def _trainer(tmp_path):
    return pl.Trainer(max_epochs=1, limit_train_batches=2, limit_val_batches=1, limit_test_batches=1,
                      num_sanity_val_steps=0, enable_progress_bar=False, enable_model_summary=False, logger=False,
                      enable_checkpointing=False, accelerator="cpu", devices=1, default_root_dir=tmp_path)


def _tiny(name):
    defaults = get_entry(name).defaults if get_entry(name).native else {"hidden_size": 0, "n_nodes": 0}
    return {k: v for k, v in TINY.items() if k in defaults}


def _train_test_reload(name, kwargs, dm, tmp_path):
    predictor = make_predictor(name, kwargs, lr=1e-2)
    before = [p.detach().clone() for p in predictor.parameters()]
    trainer = _trainer(tmp_path)
    trainer.fit(predictor, datamodule=dm)
    assert any(not torch.equal(a, b) for a, b in zip(before, predictor.parameters()))
    (res,) = trainer.test(predictor, datamodule=dm, verbose=False)
    assert {"test_mae", "test_mape", "test_mse", "test_mae_15min", "test_mae_60min"} <= set(res)
    assert all(v == v and v < float("inf") for v in res.values())

    path = tmp_path / "model.ckpt"
    trainer.save_checkpoint(path)
    reloaded = load_predictor(path)
    assert type(reloaded.model) is type(predictor.model)
    batch = next(iter(dm.test_dataloader()))
    predictor.eval()
    with torch.no_grad():
        y_hat = predictor.predict_batch(batch)
        assert torch.equal(reloaded.predict_batch(batch), y_hat)
        # tsl's MaskedMAE against a hand-computed masked MAE (mph, missing targets ignored)
        metrics, _ = reloaded.compute_metrics(batch)
    mask = batch.mask
    manual = (y_hat - batch.y).abs()[mask].mean()
    assert float(metrics["test_mae"]) == pytest.approx(float(manual), rel=1e-5)
    return path


@pytest.mark.parametrize("name", OURS)
def test_every_registered_model_trains_evaluates_and_reloads(name, datamodules, tmp_path):
    exog = get_entry(name).defaults.get("exog_size", 0)
    assert exog in (0, 1, 8)
    _train_test_reload(name, _tiny(name), datamodules[{0: None, 1: "tod", 8: "calendar"}[exog]], tmp_path)


@pytest.mark.parametrize("name", ["tsl:GraphWaveNetModel", "pygt:STConv"])
def test_ecosystem_entries_share_the_protocol(name, datamodules, tmp_path):
    _train_test_reload(name, dict(n_nodes=207, hidden_size=8), datamodules[None], tmp_path)


def test_tsl_load_model_breaks_and_our_route_around_works(datamodules, tmp_path):
    path = _train_test_reload("tts_attn_mask", _tiny("tts_attn_mask"), datamodules["calendar"], tmp_path)
    predictor = make_predictor("tts_attn_mask", _tiny("tts_attn_mask"))
    with pytest.raises(pickle.UnpicklingError, match="[Ww]eights only load failed"):
        predictor.load_model(str(path))  # tsl 0.9.5 on torch >= 2.6
    load_model_weights(predictor, path)
    ref = load_predictor(path)
    assert all(torch.equal(a, b) for a, b in zip(predictor.state_dict().values(), ref.state_dict().values()))
    other = make_predictor("tts_attn_mask", {**_tiny("tts_attn_mask"), "hidden_size": 4})
    with pytest.raises(ValueError, match="hidden_size"):
        load_model_weights(other, path)


class Untrusted:  # a class from a module outside the trusted packages
    pass


def test_load_checkpoint_refuses_untrusted_globals(tmp_path):
    path = tmp_path / "evil.ckpt"
    torch.save({"state_dict": {}, "hyper_parameters": {"thing": Untrusted()}}, path)
    with pytest.raises(pickle.UnpicklingError, match="Untrusted"):
        load_checkpoint(path)
    assert isinstance(load_checkpoint(path, trusted=True)["hyper_parameters"]["thing"], Untrusted)
    assert isinstance(load_checkpoint(path, extra_prefixes=(__name__ + ".",))["hyper_parameters"]["thing"], Untrusted)


def test_zoo_model_is_create_model():
    torch.manual_seed(0)
    a = zoo_model("tas_attn_penalty", hidden_size=8, heads=2, n_nodes=5)
    torch.manual_seed(0)
    b = stgnn_diag.create_model("tas_attn_penalty", hidden_size=8, heads=2, n_nodes=5)
    assert type(a) is type(b) and all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


def test_a_perturbed_sensor_reaches_its_successors_in_a_tsl_pipeline(metr_la):
    """One directed graph layer (GCN, messages source -> target) inside tsl's Predictor: perturbing sensor s
    changes the forecast of its successors (adj[s, j] != 0), not of its predecessors (adj[p, s] != 0), both with
    our datamodule's connectivity and with tsl's own adj_to_edge_index (reversed, flipped back)."""
    import copy

    from tsl.ops.connectivity import adj_to_edge_index

    adj = torch.as_tensor(metr_la.adj) != 0
    adj.fill_diagonal_(False)
    only_out = adj & ~adj.t()  # j is a successor of s and not a predecessor
    s = next(i for i in range(adj.size(0)) if only_out[i].any() and only_out[:, i].any())
    succ, pred = int(only_out[s].nonzero()[0]), int(only_out[:, s].nonzero()[0])
    tsl_ei, tsl_ew = adj_to_edge_index(torch.as_tensor(metr_la.adj))
    tsl_data = copy.copy(metr_la)
    tsl_data.edge_index, tsl_data.edge_weight = tsl_ei, tsl_ew.float()
    kw = dict(n_nodes=207, hidden_size=8, heads=2, temporal_layers=1, spatial_layers=1, graph_conv="gcn")
    for data, convention, mirrored in ((metr_la, "ours", False), (tsl_data, "tsl", False), (tsl_data, "ours", True)):
        dm = tsl_datamodule(data, covariates="calendar", batch_size=1, max_windows=2)
        dm.setup()
        batch = next(iter(dm.test_dataloader()))
        torch.manual_seed(0)
        predictor = make_predictor("tts_attn_none", kw, edge_convention=convention).eval()
        with torch.no_grad():
            before = predictor.predict_batch(batch)
            x = batch.x.clone()
            x[:, :, s] += 1.0
            batch.x = x
            delta = (predictor.predict_batch(batch) - before).abs()[0].amax(dim=(0, 2))  # per node
        if mirrored:  # tsl's connectivity taken as ours: the graph is mirrored, predecessors respond instead
            assert delta[pred] > 0 and delta[succ] == 0
            continue
        assert delta[s] > 0 and delta[succ] > 0, convention
        assert delta[pred] == 0, convention
        assert int((delta > 0).sum()) == 1 + int(adj[s].sum())  # s and its successors, nothing else


def test_tsl_model_class_idiom_builds_the_named_variant(datamodules, tmp_path):
    """``Predictor(model_class=type(create_model(name)), model_kwargs=...)`` as tsl's examples write it, with
    ``filter_model_args_``: the named variant (not the class defaults), trainable and reloadable."""
    from tsl.engines import Predictor
    from tsl.metrics.torch import MaskedMAE

    from stgnn_diag.nn import attention_layers

    cls = type(stgnn_diag.create_model("tts_attn_penalty", n_nodes=207))
    model_kwargs = dict(n_nodes=207, hidden_size=8, heads=2, temporal_layers=1, spatial_layers=1, input_size=1,
                        horizon=12, window=12, exog_size=8, not_an_argument=3)
    cls.filter_model_args_(model_kwargs)
    assert "not_an_argument" not in model_kwargs and model_kwargs["hidden_size"] == 8
    predictor = Predictor(model_class=cls, model_kwargs=model_kwargs, optim_class=torch.optim.Adam,
                          optim_kwargs={"lr": 1e-2}, loss_fn=MaskedMAE())
    layers = attention_layers(predictor.model)
    assert layers and all(m.diag == "penalty" and float(m.regularizer.penalty) == pytest.approx(-0.05) for m in layers)
    assert isinstance(predictor.model, stgnn_diag.models.TTSForecaster)
    trainer = _trainer(tmp_path)
    trainer.fit(predictor, datamodule=datamodules["calendar"])
    trainer.save_checkpoint(tmp_path / "m.ckpt")
    reloaded = load_predictor(tmp_path / "m.ckpt")  # the class pickles by name and passes the safe loader
    assert type(reloaded.model) is cls
