"""Our METR-LA as tsl's SpatioTemporalDataset / SpatioTemporalDataModule (real tsl 0.9.5)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from tsl.data import SpatioTemporalDataModule, SpatioTemporalDataset
from tsl.ops.connectivity import adj_to_edge_index

from stgnn_diag.datasets import make_splits
from stgnn_diag.integrations.tsl_data import tsl_datamodule, to_tsl_dataset, tsl_edge_index_to_ours


@pytest.fixture(scope="module")
def dcrnn_dm(metr_la):
    dm = tsl_datamodule(metr_la, protocol="dcrnn", covariates="calendar", batch_size=4)
    dm.setup()
    return dm


def _edges(edge_index, edge_weight):
    return {(int(s), int(d)): float(w) for (s, d), w in zip(edge_index.t(), edge_weight)}


def test_datamodule_in_one_call_matches_the_dcrnn_protocol(dcrnn_dm, dcrnn_splits):
    dm = dcrnn_dm
    assert isinstance(dm, SpatioTemporalDataModule) and isinstance(dm.torch_dataset, SpatioTemporalDataset)
    assert (dm.train_len, dm.val_len, dm.test_len) == (23974, 3425, 6850) == dcrnn_splits.sizes()
    for split, loader in (("train", dm.train_dataloader(shuffle=False)), ("val", dm.val_dataloader()),
                          ("test", dm.test_dataloader())):
        batch = next(iter(loader))
        ref = dcrnn_splits[split][np.arange(4)]
        assert torch.allclose(batch.x, ref["x"], atol=1e-5)  # tsl adds eps = 5e-8 to the std
        assert torch.equal(batch.y, ref["y"])  # targets stay in mph
        assert torch.equal(batch.mask, ref["mask"])  # zeros (missing readings) are masked
        assert torch.equal(batch.u, ref["u"])  # [b, t, 8]: time of day + one-hot weekday
        assert torch.allclose(batch.transform["y"].inverse_transform(batch.x), ref["x"] * 19.493739 + 54.405928,
                              atol=1e-3)


def test_connectivity_keeps_our_direction(dcrnn_dm, metr_la):
    batch = next(iter(dcrnn_dm.test_dataloader()))
    ei, ew = batch.edge_index, batch.edge_weight
    assert torch.equal(ei, metr_la.edge_index) and torch.equal(ew, metr_la.edge_weight)
    adj = torch.as_tensor(metr_la.adj)
    assert torch.equal(adj[ei[0], ei[1]], ew)  # edge i -> j carries adj[i, j]
    assert not torch.equal(adj, adj.t())  # METR-LA is asymmetric, so direction matters
    # tsl's own adj_to_edge_index transposes (adj[i, j] -> edge j -> i); our helper undoes it
    t_ei, t_ew = adj_to_edge_index(adj)
    assert _edges(t_ei, t_ew) != _edges(ei, ew)
    assert _edges(tsl_edge_index_to_ours(t_ei), t_ew) == _edges(ei, ew)


def test_paper_protocol_and_per_node_scaler(metr_la):
    dm = tsl_datamodule(metr_la, protocol="paper", covariates="tod", batch_size=3, max_windows=5)
    dm.setup()
    ref_splits = make_splits(metr_la, "paper", max_windows=5)
    assert (dm.train_len, dm.val_len, dm.test_len) == ref_splits.sizes() == (5, 5, 5)
    batch = next(iter(dm.val_dataloader()))
    ref = ref_splits.val[np.arange(3)]
    assert tuple(dm.torch_dataset.scalers["target"].bias.shape) == (1, 207, 1)
    assert torch.allclose(batch.x, ref["x"], atol=1e-5)
    assert torch.equal(batch.y, ref["y"])
    assert torch.equal(batch.u, ref["u"][..., :1])  # time of day only (paper_tas' exog)


def test_without_covariates_and_with_tsl_scaler(metr_la):
    dm = tsl_datamodule(metr_la, covariates=None, scaler="tsl", batch_size=2)
    dm.setup()
    batch = next(iter(dm.train_dataloader(shuffle=False)))
    assert "u" not in batch.input
    # tsl fits on the training steps (inputs and targets of the training windows), zeros masked out
    stop = 23974 - 1 + 24  # last training window start + window + horizon
    speed = metr_la.speed[:stop]
    expected = speed[speed != 0].astype(np.float64).mean()
    assert float(dm.torch_dataset.scalers["target"].bias.flatten()[0]) == pytest.approx(expected, rel=1e-4)
    with pytest.raises(ValueError):
        tsl_datamodule(metr_la, scaler="minmax")
    with pytest.raises(ValueError):
        to_tsl_dataset(metr_la, covariates="holidays")


def test_input_mask_batches_carry_the_windows_mask_beside_the_targets_mask(metr_la, dcrnn_splits):
    import stgnn_diag
    dm = tsl_datamodule(metr_la, protocol="dcrnn", batch_size=8, input_mask=True)
    dm.setup()
    batch = next(iter(dm.test_dataloader()))
    part = dcrnn_splits["test"]
    starts = part.starts[:8]
    raw = torch.stack([part.speed[int(s):int(s) + 12] for s in starts]).unsqueeze(-1)
    assert torch.equal(batch.x_mask, raw != 0) and bool((~batch.x_mask).any())  # the inputs' own mask
    assert torch.equal(batch.mask, part[np.arange(8)]["mask"])  # tsl's mask stays the targets'
    model = stgnn_diag.create_model("tas_attn_none", n_nodes=207, input_mask=True).eval()
    with torch.no_grad():
        y = model(**batch.input)  # what tsl's Predictor hands the model
        y_without = model(batch.x, batch.edge_index, batch.edge_weight, u=batch.u,
                          x_mask=torch.ones_like(batch.x_mask))
    assert y.shape == (8, 12, 207, 1) and not torch.allclose(y, y_without)
