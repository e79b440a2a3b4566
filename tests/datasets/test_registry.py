"""Data sets as an axis: the registry, PEMS-BAY's layout (synthetic files), trust-on-first-use digests, and
a toy data set added in one class."""
from __future__ import annotations

import pickle
import zipfile

import numpy as np
import pytest

from stgnn_diag.datasets import (PEMS_BAY_ARCHIVE, ChecksumError, Layout, PemsBay, SensorDataset, dataset_dir,
                                 download_layout, download_tsl_archive, get_dataset, list_datasets, make_splits,
                                 register_dataset, resolve_data_root, sha256_file)
from stgnn_diag.datasets.download import DIGEST_RECORD
from stgnn_diag.datasets.pems_bay import LAYOUT as BAY


def write_bay(folder, n_steps=300, n_nodes=6, seed=0, h5=False):
    """A tiny PEMS-BAY folder in DCRNN's layout: no id list, headerless locations csv."""
    rng = np.random.default_rng(seed)
    ids = [str(400001 + 7 * k) for k in range(n_nodes)]
    speed = rng.uniform(40, 70, size=(n_steps, n_nodes)).round(1)
    ts = np.datetime64("2017-01-01T00:00", "ns") + np.arange(n_steps) * np.timedelta64(5, "m")
    adj = np.eye(n_nodes, dtype=np.float32)
    adj[2, 4] = 0.7  # the edge 2 -> 4
    (folder / "sensor_graph").mkdir(parents=True, exist_ok=True)
    if h5:
        import pandas as pd

        pd.DataFrame(speed, index=pd.DatetimeIndex(ts), columns=ids).to_hdf(folder / BAY.speed_h5, key="speed")
    else:
        np.savez(folder / BAY.speed_npz, speed=speed, timestamps=ts, sensor_ids=np.array(ids))
    with open(folder / BAY.adj_pkl, "wb") as f:
        pickle.dump([ids, {s: k for k, s in enumerate(ids)}, adj], f, protocol=2)
    # DCRNN's graph_sensor_locations_bay.csv: "id,lat,lon" rows, no header; written out of node order
    rows = [f"{s},{37 + k / 100:.6f},{-122 + k / 100:.6f}" for k, s in enumerate(ids)]
    (folder / BAY.locations).write_text("\n".join(reversed(rows)) + "\n")
    return {"speed": speed, "ids": ids, "adj": adj}


def test_registry_lists_and_loads_by_name(tmp_path, metr_la_root):
    assert {"metr_la", "pems_bay"} <= set(list_datasets())
    assert get_dataset("metr_la", metr_la_root, download=False).n_nodes == 207
    with pytest.raises(ValueError, match="Did you mean pems_bay"):
        get_dataset("pems-bay", tmp_path)


def test_pems_bay_layout_loads_and_splits(tmp_path):
    data = write_bay(tmp_path / "root" / "pems_bay")
    ds = get_dataset("pems_bay", tmp_path / "root", download=False)
    assert isinstance(ds, PemsBay) and ds.folder == tmp_path / "root" / "pems_bay"
    assert ds.sensor_ids == data["ids"] and np.array_equal(ds.speed64, data["speed"])
    # headerless, out-of-order locations are put in node order
    np.testing.assert_allclose(ds.locations[:, 0], 37 + np.arange(6) / 100)
    assert [2, 4] in ds.edge_index.t().tolist()  # adj[i, j] is i -> j
    splits = make_splits(ds, "dcrnn", window=12, horizon=12)
    n = 300 - 24 + 1
    assert len(splits.test) == round(0.2 * n) and splits.n_nodes == 6


def test_pems_bay_ids_are_checked_against_the_adjacency(tmp_path):
    folder = tmp_path / "pems_bay"
    data = write_bay(folder)
    ids = list(reversed(data["ids"]))
    with open(folder / BAY.adj_pkl, "wb") as f:
        pickle.dump([ids, {s: k for k, s in enumerate(ids)}, data["adj"]], f, protocol=2)
    with pytest.raises(ValueError, match="sensor ids disagree.*adj_mx_bay.pkl"):
        PemsBay(folder, download=False)


def test_pems_bay_missing_files_are_named(tmp_path):
    (tmp_path / "pems_bay").mkdir()
    with pytest.raises(FileNotFoundError, match=r"PEMS-BAY data not found.*pems-bay.npz \(or pems-bay.h5\)"):
        resolve_data_root(tmp_path, dataset="pems_bay", download=False)


