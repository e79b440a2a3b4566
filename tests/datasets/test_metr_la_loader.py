"""MetrLA on the real data, plus loader errors on tiny synthetic folders."""
from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

from stgnn_diag.datasets import MetrLA, files

pytestmark = pytest.mark.realdata


def test_shapes_and_dtypes(metr_la):
    d = metr_la
    assert (d.n_steps, d.n_nodes) == (34272, 207)
    assert d.speed.shape == (34272, 207) and d.speed.dtype == np.float32
    assert d.speed64.dtype == np.float64
    assert d.mask.dtype == np.bool_ and np.array_equal(d.mask, d.speed != 0)
    assert d.timestamps.dtype == np.dtype("datetime64[ns]") and d.timestamps.shape == (34272,)
    assert d.timestamps[0] == np.datetime64("2012-03-01T00:00")
    assert d.timestamps[-1] == np.datetime64("2012-06-27T23:55")
    assert np.all(np.diff(d.timestamps) == np.timedelta64(5, "m"))
    assert len(d.sensor_ids) == 207 and d.sensor_ids[0] == "773869"
    assert all(isinstance(s, str) for s in d.sensor_ids)
    assert d.adj.shape == (207, 207) and d.adj.dtype == np.float32
    assert d.locations.shape == (207, 2)
    assert d.speed[0, 0] == np.float32(64.375)
    assert round(d.missing_rate * 100, 2) == 8.11


def test_edge_index_direction_matches_adj(metr_la):
    d = metr_la
    ei, ew = d.edge_index, d.edge_weight
    assert ei.dtype == torch.long and ei.shape == (2, 1722)
    assert ew.dtype == torch.float32 and ew.shape == (1722,)
    # the real adjacency is asymmetric: the convention matters
    assert not np.array_equal(d.adj, d.adj.T)
    # edge k is src -> dst with weight adj[src, dst]
    src, dst = ei.numpy()
    assert np.array_equal(ew.numpy(), d.adj[src, dst])
    assert int((d.adj != 0).sum()) == ei.shape[1]
    # rebuilt dense matrix equals adj, not its transpose
    dense = np.zeros_like(d.adj)
    dense[src, dst] = ew.numpy()
    assert np.array_equal(dense, d.adj)
    # an asymmetric pair: adj[i, j] != 0 == adj[j, i] gives the edge i -> j only
    i, j = np.argwhere((d.adj != 0) & (d.adj.T == 0))[0]
    edges = set(zip(src.tolist(), dst.tolist()))
    assert (i, j) in edges and (j, i) not in edges
    # same as PyG's dense_to_sparse (same order)
    from torch_geometric.utils import dense_to_sparse

    pei, pew = dense_to_sparse(torch.from_numpy(d.adj))
    assert torch.equal(pei, ei) and torch.equal(pew, ew)


def test_covariates(metr_la):
    u = metr_la.covariates()
    assert u.shape == (34272, 8) and u.dtype == np.float32
    tod, dow = u[:, 0], u[:, 1:]
    assert tod.min() == 0.0 and tod.max() < 1.0
    assert tod[1] == pytest.approx(1 / 288) and tod[287] == pytest.approx(287 / 288)
    assert np.array_equal(dow.sum(1), np.ones(34272, dtype=np.float32))
    # 2012-03-01 was a Thursday (Monday = channel 1)
    assert dow[0].argmax() == 3 and dow[288].argmax() == 4
    import pandas as pd

    idx = pd.DatetimeIndex(metr_la.timestamps)
    assert np.array_equal(metr_la.day_of_week(), idx.dayofweek.to_numpy())


def test_h5_fallback_equals_npz(metr_la, tmp_path, link_metr_la):
    folder = link_metr_la(tmp_path / "metr_la", names=(files.SPEED_H5, *files.GRAPH_FILES))
    d = MetrLA(folder, download=False)
    assert d.speed_path.name == files.SPEED_H5
    assert np.array_equal(d.speed64, metr_la.speed64)
    assert np.array_equal(d.timestamps, metr_la.timestamps)
    assert d.sensor_ids == metr_la.sensor_ids


def test_h5_without_pytables_is_a_clear_error(tmp_path, link_metr_la, monkeypatch):
    folder = link_metr_la(tmp_path / "metr_la", names=(files.SPEED_H5, *files.GRAPH_FILES))
    monkeypatch.setitem(sys.modules, "tables", None)
    with pytest.raises(ImportError, match="pip install pandas tables"):
        MetrLA(folder, download=False)


