"""A data set of LargeST's shape, generated: thousands of sensors over a year of 5-minute steps, read from a
memory-mapped file.

LargeST (Liu et al., NeurIPS 2023) has 8,600 sensors in California (and the subsets GLA 3,834, GBA 2,352, SD 716);
its real files are in :data:`LARGEST_SOURCE` for when they can be downloaded. Nothing can be downloaded here, so
:class:`LargeSTSynthetic` generates a series of that size with what makes such data hard to forecast:

* a sensor graph of clustered locations (cities), each sensor linked to its nearest ones (2 to 15 out-edges,
  about 8 on average as METR-LA's), with DCRNN's Gaussian-kernel weights and self-loops;
* daily rush hours (a morning and a longer evening dip, per-sensor depth) that are shallow on weekends (weekly
  seasonality), around a per-sensor free-flow speed;
* congestion that travels along the edges: a latent field ``c_t = rho W c_{t-1} + incidents + noise`` (``W`` the
  row-normalised adjacency), slowing a sensor by ``exp(-c)``;
* missing readings (0): scattered ones and outages of a sensor for 1 to 24 hours.

The series is written once, in blocks of ten days, into ``<root>/largest_synthetic/<n>-<days>-<seed>/speed.npy``
(float32) and opened with ``np.load(mmap_mode="r")``: the process holds only the pages it reads. With
:attr:`memory_mapped`, :func:`~stgnn_diag.datasets.make_splits` makes no scaled copy (each batch is scaled as it is
gathered) and fits the scaler block by block, so training needs the file's own size plus a few batches.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

import numpy as np
import scipy.sparse as sp
import torch
from scipy.spatial import cKDTree
from tqdm.auto import tqdm

from .base import SensorDataset
from .registration import register_dataset
from .root import default_data_root

__all__ = ["LargeSTSynthetic", "LARGEST_SOURCE"]

#: LargeST's real files (traffic flow, not speed), for when they are reachable: no digests are published, so as
#: for PEMS-BAY they are recorded at the first download and checked on every load.
LARGEST_SOURCE = {
    "paper": "Liu et al., LargeST: A Benchmark Dataset for Large-Scale Traffic Forecasting, NeurIPS 2023",
    "url": "https://www.kaggle.com/datasets/liuxu77/largest",
    "code": "https://github.com/liuxu77/LargeST",
    "license": "CC BY-NC 4.0",
    "files": [f"ca_his_raw_{year}.h5" for year in range(2017, 2022)] + ["ca_meta.csv", "ca_rn_adj.npy"],
    "sensors": {"ca": 8600, "gla": 3834, "gba": 2352, "sd": 716},
}

#: Bumped whenever the generator changes: a folder written by another version is generated again.
GENERATOR_VERSION = 1
STEPS_PER_DAY = 288
_BLOCK_DAYS = 10


@register_dataset
class LargeSTSynthetic(SensorDataset):
    """``get_dataset("largest_synthetic", n_nodes=8600, days=365)``: see the module docstring.

    Args:
        root: the folder holding ``largest_synthetic/`` (generated there when missing); default: the package's
            default data folder (:func:`~stgnn_diag.datasets.root.default_data_root`), never ``$STGNN_DIAG_DATA``
            (a shared folder of real data sets is not written into).
        n_nodes: sensors (LargeST: 8,600; its subsets 3,834 / 2,352 / 716).
        days: days of 5-minute steps (365: a year).
        seed: everything random comes from it.
        missing: the share of scattered missing readings (the outages come on top).
        progress: a progress bar while generating.
        download: unused (nothing is downloaded); accepted as every data set accepts it.
    """

    key, name = "largest_synthetic", "LargeST-shaped (synthetic)"
    memory_mapped = True

    def __init__(self, root=None, *, n_nodes: int = 8600, days: int = 365, seed: int = 0, missing: float = 0.02,
                 progress: bool = True, download: bool = True) -> None:
        for label, value, low in (("n_nodes", n_nodes, 16), ("days", days, 2)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ValueError(f"largest_synthetic: {label} must be an integer >= {low}, got {value!r}")
        if not 0 <= missing < 0.5:
            raise ValueError(f"largest_synthetic: missing must be in [0, 0.5), got {missing!r}")
        self.params = {"n_nodes": int(n_nodes), "days": int(days), "seed": int(seed), "missing": float(missing),
                       "version": GENERATOR_VERSION}
        self.root = Path(root).expanduser() if root is not None else default_data_root()
        self.folder = self.root / self.key / f"n{n_nodes}-d{days}-s{seed}-m{missing:g}"
        if _meta(self.folder) != self.params:
            _generate(self.folder, self.params, progress)
        self.speed_path = self.folder / "speed.npy"
        self.speed = self.speed64 = np.load(self.speed_path, mmap_mode="r")  # float32: the stored values
        graph = np.load(self.folder / "graph.npz")
        self.edge_index = torch.from_numpy(graph["edge_index"])
        self.edge_weight = torch.from_numpy(graph["edge_weight"])
        self.locations = graph["locations"]
        n = self.params["n_nodes"]
        self.adj = sp.csr_matrix((graph["edge_weight"], tuple(graph["edge_index"])), shape=(n, n))
        self.sensor_ids = [str(400000 + i) for i in range(n)]
        self.timestamps = (np.datetime64("2019-01-01T00:00") + np.arange(self.speed.shape[0]) *
                           np.timedelta64(5, "m")).astype("datetime64[ns]")

    @property
    def mask(self) -> np.ndarray:
        """``[time, nodes]`` bool, ``speed != 0``: computed when asked (a year at 8,600 sensors is 0.9 GB)."""
        return np.asarray(self.speed) != 0

    def adj_tensor(self) -> torch.Tensor:
        """The adjacency as a dense float32 tensor ``[nodes, nodes]`` (held sparse: :attr:`adj` is a csr matrix)."""
        return torch.from_numpy(self.adj.toarray().astype(np.float32))


def _meta(folder: Path) -> Optional[dict]:
    try:
        return json.loads((folder / "meta.json").read_text())["params"]
    except (OSError, ValueError, KeyError):
        return None


def _graph(rng: np.random.Generator, n: int):
    """Clustered sensor locations and a directed nearest-neighbour graph: ``(edge_index [2, E], weight [E],
    locations [n, 2])``, self-loops included (weight 1)."""
    cities = max(3, n // 400)
    centers = np.column_stack([rng.uniform(32.5, 41.5, cities), rng.uniform(-124.0, -115.0, cities)])
    size = rng.lognormal(0.0, 0.8, cities)
    home = rng.choice(cities, size=n, p=size / size.sum())
    loc = centers[home] + rng.normal(0.0, 0.15, (n, 2))
    xy = np.column_stack([loc[:, 0], loc[:, 1] * np.cos(np.deg2rad(loc[:, 0].mean()))])
    k = np.clip(rng.poisson(7, n) + 1, 2, 15)
    dist, idx = cKDTree(xy).query(xy, k=int(k.max()) + 1)  # column 0: the sensor itself
    keep = np.arange(1, idx.shape[1])[None, :] <= k[:, None]  # [n, k_max]: the k nearest others
    src = np.repeat(np.arange(n), keep.sum(1))
    dst, d = idx[:, 1:][keep], dist[:, 1:][keep]
    sigma = d.std() or 1.0
    weight = np.exp(-np.square(d / sigma))
    edge_index = np.concatenate([np.stack([src, dst]), np.stack([np.arange(n)] * 2)], axis=1).astype(np.int64)
    return edge_index, np.concatenate([weight, np.ones(n)]).astype(np.float32), loc


def _generate(folder: Path, params: dict, progress: bool) -> None:
    """Write ``speed.npy``, ``graph.npz`` and (last, so that a half-written folder is never taken for a finished
    one) ``meta.json`` into ``folder``."""
    n, days, missing = params["n_nodes"], params["days"], params["missing"]
    rng = np.random.default_rng(params["seed"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "meta.json").unlink(missing_ok=True)
    edge_index, weight, loc = _graph(rng, n)
    np.savez(folder / "graph.npz", edge_index=edge_index, edge_weight=weight, locations=loc)
    # congestion moves from a sensor to the sensors it links to: c_t[j] takes from c_{t-1}[i] along i -> j
    w = sp.csr_matrix((weight, (edge_index[1], edge_index[0])), shape=(n, n))
    w = sp.diags(1.0 / np.asarray(w.sum(1)).ravel()) @ w
    free = rng.uniform(55.0, 70.0, n)
    depth = rng.uniform(0.15, 0.55, n)
    steps = days * STEPS_PER_DAY
    tmp = folder / "speed.tmp.npy"
    out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(steps, n))
    c = np.zeros(n)
    block = _BLOCK_DAYS * STEPS_PER_DAY
    for a in tqdm(range(0, steps, block), desc=f"generating largest_synthetic ({n} sensors, {days} days)",
                  unit="block", disable=not progress):
        b = min(a + block, steps)
        field = np.empty((b - a, n))
        incidents = rng.random((b - a, n)) < 2e-4
        noise = rng.normal(0.0, 0.03, (b - a, n))
        for t in range(b - a):
            c = np.maximum(0.0, 0.97 * (w @ c) + 0.8 * incidents[t] + noise[t])
            field[t] = c
        t_abs = np.arange(a, b)
        hour = (t_abs % STEPS_PER_DAY) / 12.0
        weekday = (t_abs // STEPS_PER_DAY + 1) % 7  # 2019-01-01 was a Tuesday: Monday = 0
        rush = np.exp(-np.square((hour - 8.0) / 1.2)) + 1.2 * np.exp(-np.square((hour - 17.5) / 1.6))
        rush = rush * np.where(weekday >= 5, 0.35, 1.0)
        speed = free * (1.0 - depth * rush[:, None]) * np.exp(-field) + rng.normal(0.0, 1.5, (b - a, n))
        speed = np.clip(speed, 3.0, 85.0)
        speed[rng.random((b - a, n)) < missing] = 0.0
        for node, start in zip(*np.nonzero(rng.random((n, b - a)) < 1.0 / (100 * STEPS_PER_DAY))):
            speed[start:start + int(rng.integers(12, 24 * 12 + 1)), node] = 0.0  # an outage of 1 to 24 hours
        out[a:b] = speed
    out.flush()
    del out
    os.replace(tmp, folder / "speed.npy")
    (folder / "meta.json").write_text(json.dumps({"params": params, "steps": steps, "source": LARGEST_SOURCE},
                                                 indent=1))
