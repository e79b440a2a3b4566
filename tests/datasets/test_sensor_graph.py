"""Edge lists and DCRNN's Gaussian-kernel adjacency; building the layout from tsl's archive."""
from __future__ import annotations

import math
import zipfile

import numpy as np
import pytest
import torch

from stgnn_diag.datasets import (MetrLA, build_from_tsl_archive, dense_to_edge_index, distance_matrix,
                                 download_tsl_archive, files, METR_LA_ARCHIVE, gaussian_kernel_adjacency)


def test_dense_to_edge_index_direction():
    adj = np.array([[0, 2, 0], [0, 0, 0], [3, 0, 1]], dtype=np.float32)
    ei, ew = dense_to_edge_index(adj)
    assert ei.tolist() == [[0, 2, 2], [1, 0, 2]]  # 0 -> 1, 2 -> 0, 2 -> 2
    assert ew.tolist() == [2.0, 3.0, 1.0]
    ei_t, _ = dense_to_edge_index(torch.from_numpy(adj))
    assert torch.equal(ei, ei_t)
    with pytest.raises(ValueError, match="square"):
        dense_to_edge_index(np.zeros((2, 3)))


def _naive_kernel(dist, threshold=0.1):
    finite = [v for row in dist for v in row if math.isfinite(v)]
    mean = sum(finite) / len(finite)
    sigma = math.sqrt(sum((v - mean) ** 2 for v in finite) / len(finite))
    out = [[0.0] * len(dist) for _ in dist]
    for i, row in enumerate(dist):
        for j, d in enumerate(row):
            w = math.exp(-((d / sigma) ** 2)) if math.isfinite(d) else 0.0
            out[i][j] = w if w >= threshold else 0.0
    return np.array(out)


def _distances_csv(ids, rng):
    rows, dist = ["from,to,cost"], np.full((len(ids), len(ids)), np.inf)
    for i, a in enumerate(ids):
        for j, b in enumerate(ids):
            if i == j or rng.random() < 0.6:
                d = 0.0 if i == j else float(rng.integers(100, 9000))
                rows.append(f"{a},{b},{d}")
                dist[i, j] = d
    rows.append("999999,1,5.0")  # an unknown sensor: skipped
    return "\n".join(rows) + "\n", dist


def test_gaussian_kernel_matches_naive():
    rng = np.random.default_rng(0)
    ids = [str(100 + k) for k in range(6)]
    text, dist = _distances_csv(ids, rng)
    rows = [r.split(",") for r in text.strip().splitlines()[1:]]
    built = distance_matrix(((a, b, float(c)) for a, b, c in rows), ids)
    assert np.array_equal(built, dist.astype(np.float32))
    adj = gaussian_kernel_adjacency(built)
    assert adj.dtype == np.float32 and np.all(np.diag(adj) == 1.0)
    np.testing.assert_allclose(adj, _naive_kernel(dist.tolist()), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="finite"):
        gaussian_kernel_adjacency(np.full((2, 2), np.inf))


def _tsl_zip(path, make_tiny, tmp_path):
    """A zip laid out like tsl's METR-LA archive, from a tiny synthetic series."""
    import pandas as pd

    data = make_tiny(tmp_path / "src", n_steps=300, n_nodes=5)
    df = pd.DataFrame(data["speed"], index=pd.DatetimeIndex(data["timestamps"]), columns=data["ids"])
    df.to_hdf(tmp_path / "metr_la.h5", key="df")
    text, dist = _distances_csv(data["ids"], np.random.default_rng(3))
    locs = "index,sensor_id,latitude,longitude\n" + "".join(
        f"{k},{s},34.{k},-118.{k}\n" for k, s in reversed(list(enumerate(data["ids"]))))
    with zipfile.ZipFile(path, "w") as z:
        z.write(tmp_path / "metr_la.h5", "metr_la.h5")
        z.writestr("distances_la.csv", text)
        z.writestr("sensor_locations_la.csv", locs)
        z.writestr("sensor_ids_la.txt", ",".join(data["ids"]))
    return data, dist


def test_build_from_tsl_archive(tmp_path, make_tiny):
    data, dist = _tsl_zip(tmp_path / "a.zip", make_tiny, tmp_path)
    folder = build_from_tsl_archive(tmp_path / "a.zip", tmp_path / "built" / "metr_la", files.LAYOUT, METR_LA_ARCHIVE)
    d = MetrLA(folder, download=False)
    assert d.speed_path.name == files.SPEED_H5
    assert np.array_equal(d.speed64, data["speed"]) and d.sensor_ids == data["ids"]
    np.testing.assert_allclose(d.adj, _naive_kernel(dist.tolist()), rtol=1e-5, atol=1e-6)
    assert d.locations[0, 0] == pytest.approx(34.0)


def test_tsl_archive_missing_member(tmp_path):
    with zipfile.ZipFile(tmp_path / "b.zip", "w") as z:
        z.writestr("metr_la.h5", b"")
    with pytest.raises(ValueError, match="missing"):
        build_from_tsl_archive(tmp_path / "b.zip", tmp_path / "out", files.LAYOUT, METR_LA_ARCHIVE)


def test_download_tsl_archive_from_local_server(tmp_path, make_tiny, http_folder):
    served, url = http_folder
    data, _ = _tsl_zip(served / "download", make_tiny, tmp_path)
    folder = download_tsl_archive(tmp_path / "dl" / "metr_la", f"{url}/download", files.LAYOUT, METR_LA_ARCHIVE,
                                  progress=False)
    assert not any(p.suffix in (".zip", ".part") for p in folder.rglob("*"))
    assert MetrLA(folder, download=False).sensor_ids == data["ids"]
