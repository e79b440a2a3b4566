"""Our data <-> PyG Temporal: METRLADatasetLoader files (real loader, offline), signals, snapshot loops."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_geometric.loader import DataLoader
from torch_geometric_temporal.dataset import METRLADatasetLoader

import stgnn_diag
from stgnn_diag.datasets import make_splits
from stgnn_diag.integrations.pygt_data import (load_metrla_loader, read_metrla_loader_files, signal_to_windows,
                                               to_static_graph_temporal_signal)
from stgnn_diag.integrations.pygt_snapshots import SnapshotModel


@pytest.fixture(scope="module")
def loader(pygt_folder):
    def no_download(*args, **kwargs):  # pragma: no cover - must not be reached
        raise AssertionError("METRLADatasetLoader tried to download")

    mp = pytest.MonkeyPatch()
    mp.setattr(METRLADatasetLoader, "_download_url", no_download)
    try:
        yield load_metrla_loader(pygt_folder)
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def loader_signal(loader):
    return loader.get_dataset(num_timesteps_in=12, num_timesteps_out=12)


def test_real_loader_reads_our_files(loader, loader_signal, metr_la):
    assert torch.equal(loader.A, torch.as_tensor(metr_la.adj))
    assert tuple(loader.X.shape) == (207, 2, 34272)
    # the loader z-scores each channel over all steps: undo it with independently computed statistics
    raw = np.stack([metr_la.speed, np.broadcast_to(metr_la.time_of_day()[:, None], metr_la.speed.shape)], -1)
    raw = raw.astype(np.float32).transpose(1, 2, 0)
    mean, std = raw.mean(axis=(0, 2)), (raw - raw.mean(axis=(0, 2)).reshape(1, -1, 1)).std(axis=(0, 2))
    back = loader.X.numpy() * std.reshape(1, -1, 1) + mean.reshape(1, -1, 1)
    np.testing.assert_allclose(back[:, 0].T, metr_la.speed, atol=2e-4)
    np.testing.assert_allclose(back[0, 1], metr_la.time_of_day(), atol=1e-6)
    # same edges, same direction: PyG Temporal's dense_to_sparse gives adj[i, j] -> edge i -> j, as ours
    assert loader_signal.snapshot_count == 34249
    snap = loader_signal[0]
    assert torch.equal(snap.edge_index, metr_la.edge_index)
    assert torch.equal(snap.edge_attr, metr_la.edge_weight)
    src, dst = snap.edge_index
    assert torch.equal(snap.edge_attr, torch.as_tensor(metr_la.adj)[src, dst])


def test_our_signal_equals_the_loaders(loader_signal, metr_la):
    ours = to_static_graph_temporal_signal(metr_la, scaling="pygt", target="input")
    assert ours.snapshot_count == loader_signal.snapshot_count
    for k in (0, 1, 12345, ours.snapshot_count - 1):
        a, b = loader_signal[k], ours[k]
        assert torch.equal(a.x, b.x) and torch.equal(a.y, b.y)
        assert torch.equal(a.edge_index, b.edge_index) and torch.equal(a.edge_attr, b.edge_attr)
        assert torch.equal(b.mask, torch.as_tensor(metr_la.speed[k + 12:k + 24].T != 0).float())


def test_files_read_back_exactly(pygt_folder, metr_la):
    back = read_metrla_loader_files(pygt_folder)
    assert np.array_equal(back.speed, metr_la.speed)
    assert np.array_equal(back.mask, metr_la.mask)
    assert np.array_equal(back.timestamps, metr_la.timestamps)
    assert np.array_equal(back.covariates(), metr_la.covariates())
    assert np.array_equal(back.adj, metr_la.adj)
    assert torch.equal(back.edge_index, metr_la.edge_index) and torch.equal(back.edge_weight, metr_la.edge_weight)
    a, b = make_splits(back, max_windows=4), make_splits(metr_la, max_windows=4)
    assert a.sizes() == b.sizes()
    ba, bb = a.test[np.arange(4)], b.test[np.arange(4)]
    assert torch.equal(ba["y"], bb["y"]) and torch.equal(ba["u"], bb["u"])
    assert torch.allclose(ba["x"], bb["x"], atol=1e-5)  # float32 file: scaler equal to ~1e-7


def test_irregular_time_of_day_is_refused(tmp_path):
    values = np.zeros((10, 3, 2), dtype=np.float32)
    values[:, :, 1] = np.array([0, 1, 2, 3, 5, 6, 7, 8, 9, 10])[:, None] / 288
    np.save(tmp_path / "node_values.npy", values)
    np.save(tmp_path / "adj_mat.npy", np.eye(3, dtype=np.float32))
    with pytest.raises(ValueError, match="regular grid"):
        read_metrla_loader_files(tmp_path)
    with pytest.raises(FileNotFoundError):
        load_metrla_loader(tmp_path / "missing")


def test_windows_to_signal_and_back(metr_la):
    splits = make_splits(metr_la, "dcrnn", max_windows=6)
    sig = to_static_graph_temporal_signal(metr_la, features=("speed",), scaling="protocol", target="mph",
                                          starts=splits.test.starts)
    assert sig.snapshot_count == 6 and tuple(sig[0].x.shape) == (207, 1, 12) and tuple(sig[0].y.shape) == (207, 12)
    back = signal_to_windows(sig)
    ref = splits.test[np.arange(6)]
    assert torch.equal(back["x"], ref["x"])
    assert torch.equal(back["y"], ref["y"])
    assert torch.equal(back["mask"].bool(), ref["mask"])
    assert torch.equal(back["edge_index"], metr_la.edge_index)
    by_split = to_static_graph_temporal_signal(metr_la, features=("speed",), scaling="protocol", target="mph",
                                               split="test")
    assert by_split.snapshot_count == 6850 and torch.equal(by_split[0].x, sig[0].x)


def test_our_model_in_a_pygt_style_snapshot_loop(loader_signal):
    """PyG Temporal's training loop, unchanged, over the real loader's snapshots (speed, time of day)."""
    net = stgnn_diag.create_model("tas_template_none", hidden_size=8, heads=2, n_layers=1, exog_size=1)
    model = SnapshotModel(net, input_size=1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    before = [p.detach().clone() for p in model.parameters()]
    model.train()
    cost = 0
    for time, snapshot in enumerate(loader_signal[:4]):
        y_hat = model(snapshot.x, snapshot.edge_index, snapshot.edge_attr)
        assert y_hat.shape == snapshot.y.shape == (207, 12)
        cost = cost + torch.mean((y_hat - snapshot.y) ** 2)
    cost = cost / (time + 1)
    cost.backward()
    opt.step()
    opt.zero_grad()
    assert torch.isfinite(cost)
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))

    model.eval()
    snap = loader_signal[7]
    with torch.no_grad():
        direct = net(snap.x[:, :1].permute(2, 0, 1).unsqueeze(0), snap.edge_index, snap.edge_attr,
                     snap.x[:, 1:].permute(2, 0, 1).unsqueeze(0))  # [1, 12, 207, 1]
        assert torch.allclose(model(snap.x, snap.edge_index, snap.edge_attr), direct[0, :, :, 0].t(), atol=1e-6)
        # a PyG DataLoader batch of snapshots = one disjoint graph: same as snapshot by snapshot
        batch = next(iter(DataLoader([loader_signal[i] for i in range(3)], batch_size=3)))
        assert tuple(batch.x.shape) == (3 * 207, 2, 12)
        joint = model(batch.x, batch.edge_index, batch.edge_attr)
        single = torch.cat([model(loader_signal[i].x, loader_signal[i].edge_index, loader_signal[i].edge_attr)
                            for i in range(3)])
        assert torch.allclose(joint, single, atol=1e-5)
