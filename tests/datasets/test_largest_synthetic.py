"""The LargeST-shaped synthetic data set: generated once from its seed, read memory-mapped, split without a copy
of the series, and trained on end to end."""
import json

import numpy as np
import pytest
import torch

from stgnn_diag.datasets import LARGEST_SOURCE, StandardScaler, get_dataset, make_splits
from stgnn_diag.datasets.largest_synthetic import LargeSTSynthetic


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    root = tmp_path_factory.mktemp("largest")
    return get_dataset("largest_synthetic", root=root, n_nodes=200, days=14, progress=False)


def test_generated_once_from_the_seed_and_read_memory_mapped(small, tmp_path):
    assert isinstance(small.speed, np.memmap) and small.speed.dtype == np.float32
    assert small.speed.shape == (14 * 288, 200) and small.memory_mapped
    again = LargeSTSynthetic(small.root, n_nodes=200, days=14, progress=False)  # read, not generated again
    assert again.speed.filename == small.speed.filename
    twin = LargeSTSynthetic(tmp_path, n_nodes=200, days=14, progress=False)
    assert np.array_equal(np.asarray(twin.speed), np.asarray(small.speed))
    other = LargeSTSynthetic(tmp_path, n_nodes=200, days=14, seed=1, progress=False)
    assert not np.array_equal(np.asarray(other.speed), np.asarray(small.speed))


def test_a_half_written_folder_is_generated_again(tmp_path):
    first = LargeSTSynthetic(tmp_path, n_nodes=32, days=2, progress=False)
    (first.folder / "meta.json").unlink()  # as if the generation had been killed before its last file
    (first.folder / "speed.npy").write_bytes(b"corrupt")
    again = LargeSTSynthetic(tmp_path, n_nodes=32, days=2, progress=False)
    assert again.speed.shape == (576, 32)
    meta = json.loads((again.folder / "meta.json").read_text())
    assert meta["source"]["files"][-1] == "ca_rn_adj.npy" == LARGEST_SOURCE["files"][-1]


def test_the_graph_is_a_sparse_nearest_neighbour_graph_with_self_loops(small):
    src, dst = small.edge_index.numpy()
    loops = src == dst
    assert loops.sum() == 200 and np.all(small.edge_weight.numpy()[loops] == 1.0)
    out_degree = np.bincount(src[~loops], minlength=200)
    assert out_degree.min() >= 2 and out_degree.max() <= 15 and 6 <= out_degree.mean() <= 10
    assert np.all((small.edge_weight.numpy() > 0) & (small.edge_weight.numpy() <= 1))
    assert small.adj.nnz == small.n_edges  # sparse: no dense N x N matrix


def test_rush_hours_weekends_and_missing_readings(small):
    speed = np.asarray(small.speed, dtype=np.float64)
    step = np.arange(len(speed))
    hour, weekday = (step % 288) // 12, (step // 288 + 1) % 7  # 2019-01-01 was a Tuesday
    observed = speed > 0

    def mean(where):
        return speed[where[:, None] & observed].mean()

    night, evening = mean(hour == 3), mean((hour == 17) & (weekday < 5))
    assert evening < night - 8  # the evening rush
    assert mean((hour == 17) & (weekday >= 5)) > evening + 5  # shallower at the weekend
    assert 0.02 <= 1 - observed.mean() <= 0.06  # scattered missing readings and outages


def test_the_splits_scale_each_batch_as_a_scaled_copy_would(small):
    splits = make_splits(small, "dcrnn")
    assert splits.train.scaled is None  # no copy of the series
    speed64 = np.asarray(small.speed, dtype=np.float64)
    eager = StandardScaler.fit(speed64[:splits.fit_stop], axis=None,
                               weights=np.convolve(np.ones(len(splits.train)), np.ones(12))[:splits.fit_stop])
    assert float(splits.scaler.mean) == pytest.approx(float(eager.mean), rel=1e-12)
    assert float(splits.scaler.std) == pytest.approx(float(eager.std), rel=1e-12)
    batch = splits.test[[0, 5, 100]]
    starts = splits.test.starts[[0, 5, 100]]
    want = ((speed64 - float(splits.scaler.mean)) / float(splits.scaler.std)).astype(np.float32)
    want = np.stack([want[s:s + 12] for s in starts])[..., None]
    np.testing.assert_array_equal(batch["x"].numpy(), want)
    assert torch.equal(batch["y"][..., 0], torch.from_numpy(np.stack([small.speed[s + 12:s + 24] for s in starts])))


def test_the_block_fit_equals_the_one_pass_fit_per_node(small):
    memmap = small.speed[:3000]
    blocks = StandardScaler._fit_blocks(memmap, 0, None, rows=256)
    whole = StandardScaler.fit(np.asarray(memmap, dtype=np.float64), axis=0)
    np.testing.assert_allclose(blocks.mean, whole.mean, rtol=1e-12)
    np.testing.assert_allclose(blocks.std, whole.std, rtol=1e-12)


def test_it_trains_end_to_end_and_scores_batch_by_batch(tmp_path, monkeypatch):
    from stgnn_diag.training import TrainConfig, train
    from stgnn_diag.training.predictor import load_checkpoint
    from stgnn_diag.training.scoring import predict_split, score, score_split

    cfg = TrainConfig(model="tts_attn_none", dataset="largest_synthetic[n_nodes=48,days=6]", data_root=str(tmp_path),
                      out=str(tmp_path / "run"), budget="cpu-small", max_epochs=1, limit_train_batches=6,
                      limit_val_batches=2, batch_size=8, progress=False,
                      model_overrides={"hidden_size": 8})
    result = train(cfg)
    assert result["dataset"] == "largest_synthetic[n_nodes=48,days=6]" and np.isfinite(result["metrics"]["mae@12"])
    module = load_checkpoint(tmp_path / "run" / "checkpoints" / "last.ckpt")
    data = get_dataset("largest_synthetic", root=tmp_path, n_nodes=48, days=6, progress=False)
    splits = make_splits(data, "dcrnn")
    streamed = score_split(module, splits, "test", batch_size=7, progress=False)
    whole = score(predict_split(module, splits, "test", progress=False), splits.test, 12)
    assert streamed.keys() == whole.keys()
    for k in whole:
        assert streamed[k] == pytest.approx(whole[k], rel=1e-9), k
    assert result["metrics"] == pytest.approx(streamed, rel=1e-6)
    # scored in parallel: each of two ranks its half, the sums added up by the group's all-reduce
    from stgnn_diag.metrics import metrics_from_sums

    parts = []
    monkeypatch.setattr(torch.distributed, "all_reduce", lambda t: parts.append(t.clone()))
    for rank in (0, 1):
        score_split(module, splits, "test", batch_size=5, progress=False, shard=(rank, 2))
    halves = metrics_from_sums((parts[0] + parts[1]).numpy(), (3, 6, 12))
    for k in whole:
        assert halves[k] == pytest.approx(whole[k], rel=1e-9), k
