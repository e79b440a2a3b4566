"""A sensor data set in the DCRNN layout (speed matrix + sensor graph), loaded into numpy / torch arrays.

:class:`SensorDataset` holds everything the protocols, the training engine and the sensitivity tools read;
a data set is a subclass that names its :class:`~stgnn_diag.datasets.layout.Layout`, its display name and
how to fetch it (:mod:`stgnn_diag.datasets.metr_la`, :mod:`stgnn_diag.datasets.pems_bay`), registered by
name in :mod:`stgnn_diag.datasets.registry`.
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import ClassVar, List, Optional

import numpy as np
import torch
from torch import Tensor

from .covariates import EXOG_SIZE, calendar_covariates, day_of_week, time_of_day
from .download import check_recorded_digests, download_layout
from .graph import dense_to_edge_index
from .layout import Layout
from .readers import read_adj_pkl, read_locations, read_sensor_ids, read_speed_h5, read_speed_npz
from .root import PathLike, find_data_root, layout_dir
from .tsl_archive import TslArchive, download_tsl_archive


class SensorDataset:
    r"""Speed readings of a sensor network on a regular time grid, with its directed sensor graph.

    Subclasses set :attr:`key`, :attr:`name`, :attr:`layout` and, when tsl publishes the data set,
    :attr:`public_archive` (the download used when no mirror is given). The data root is resolved by
    :func:`~stgnn_diag.datasets.root.find_data_root` (argument > ``$STGNN_DIAG_DATA`` > the repository's
    ``datasets/`` folder > download).

    Edge convention: ``adj[i, j] != 0`` is the edge ``i -> j``; ``edge_index[0]`` holds sources and
    ``edge_index[1]`` targets (PyG's ``dense_to_sparse``, not tsl's transposing ``adj_to_edge_index``).

    Args:
        root: data root (folder containing ``<layout.folder>/``) or the data set folder itself.
        download: download missing files (from ``base_url`` / ``$STGNN_DIAG_DATA_URL``, else the public source).
        base_url: URL of a folder serving the DCRNN layout.
        speed_format: ``"auto"`` (npz if present, else h5), ``"npz"`` or ``"h5"``.
        progress: tqdm progress bar while downloading.

    Attributes:
        speed: ``[time, nodes]`` float32, 0 = missing reading.
        speed64: ``[time, nodes]`` float64, the stored values (scalers are fit on these).
        mask: ``[time, nodes]`` bool, ``speed != 0``.
        timestamps: ``[time]`` datetime64[ns].
        sensor_ids: list of ``nodes`` str, node order.
        adj: ``[nodes, nodes]`` float32 (DCRNN Gaussian-kernel weights, self-loops 1.0).
        edge_index: ``[2, E]`` long; edge_weight: ``[E]`` float32.
        locations: ``[nodes, 2]`` float64 latitude / longitude.
    """

    #: Registry name (``"metr_la"``); also the name in result files and unit ids.
    key: ClassVar[str] = ""
    #: Display name (``"METR-LA"``), in tables and plots.
    name: ClassVar[str] = ""
    layout: ClassVar[Layout]
    #: tsl's archive of the data set (:mod:`stgnn_diag.datasets.tsl_archive`), or None: no public source.
    public_archive: ClassVar[Optional[TslArchive]] = None
    #: Covariate channels returned by :meth:`covariates`.
    exog_size: ClassVar[int] = EXOG_SIZE

    def __init__(
        self,
        root: Optional[PathLike] = None,
        *,
        download: bool = True,
        base_url: Optional[str] = None,
        speed_format: str = "auto",
        progress: bool = True,
    ) -> None:
        self.root: Path = self.resolve_root(root, download=download, base_url=base_url, progress=progress)
        self.folder: Path = layout_dir(self.root, self.layout)
        check_recorded_digests(self.folder)
        self.speed_path = self._speed_path(speed_format)
        reader = read_speed_npz if self.speed_path.name == self.layout.speed_npz else read_speed_h5
        speed, timestamps, ids = reader(self.speed_path)
        self._check_speed(speed, timestamps, ids)
        speed = np.where(np.isnan(speed), 0.0, speed)  # NaN is a missing reading too (said by _check_speed)

        self.speed64: np.ndarray = np.ascontiguousarray(speed, dtype=np.float64)
        self.speed: np.ndarray = self.speed64.astype(np.float32)
        self.mask: np.ndarray = self.speed64 != 0
        self.timestamps: np.ndarray = timestamps
        self.sensor_ids: List[str] = ids
        self.adj, self.locations = self._load_graph(ids)
        self.edge_index, self.edge_weight = dense_to_edge_index(self.adj)

    # ------------------------------------------------------------------ finding and fetching
    @classmethod
    def resolve_root(cls, root: Optional[PathLike] = None, *, download: bool = True, base_url: Optional[str] = None,
                     progress: bool = True) -> Path:
        """The data root holding this data set (see :func:`~stgnn_diag.datasets.root.find_data_root`)."""
        return find_data_root(root, cls.layout, cls.fetch, title=cls.name, download=download, base_url=base_url,
                              progress=progress)

    @classmethod
    def fetch(cls, folder: Path, base_url: Optional[str], progress: bool) -> None:
        """Download the missing files into ``folder``: from ``base_url`` (a mirror of the layout) when given,
        else from :meth:`fetch_public`."""
        if base_url:
            download_layout(folder, cls.layout, base_url=base_url, progress=progress)
        else:
            cls.fetch_public(folder, progress)

    @classmethod
    def fetch_public(cls, folder: Path, progress: bool) -> None:
        """Download :attr:`public_archive` into ``folder`` and build the DCRNN layout from it (the speed file
        plus raw road distances, from which the adjacency is rebuilt with DCRNN's recipe)."""
        archive = cls.public_archive
        if archive is None:
            raise FileNotFoundError(f"{cls.name} is not in {folder} and has no public source to download from; "
                                    f"copy its files there (see datasets/README.md) or pass base_url=... .")
        print(f"{cls.name} not found in {folder}; downloading tsl's public archive ({archive.url}) and building "
              f"the DCRNN layout there.")
        download_tsl_archive(folder, archive.url, cls.layout, archive, progress=progress)

    # ------------------------------------------------------------------ loading
    def _speed_path(self, speed_format: str) -> Path:
        choices = {"auto": None, "npz": self.layout.speed_npz, "h5": self.layout.speed_h5}
        if speed_format not in choices:
            raise ValueError(f"speed_format must be one of {sorted(choices)}, got {speed_format!r}")
        if choices[speed_format] is None:
            path = self.layout.speed_file(self.folder)
        else:
            path = self.folder / choices[speed_format]
        if path is None or not path.is_file():
            want = choices[speed_format] or f"{self.layout.speed_npz} or {self.layout.speed_h5}"
            raise FileNotFoundError(f"{want} not found in {self.folder}")
        return path

    def _check_speed(self, speed: np.ndarray, timestamps: np.ndarray, ids: List[str]) -> None:
        where = self.speed_path
        if speed.ndim != 2 or speed.shape[0] < 2 or speed.shape[1] < 1:
            raise ValueError(f"{where}: speed must be a [time, nodes] matrix, got shape {speed.shape}")
        if timestamps.shape != (speed.shape[0],):
            raise ValueError(
                f"{where}: {timestamps.shape[0]} timestamps for {speed.shape[0]} time steps")
        steps = np.diff(timestamps)
        if not np.all(steps > np.timedelta64(0, "ns")):
            raise ValueError(f"{where}: timestamps are not strictly increasing")
        _check_regular_grid(where, timestamps, steps)
        if len(ids) != speed.shape[1]:
            raise ValueError(f"{where}: {len(ids)} sensor ids for {speed.shape[1]} columns")
        inf = int(np.isinf(speed).sum())
        if inf:
            raise ValueError(f"{where}: {inf} readings are infinite; a corrupt file (the published one has none).")
        nan = np.isnan(speed)
        observed = speed[~nan & (speed != 0)]
        if observed.size == 0:
            raise ValueError(f"{where}: no reading is observed (every value is 0 or NaN): an empty or corrupt file.")
        if observed.min() < 0:
            raise ValueError(f"{where}: {int((observed < 0).sum())} readings are negative (min {observed.min():g}); "
                             f"a missing reading must be 0 or NaN: replace a missing-value marker such as -999 by 0 "
                             f"(np.where(speed < 0, 0, speed)) and save the file again.")
        if observed.max() > MAX_READING:
            raise ValueError(f"{where}: {int((observed > MAX_READING).sum())} readings exceed {MAX_READING:g} "
                             f"(max {observed.max():g}), too large to be speeds and to scale: a corrupt file or "
                             f"another unit (the published files hold mph, below 100).")
        if nan.any():
            n = int(nan.sum())
            warnings.warn(f"{where}: {n} readings ({100 * n / speed.size:.2f} %) are NaN; they are counted as "
                          f"missing, as the zeros are (the published file has no NaN).", UserWarning, stacklevel=4)

    def _load_graph(self, ids: List[str]):
        layout = self.layout
        for rel in layout.graph_files:
            if not (self.folder / rel).is_file():
                raise FileNotFoundError(
                    f"{self.folder / rel} is missing; get the DCRNN sensor_graph files "
                    f"(see datasets/README.md) or delete the folder and let it download again.")
        pkl_ids, _, adj = read_adj_pkl(self.folder / layout.adj_pkl)
        others = [(layout.adj_pkl, pkl_ids)]
        if layout.sensor_ids is not None:
            others.append((layout.sensor_ids, read_sensor_ids(self.folder / layout.sensor_ids)))
        loc_ids, latlon = read_locations(self.folder / layout.locations)
        for label, other in others:
            if other != ids:
                raise ValueError(_id_mismatch(self.speed_path.name, ids, label, other))
        if loc_ids != ids:
            if sorted(loc_ids) != sorted(ids):
                raise ValueError(_id_mismatch(self.speed_path.name, ids, layout.locations, loc_ids))
            order = {s: k for k, s in enumerate(loc_ids)}
            latlon = latlon[[order[s] for s in ids]]
        return adj, latlon

    # ------------------------------------------------------------------ properties
    @property
    def n_nodes(self) -> int:
        """Number of sensors."""
        return self.speed.shape[1]

    @property
    def n_steps(self) -> int:
        """Number of time steps."""
        return self.speed.shape[0]

    @property
    def n_edges(self) -> int:
        """Number of directed edges, self-loops included."""
        return int(self.edge_index.size(1))

    @property
    def missing_rate(self) -> float:
        """Fraction of zero (missing) readings."""
        return float(1.0 - self.mask.mean())

    def __len__(self) -> int:
        return self.n_steps

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(n_steps={self.n_steps}, n_nodes={self.n_nodes}, n_edges={self.n_edges}, "
                f"root='{self.root}')")

    # ------------------------------------------------------------------ covariates
    def time_of_day(self) -> np.ndarray:
        """Time of day in ``[0, 1)``. Shapes: ``[time]`` float64."""
        return time_of_day(self.timestamps)

    def day_of_week(self) -> np.ndarray:
        """Day of week, Monday = 0 ... Sunday = 6. Shapes: ``[time]`` int64."""
        return day_of_week(self.timestamps)

    def covariates(self) -> np.ndarray:
        """Calendar covariates shared by all nodes.

        Returns:
            float32 array; channel 0 = time of day in ``[0, 1)``, channels 1..7 = one-hot day of
            week (Monday first). See :mod:`stgnn_diag.datasets.covariates`.

        Shapes:
            ``[time, 8]``.
        """
        return calendar_covariates(self.timestamps)

    def connectivity(self) -> tuple:
        """``(edge_index [2, E] long, edge_weight [E] float32)``, edge ``i -> j`` for ``adj[i, j] != 0``."""
        return self.edge_index, self.edge_weight

    def adj_tensor(self) -> Tensor:
        """The adjacency as a float32 tensor ``[nodes, nodes]``."""
        return torch.from_numpy(self.adj)


#: The largest reading a speed file may hold; larger values are corrupt (and overflow a float32 scaler's square).
MAX_READING = 1e6


def _check_regular_grid(where: Path, timestamps: np.ndarray, steps: np.ndarray) -> None:
    """Refuse timestamps off one regular grid: a window would span the gap as if its steps were consecutive."""
    step = steps.min()
    off = np.flatnonzero(steps != step)
    if off.size:
        k = int(off[0])
        raise ValueError(
            f"{where}: the timestamps are not on one regular grid of {_fmt(step)}: {off.size} irregular steps, the "
            f"first a gap of {_fmt(steps[k])} after {str(timestamps[k])[:16]} (step {k}), so a window would span it "
            f"as if its steps were consecutive. Insert the missing time steps with readings of 0 (missing) and "
            f"save the file again.")


def _fmt(delta: np.timedelta64) -> str:
    seconds = int(delta / np.timedelta64(1, "s"))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 60 else f"{seconds} s"


def _id_mismatch(name: str, ids: List[str], other_name: str, other: List[str]) -> str:
    n = min(len(ids), len(other))
    first = next((k for k in range(n) if ids[k] != other[k]), n)
    return (f"sensor ids disagree between {name} ({len(ids)} ids) and {other_name} ({len(other)} ids), "
            f"first difference at position {first}; the files come from different releases — "
            f"re-download them together.")
