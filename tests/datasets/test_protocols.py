"""Protocols, windows and the scaler: real-data counts and statistics, and exact window contents."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from stgnn_diag.datasets import MetrLA, StandardScaler, make_splits, window_starts


@pytest.mark.realdata
def test_dcrnn_counts_and_scaler(dcrnn_splits):
    s = dcrnn_splits
    assert s.sizes() == (23974, 3425, 6850)
    assert sum(s.sizes()) == 34249
    # train first, val next, test last, contiguous
    assert s.train.starts[0] == 0 and s.train.starts[-1] == 23973
    assert s.val.starts[0] == 23974 and s.test.starts[0] == 23974 + 3425
    assert s.test.starts[-1] + 24 == 34272
    assert not s.scaler.per_node
    assert abs(float(s.scaler.mean) - 54.40592829587609) < 1e-9
    assert abs(float(s.scaler.std) - 19.493739270573062) < 1e-9
    assert s.fit_stop == 23974 + 11


@pytest.mark.realdata
def test_dcrnn_scaler_equals_direct_x_train(metr_la, dcrnn_splits):
    # DCRNN: StandardScaler(mean=x_train[..., 0].mean(), std=x_train[..., 0].std()) over the
    # materialised (overlapping) training input windows; checked here on the real thing
    idx = np.arange(23974)[:, None] + np.arange(12)
    x_train = metr_la.speed64[idx]
    assert float(dcrnn_splits.scaler.mean) == pytest.approx(x_train.mean(), abs=1e-11)
    assert float(dcrnn_splits.scaler.std) == pytest.approx(x_train.std(), abs=1e-11)


@pytest.mark.realdata
def test_paper_counts_and_scaler(metr_la, paper_splits):
    s = paper_splits
    assert s.sizes() == (23967, 3404, 6831)
    assert s.train.starts[-1] + 24 == 23990
    assert s.val.starts[0] == 23990 and s.val.starts[-1] + 24 == 27417
    assert s.test.starts[0] == 27417 and s.test.starts[-1] + 24 == 34271
    assert s.scaler.per_node and s.scaler.mean.shape == (207,)
    train = metr_la.speed64[:23990]
    np.testing.assert_allclose(s.scaler.mean, train.mean(0), rtol=0, atol=1e-10)
    np.testing.assert_allclose(s.scaler.std, train.std(0), rtol=0, atol=1e-10)


@pytest.mark.realdata
@pytest.mark.parametrize("protocol,expected", [("dcrnn", (23958, 3422, 6845)), ("paper", (23943, 3380, 6807))])
def test_horizon_36(metr_la, protocol, expected):
    s = make_splits(metr_la, protocol, window=12, horizon=36)
    assert s.sizes() == expected
    item = s.test[0]
    assert item["y"].shape == (36, 207, 1)


@pytest.mark.realdata
def test_items_match_naive_slicing(metr_la, dcrnn_splits):
    s = dcrnn_splits
    ds = s.test
    for k in (0, 1, 1000, len(ds) - 1, -1):
        item = ds[k]
        t0 = int(ds.starts[k])
        x = (metr_la.speed64[t0:t0 + 12] - 54.40592829587609) / 19.493739270573062
        np.testing.assert_allclose(item["x"][..., 0].numpy(), x, rtol=1e-6, atol=1e-5)
        assert np.array_equal(item["y"][..., 0].numpy(), metr_la.speed[t0 + 12:t0 + 24])
        assert torch.equal(item["mask"], item["y"] != 0)
        assert np.array_equal(item["x_mask"][..., 0].numpy(), metr_la.speed[t0:t0 + 12] != 0)
        assert np.array_equal(item["u"].numpy(), metr_la.covariates()[t0:t0 + 12])
    assert set(item) == {"x", "u", "y", "mask", "x_mask"}
    assert item["x"].shape == (12, 207, 1) and item["u"].shape == (12, 8)
    assert item["y"].shape == (12, 207, 1) and item["mask"].dtype == torch.bool


@pytest.mark.realdata
def test_batch_equals_stacked_items(dcrnn_splits):
    ds = dcrnn_splits.val
    idx = [5, 0, 77, len(ds) - 1]
    batch = ds[idx]
    for key in ("x", "u", "y", "mask", "x_mask"):
        assert torch.equal(batch[key], torch.stack([ds[i][key] for i in idx]))
    assert torch.equal(ds[np.array(idx)]["x"], batch["x"])
    assert torch.equal(ds[torch.tensor(idx)]["y"], batch["y"])
    assert ds[2:5]["x"].shape == (3, 12, 207, 1)


@pytest.mark.realdata
def test_loader(dcrnn_splits):
    ds = dcrnn_splits.test
    loader = ds.loader(batch_size=1000)
    batches = list(loader)
    assert len(batches) == 7 and batches[-1]["x"].shape[0] == 850
    assert torch.equal(batches[1]["y"], ds[list(range(1000, 2000))]["y"])
    g = torch.Generator().manual_seed(0)
    b = next(iter(ds.loader(batch_size=16, shuffle=True, generator=g)))
    assert b["x"].shape == (16, 12, 207, 1)
    # targets() agrees with the batched y
    assert np.array_equal(ds.targets()[1000:2000], batches[1]["y"][..., 0].numpy())


@pytest.mark.realdata
def test_stride_and_max_windows(metr_la, dcrnn_splits):
    s = make_splits(metr_la, "dcrnn", stride=10, max_windows=50)
    assert s.sizes() == (50, 50, 50)
    assert np.array_equal(s.test.starts, dcrnn_splits.test.starts[::10][:50])
    assert float(s.scaler.mean) == float(dcrnn_splits.scaler.mean)  # scaler of the full protocol
    assert s.fit_stop == dcrnn_splits.fit_stop


def test_unknown_protocol_lists_valid(tiny_folder):
    folder, _ = tiny_folder
    d = MetrLA(folder, download=False)
    with pytest.raises(ValueError, match=r"valid protocols: \['dcrnn', 'paper'\].*'dcrnn'"):
        make_splits(d, "dcrn")
    for bad in (dict(window=0), dict(horizon=-1), dict(stride=0), dict(max_windows=0), dict(window=1.5)):
        with pytest.raises(ValueError):
            make_splits(d, "dcrnn", **bad)
    with pytest.raises(ValueError, match="too short"):
        make_splits(d, "dcrnn", window=200, horizon=200)


def test_tiny_dcrnn_arithmetic(tiny_folder):
    folder, data = tiny_folder
    d = MetrLA(folder, download=False)  # 400 steps
    s = make_splits(d, "dcrnn", window=12, horizon=12)
    n = 400 - 23
    n_test, n_train = round(n * 0.2), round(n * 0.7)
    assert s.sizes() == (n_train, n - n_test - n_train, n_test)
    # brute-force DCRNN scaler: materialise x_train
    x_train = np.stack([data["speed"][i:i + 12] for i in range(n_train)])
    assert float(s.scaler.mean) == pytest.approx(x_train.mean(), abs=1e-12)
    assert float(s.scaler.std) == pytest.approx(x_train.std(), abs=1e-12)


def test_tiny_paper_arithmetic(tiny_folder):
    folder, data = tiny_folder
    d = MetrLA(folder, download=False)
    s = make_splits(d, "paper", window=6, horizon=3)
    a, b = int(0.7 * 400), int(0.7 * 400) + int(0.1 * 400)
    assert s.sizes() == (a - 8, b - a - 8, int(0.2 * 400) - 8)
    assert s.val.starts[0] == a and s.test.starts[0] == b
    assert s.test.starts[-1] + 9 == b + int(0.2 * 400)


def test_window_starts():
    assert window_starts(10, 20, 3, 2).tolist() == [10, 11, 12, 13, 14, 15]
    assert window_starts(0, 4, 3, 2).tolist() == []


def test_scaler_numpy_torch_roundtrip():
    rng = np.random.default_rng(1)
    x = rng.normal(50, 10, size=(30, 5))
    glob = StandardScaler.fit(x)
    node = StandardScaler.fit(x, axis=0)
    assert node.mean.shape == (5,)
    for sc in (glob, node):
        z = sc.transform(x)
        np.testing.assert_allclose(sc.inverse_transform(z), x)
        zt = sc.transform(torch.tensor(x, dtype=torch.float32))
        assert zt.dtype == torch.float32
        np.testing.assert_allclose(zt.numpy(), z, rtol=1e-5, atol=1e-5)
        # [..., nodes, 1] layout
        z4 = sc.transform(torch.tensor(x, dtype=torch.float32)[None, :, :, None])
        np.testing.assert_allclose(z4[0, ..., 0].numpy(), z, rtol=1e-5, atol=1e-5)
        back = sc.inverse_transform(z4)
        np.testing.assert_allclose(back[0, ..., 0].numpy(), x, rtol=1e-5)
    np.testing.assert_allclose(node.transform(x).mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(node.transform(x).std(0), 1, atol=1e-12)
    w = rng.integers(1, 4, size=30)
    wfit = StandardScaler.fit(x, weights=w)
    rep = np.repeat(x, w, axis=0)
    assert float(wfit.mean) == pytest.approx(rep.mean()) and float(wfit.std) == pytest.approx(rep.std())
    const = StandardScaler.fit(np.ones((4, 2)), axis=0)
    assert np.array_equal(const.std, [1.0, 1.0])