def test_tiny_folder_roundtrip(tiny_folder):
    folder, data = tiny_folder
    d = MetrLA(folder.parent, download=False)
    assert np.array_equal(d.speed64, data["speed"])
    assert d.sensor_ids == data["ids"]
    assert d.edge_index.tolist() == [[0, 0, 1, 2, 3], [0, 1, 1, 2, 3]]


def test_missing_graph_file(tiny_folder):
    folder, _ = tiny_folder
    (folder / files.ADJ_PKL).unlink()
    with pytest.raises(FileNotFoundError, match="adj_mx.pkl"):
        MetrLA(folder.parent, download=False)


def test_missing_everything(tmp_path):
    with pytest.raises(FileNotFoundError, match="STGNN_DIAG_DATA"):
        MetrLA(tmp_path, download=False)


def test_corrupt_npz(tiny_folder):
    folder, _ = tiny_folder
    blob = (folder / files.SPEED_NPZ).read_bytes()
    (folder / files.SPEED_NPZ).write_bytes(blob[: len(blob) // 2])
    with pytest.raises(ValueError, match="corrupt"):
        MetrLA(folder.parent, download=False)


def test_wrong_shape(tiny_folder):
    folder, data = tiny_folder
    np.savez(folder / files.SPEED_NPZ, speed=data["speed"][:, 0], timestamps=data["timestamps"],
             sensor_ids=np.array(data["ids"]))
    with pytest.raises(ValueError, match=r"\[time, nodes\]"):
        MetrLA(folder.parent, download=False)


def test_timestamps_length_mismatch(tiny_folder):
    folder, data = tiny_folder
    np.savez(folder / files.SPEED_NPZ, speed=data["speed"], timestamps=data["timestamps"][:-1],
             sensor_ids=np.array(data["ids"]))
    with pytest.raises(ValueError, match="timestamps"):
        MetrLA(folder.parent, download=False)


def test_ids_disagree(tiny_folder):
    folder, data = tiny_folder
    (folder / files.SENSOR_IDS).write_text(",".join(reversed(data["ids"])))
    with pytest.raises(ValueError, match="sensor ids disagree"):
        MetrLA(folder.parent, download=False)


def test_adj_wrong_shape(tiny_folder):
    import pickle

    folder, data = tiny_folder
    with open(folder / files.ADJ_PKL, "wb") as f:
        pickle.dump([data["ids"], {}, np.eye(3, dtype=np.float32)], f)
    with pytest.raises(ValueError, match="adjacency of shape"):
        MetrLA(folder.parent, download=False)


def test_pickle_with_code_is_refused(tiny_folder):
    import os
    import pickle

    folder, _ = tiny_folder

    class Evil:
        def __reduce__(self):
            return (os.getcwd, ())

    with open(folder / files.ADJ_PKL, "wb") as f:
        pickle.dump([Evil(), {}, np.eye(4)], f)
    with pytest.raises(ValueError, match="refusing"):
        MetrLA(folder.parent, download=False)


def test_bad_speed_format(tiny_folder):
    folder, _ = tiny_folder
    with pytest.raises(ValueError, match="speed_format"):
        MetrLA(folder.parent, download=False, speed_format="csv")
    with pytest.raises(FileNotFoundError, match="metr-la.h5"):
        MetrLA(folder.parent, download=False, speed_format="h5")


def test_non_finite_readings_are_named(tiny_folder):
    """Inf is a corrupt file (refused); NaN is counted as missing, with a warning that says how many."""
    folder, data = tiny_folder
    speed = data["speed"].copy()
    speed[3, 1] = np.inf
    np.savez(folder / files.SPEED_NPZ, speed=speed, timestamps=data["timestamps"], sensor_ids=np.array(data["ids"]))
    with pytest.raises(ValueError, match="1 readings are infinite"):
        MetrLA(folder.parent, download=False)
    speed[3, 1] = np.nan
    speed[:40, 2] = np.nan
    np.savez(folder / files.SPEED_NPZ, speed=speed, timestamps=data["timestamps"], sensor_ids=np.array(data["ids"]))
    with pytest.warns(UserWarning, match=r"41 readings \(2.56 %\) are NaN; they are counted as missing"):
        d = MetrLA(folder.parent, download=False)
    assert not d.mask[3, 1] and not d.mask[:40, 2].any()