def test_mirror_download_records_digests_and_every_load_checks_them(tmp_path, http_folder, monkeypatch):
    """No digest is published for PEMS-BAY: the first download's are recorded and checked on each load."""
    served, url = http_folder
    write_bay(served)
    root = tmp_path / "data"
    root.mkdir()
    ds = get_dataset("pems_bay", root, base_url=url, progress=False)
    folder = dataset_dir(root, "pems_bay")
    record = (folder / DIGEST_RECORD).read_text()
    for rel in BAY.download_files:
        assert sha256_file(folder / rel) in record
    assert ds.n_nodes == 6
    good = (folder / BAY.speed_npz).read_bytes()
    speed = np.load(folder / BAY.speed_npz)
    np.savez(folder / BAY.speed_npz, speed=speed["speed"] + 1, timestamps=speed["timestamps"],
             sensor_ids=speed["sensor_ids"])
    with pytest.raises(ChecksumError, match="changed since its first download"):
        PemsBay(root, download=False)
    (folder / BAY.speed_npz).write_bytes(good)
    assert PemsBay(root, download=False).n_nodes == 6
    # a later download from a mirror whose copy changed is refused too
    (folder / BAY.adj_pkl).unlink()
    with open(served / BAY.adj_pkl, "ab") as f:
        f.write(b"x")
    with pytest.raises(ChecksumError, match="sha256 mismatch"):
        download_layout(folder, BAY, base_url=url, progress=False)


def test_pems_bay_from_a_tsl_like_archive(tmp_path, http_folder):
    """tsl's PEMS-BAY zip has no id list (the h5 columns are the node order) and float-spelt ids in the
    distances; the built files are recorded for the load-time check."""
    pytest.importorskip("tables")
    served, url = http_folder
    src = tmp_path / "src"
    data = write_bay(src, h5=True)
    ids = data["ids"]
    cost = {0: 0.0, 1: 100.0, 2: 1000.0}  # neighbours near, second neighbours far (dropped by the kernel)
    dist = ["from,to,cost"] + [f"{a}.0,{b}.0,{cost[abs(i - j)]}" for i, a in enumerate(ids)
                               for j, b in enumerate(ids) if abs(i - j) <= 2]
    locs = "".join(f"{k},{s},37.{k},-122.{k}\n" for k, s in enumerate(ids))
    with zipfile.ZipFile(served / "download", "w") as z:
        z.write(src / BAY.speed_h5, PEMS_BAY_ARCHIVE.speed)
        z.writestr(PEMS_BAY_ARCHIVE.distances, "\n".join(dist) + "\n")
        z.writestr(PEMS_BAY_ARCHIVE.locations, locs)
    folder = download_tsl_archive(tmp_path / "root" / "pems_bay", f"{url}/download", BAY, PEMS_BAY_ARCHIVE,
                                  progress=False)
    ds = PemsBay(folder, download=False)
    assert ds.sensor_ids == ids and np.array_equal(ds.speed64, data["speed"])
    assert ds.adj.shape == (6, 6) and ds.adj[0, 1] > 0.5 and ds.adj[0, 2] == 0 and ds.adj[0, 3] == 0
    assert BAY.adj_pkl in (folder / DIGEST_RECORD).read_text()


def test_a_toy_data_set_is_one_class(tmp_path):
    """Adding a data set: a layout, a key, a name, the decorator."""
    from stgnn_diag.datasets import registry

    toy_layout = Layout(folder="toy_city", speed_npz="toy.npz", speed_h5="toy.h5", adj_pkl="sensor_graph/adj.pkl",
                        locations="sensor_graph/locations.csv")

    @register_dataset
    class ToyCity(SensorDataset):
        key, name, layout = "toy_city", "Toy City", toy_layout

    try:
        folder = tmp_path / "toy_city"
        write_bay(folder, n_nodes=5)
        for a, b in ((BAY.speed_npz, "toy.npz"), (BAY.adj_pkl, "sensor_graph/adj.pkl"),
                     (BAY.locations, "sensor_graph/locations.csv")):
            (folder / a).rename(folder / b)
        assert "toy_city" in list_datasets()
        ds = get_dataset("toy_city", tmp_path, download=False)
        assert ds.n_nodes == 5 and make_splits(ds, "dcrnn").n_nodes == 5
        (tmp_path / "empty").mkdir()
        with pytest.raises(FileNotFoundError, match="no public source"):
            get_dataset("toy_city", tmp_path / "empty")
    finally:
        registry._REGISTRY.pop("toy_city", None)
