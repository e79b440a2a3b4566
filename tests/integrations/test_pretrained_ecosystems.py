"""docs/pretrained.md's examples, run: a shipped model in plain PyTorch, tsl's Predictor, a PyG Batch and a
PyG Temporal snapshot loop give the same forecasts as stgnn_diag's own evaluation."""
import pytest
import pytorch_lightning as pl
import torch
from torch_geometric.data import Batch

import stgnn_diag
from stgnn_diag.integrations.pyg_batch import forward_per_graph, window_to_data
from stgnn_diag.integrations.pygt_data import to_static_graph_temporal_signal
from stgnn_diag.integrations.pygt_snapshots import SnapshotModel
from stgnn_diag.integrations.tsl_data import tsl_datamodule
from stgnn_diag.integrations.tsl_engine import make_predictor, zoo_model
from stgnn_diag.training import evaluate

NAME = "tts_attn_none"
pytestmark = [pytest.mark.filterwarnings("ignore:You called `self.log:UserWarning"),
              pytest.mark.filterwarnings("ignore:`isinstance.treespec, LeafSpec.` is deprecated")]


@pytest.fixture(scope="module")
def shipped(dcrnn_splits):
    model = stgnn_diag.create_model(NAME, pretrained=True).eval()
    inp = model.pretrained_cfg["inputs"]
    batch = dcrnn_splits.test[0:4]
    with torch.no_grad():
        ref = model(batch["x"], dcrnn_splits.edge_index, dcrnn_splits.edge_weight, u=batch["u"])
    return model, inp, batch, ref * inp["scaler_std"] + inp["scaler_mean"]


@pytest.mark.slow
def test_plain_pytorch_matches_evaluate(shipped, dcrnn_splits, metr_la_root, tmp_path):
    _, _, _, mph = shipped
    res = evaluate(NAME, pretrained=True, data_root=metr_la_root, max_windows=None, splits=dcrnn_splits,
                   save_predictions=tmp_path / "p.npz", progress=False)
    import numpy as np
    saved = np.load(tmp_path / "p.npz")["predictions"][:4]
    np.testing.assert_allclose(saved, mph[..., 0].numpy(), rtol=1e-5, atol=1e-4)
    assert res["metrics"]["mae@12"] < 4.19  # ahead of the historical average


def test_tsl_predictor_test_step(metr_la, metr_la_root):
    dm = tsl_datamodule(metr_la, covariates="calendar", batch_size=64, max_windows=200)
    predictor = make_predictor(NAME, {"pretrained": True})
    trainer = pl.Trainer(logger=False, enable_progress_bar=False, enable_model_summary=False, accelerator="cpu")
    (res,) = trainer.test(predictor, datamodule=dm, verbose=False)
    ours = evaluate(NAME, pretrained=True, data_root=metr_la_root, max_windows=200, progress=False)
    assert res["test_mae"] == pytest.approx(ours["metrics"]["mae@avg"], rel=1e-4)
    assert res["test_mae_60min"] == pytest.approx(ours["metrics"]["mae@12"], rel=1e-4)


def test_pyg_batch(shipped, dcrnn_splits):
    model, _, batch, mph = shipped
    graphs = [window_to_data(batch["x"][i], dcrnn_splits.edge_index, dcrnn_splits.edge_weight, u=batch["u"][i])
              for i in range(4)]
    with torch.no_grad():
        pred = forward_per_graph(model, Batch.from_data_list(graphs))  # [4 * 207, 12, 1] scaled
    inp = model.pretrained_cfg["inputs"]
    got = (pred * inp["scaler_std"] + inp["scaler_mean"]).view(4, 207, 12).transpose(1, 2)
    torch.testing.assert_close(got, mph[..., 0], rtol=1e-5, atol=1e-4)


def test_pygt_snapshot_loop(shipped, metr_la):
    model, inp, _, mph = shipped
    signal = to_static_graph_temporal_signal(metr_la, features=("speed", "calendar"), scaling="protocol",
                                             target="mph", split="test")
    snapshot_model = SnapshotModel(model, input_size=1)
    for k, snapshot in zip(range(2), signal):
        with torch.no_grad():
            y_hat = snapshot_model(snapshot.x, snapshot.edge_index, snapshot.edge_attr)  # [207, 12]
        torch.testing.assert_close(y_hat * inp["scaler_std"] + inp["scaler_mean"], mph[k, :, :, 0].t(),
                                   rtol=1e-5, atol=1e-4)
    with pytest.raises(ValueError, match="break the calendar encoding"):
        to_static_graph_temporal_signal(metr_la, features=("speed", "calendar"), scaling="pygt")


def test_the_fallback_tag_with_its_table_fitted_in_plain_pytorch(dcrnn_splits):
    # docs/pretrained.md: the shipped tag with seasonal_fallback, its table fitted by fit_fallback_table. Where a
    # sensor's whole window is missing its forecast (mph) is the historical-median baseline's (computed by the
    # baselines module from the targets' timestamps); elsewhere the tag without the fallback's forecast
    from stgnn_diag.baselines import historical_median
    from stgnn_diag.training import fit_fallback_table

    model = fit_fallback_table(stgnn_diag.create_model("tas_attn_none", pretrained="metr_la_e10_mask_skip_p1_fallback"))
    plain = stgnn_diag.create_model("tas_attn_none", pretrained="metr_la_e10_mask_skip_p1").eval()
    test = dcrnn_splits.test
    down = ~test[0:len(test)]["x_mask"].any(1)[..., 0]                                   # [windows, nodes]
    pick = torch.nonzero(down.any(1)).flatten()[:2]
    batch, inp = test[pick], model.pretrained_cfg["inputs"]
    args = (batch["x"], dcrnn_splits.edge_index, dcrnn_splits.edge_weight)
    with torch.no_grad():
        got = model.eval()(*args, u=batch["u"], x_mask=batch["x_mask"])[..., 0] * inp["scaler_std"] + inp["scaler_mean"]
        other = plain(*args, u=batch["u"], x_mask=batch["x_mask"])[..., 0] * inp["scaler_std"] + inp["scaler_mean"]
    hm = torch.from_numpy(historical_median(dcrnn_splits, "test")[pick.numpy()]).float()   # [2, H, nodes]
    where = down[pick][:, None, :].expand_as(got)
    assert where.any() and (~where).any()
    torch.testing.assert_close(got[where], hm[where], rtol=1e-5, atol=1e-3)
    torch.testing.assert_close(got[~where], other[~where])
    in_tsl = zoo_model("tas_attn_none", pretrained="metr_la_e10_mask_skip_p1_fallback")   # make_predictor's model
    torch.testing.assert_close(in_tsl.fallback.table, model.fallback.table, rtol=0, atol=0)
