"""Fixtures for the dataset tests: tiny synthetic METR-LA folders and a local HTTP server."""
from __future__ import annotations

import functools
import http.server
import pickle
import threading
from pathlib import Path

import numpy as np
import pytest

from stgnn_diag.datasets import files

SHARED_FILES = (files.SPEED_NPZ, files.SPEED_H5, files.ADJ_PKL, files.SENSOR_IDS, files.LOCATIONS)


def write_tiny(folder: Path, n_steps: int = 400, n_nodes: int = 4, seed: int = 0,
               ids=None, npz: bool = True) -> dict:
    """Write a small METR-LA-like folder (DCRNN layout). Returns the arrays written."""
    rng = np.random.default_rng(seed)
    ids = list(ids) if ids is not None else [str(700000 + k) for k in range(n_nodes)]
    speed = rng.uniform(20, 70, size=(n_steps, n_nodes)).round(3)
    speed[rng.random(speed.shape) < 0.1] = 0.0
    ts = np.datetime64("2012-03-01T00:00", "ns") + np.arange(n_steps) * np.timedelta64(5, "m")
    adj = np.eye(n_nodes, dtype=np.float32)
    adj[0, 1] = 0.5  # one directed edge 0 -> 1
    (folder / "sensor_graph").mkdir(parents=True, exist_ok=True)
    if npz:
        np.savez(folder / files.SPEED_NPZ, speed=speed, timestamps=ts, sensor_ids=np.array(ids))
    with open(folder / files.ADJ_PKL, "wb") as f:
        pickle.dump([ids, {s: k for k, s in enumerate(ids)}, adj], f, protocol=2)
    (folder / files.SENSOR_IDS).write_text(",".join(ids))
    lines = ["index,sensor_id,latitude,longitude"]
    lines += [f"{k},{s},{34 + k / 100:.5f},{-118 - k / 100:.5f}" for k, s in enumerate(ids)]
    (folder / files.LOCATIONS).write_text("\n".join(lines) + "\n")
    return {"speed": speed, "timestamps": ts, "ids": ids, "adj": adj}


def link_shared(src_folder: Path, dst_folder: Path, names=SHARED_FILES) -> Path:
    """Symlink the shared METR-LA files into ``dst_folder`` (nothing is copied)."""
    for rel in names:
        (dst_folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (dst_folder / rel).symlink_to(src_folder / rel)
    return dst_folder


@pytest.fixture
def tiny_folder(tmp_path):
    """A complete tiny METR-LA folder ``tmp/root/metr_la`` and the arrays in it."""
    folder = tmp_path / "root" / "metr_la"
    data = write_tiny(folder)
    return folder, data


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


@pytest.fixture
def http_folder(tmp_path):
    """A real HTTP server on 127.0.0.1 serving ``tmp/served``; yields ``(folder, base_url)``."""
    served = tmp_path / "served"
    served.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield served, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def make_tiny():
    """The :func:`write_tiny` helper, as a fixture."""
    return write_tiny


@pytest.fixture
def link_metr_la(metr_la_root):
    """``link(dst_folder, names=...)``: symlink the real METR-LA files into ``dst_folder``."""
    from stgnn_diag.datasets import dataset_dir

    src = dataset_dir(metr_la_root)
    return lambda dst, names=SHARED_FILES: link_shared(src, Path(dst), names)
