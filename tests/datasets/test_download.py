"""Verified atomic downloads from a real HTTP server on 127.0.0.1."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from stgnn_diag.datasets import (ChecksumError, DownloadError, MetrLA, download_file, download_layout,
                                 files, sha256_file)

pytestmark = pytest.mark.realdata


def _leftovers(folder):
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith(".part"))


@pytest.fixture
def served_metr_la(http_folder, link_metr_la):
    served, url = http_folder
    link_metr_la(served / "metr_la", names=files.DOWNLOAD_FILES)
    return served / "metr_la", url + "/metr_la"


def test_download_then_load(served_metr_la, tmp_path, metr_la):
    _, url = served_metr_la
    root = tmp_path / "dl"
    d = MetrLA(root, base_url=url, progress=False)  # resolves, downloads, verifies, loads
    folder = root / "metr_la"
    for rel in files.DOWNLOAD_FILES:
        assert sha256_file(folder / rel) == files.SHA256[rel]
        assert not (folder / rel).is_symlink()
    assert _leftovers(root) == []
    assert np.array_equal(d.speed64, metr_la.speed64) and d.sensor_ids == metr_la.sensor_ids
    # a second construction finds the files and downloads nothing (server gone is fine)
    assert MetrLA(root, download=False).n_nodes == 207


def test_progress_bar_and_skip_existing(served_metr_la, tmp_path):
    _, url = served_metr_la
    dest = tmp_path / "x" / files.SENSOR_IDS
    download_file(f"{url}/{files.SENSOR_IDS}", dest, files.SHA256[files.SENSOR_IDS], progress=True)
    assert sha256_file(dest) == files.SHA256[files.SENSOR_IDS]
    mtime = dest.stat().st_mtime_ns
    download_file(f"{url}/does-not-exist", dest, files.SHA256[files.SENSOR_IDS])  # valid: no request
    assert dest.stat().st_mtime_ns == mtime


def _flip_one_byte(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.fixture
def shared_file(metr_la_root):
    """Path of a real METR-LA file (read-only, never modified)."""
    from stgnn_diag.datasets import dataset_dir

    return lambda rel: dataset_dir(metr_la_root) / rel


def test_corrupted_copy_is_rejected(http_folder, link_metr_la, shared_file, tmp_path):
    served, url = http_folder
    link_metr_la(served, names=(files.SPEED_NPZ, files.SENSOR_IDS, files.LOCATIONS))
    bad = served / files.ADJ_PKL
    shutil.copyfile(shared_file(files.ADJ_PKL), bad)  # a copy in tmp_path, then one byte flipped
    _flip_one_byte(bad)
    dest = tmp_path / "dl" / "metr_la"
    with pytest.raises(ChecksumError) as info:
        download_layout(dest, files.LAYOUT, base_url=url, progress=False)
    msg = str(info.value)
    assert "adj_mx.pkl" in msg and files.SHA256[files.ADJ_PKL] in msg and sha256_file(bad) in msg
    assert isinstance(info.value, ValueError)
    assert not (dest / files.ADJ_PKL).exists()
    assert _leftovers(tmp_path / "dl") == []


def test_failed_download_keeps_existing_good_file(http_folder, shared_file, tmp_path):
    served, url = http_folder
    good = shared_file(files.SENSOR_IDS)
    bad = served / files.SENSOR_IDS
    bad.parent.mkdir(parents=True)
    shutil.copyfile(good, bad)
    _flip_one_byte(bad)
    dest = tmp_path / "dl" / files.SENSOR_IDS
    dest.parent.mkdir(parents=True)
    shutil.copyfile(good, dest)
    before = dest.read_bytes()
    with pytest.raises(ChecksumError, match="graph_sensor_ids.txt"):
        download_file(f"{url}/{files.SENSOR_IDS}", dest, files.SHA256[files.SENSOR_IDS], overwrite=True,
                      progress=False)
    assert dest.read_bytes() == before
    assert _leftovers(dest.parent) == []


def test_bad_existing_file_is_replaced(served_metr_la, tmp_path):
    _, url = served_metr_la
    dest = tmp_path / files.SENSOR_IDS
    dest.parent.mkdir(parents=True)
    dest.write_text("garbage")
    download_file(f"{url}/{files.SENSOR_IDS}", dest, files.SHA256[files.SENSOR_IDS], progress=False)
    assert sha256_file(dest) == files.SHA256[files.SENSOR_IDS]


def test_http_404_is_a_clear_error(http_folder, tmp_path):
    _, url = http_folder
    with pytest.raises(DownloadError, match="HTTP 404"):
        download_file(f"{url}/missing.npz", tmp_path / "missing.npz", "0" * 64, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["served"]
    assert not (tmp_path / "missing.npz").exists()


def test_unreachable_server(tmp_path):
    with pytest.raises(DownloadError, match="failed"):
        download_file("http://127.0.0.1:9/x", tmp_path / "x", None, progress=False, timeout=2)
    assert list(tmp_path.iterdir()) == []


def test_download_needs_a_source(tmp_path, monkeypatch):
    monkeypatch.delenv("STGNN_DIAG_DATA_URL", raising=False)
    with pytest.raises(ValueError, match="STGNN_DIAG_DATA_URL"):
        download_layout(tmp_path, files.LAYOUT)
