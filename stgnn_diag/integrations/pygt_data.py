"""Our data <-> PyG Temporal's: ``METRLADatasetLoader`` files and ``StaticGraphTemporalSignal``.

* :func:`write_metrla_loader_files` writes what ``torch_geometric_temporal``'s
  ``METRLADatasetLoader(raw_data_dir)`` reads: ``adj_mat.npy`` (``[N, N]``, DCRNN's ``adj_mx``),
  ``node_values.npy`` (``[T, N, 2]``: speed in mph, time of day in ``[0, 1)``) and an empty
  ``METR-LA.zip`` placeholder (the loader downloads when the zip is absent, and never opens it
  when both ``.npy`` files exist). :func:`load_metrla_loader` then runs the real loader offline.
* :func:`read_metrla_loader_files` goes back: a :class:`SeriesDataset` that works wherever a
  :class:`~stgnn_diag.datasets.MetrLA` does (``make_splits``, the tsl helpers, ...).
* :func:`to_static_graph_temporal_signal` / :func:`signal_to_windows` convert windows both ways.

Edge direction: PyG Temporal builds ``edge_index`` with PyG's ``dense_to_sparse`` (``adj[i, j]``
-> edge ``i -> j``), the same convention as ours, so no flip is needed.

Note the loader z-scores each feature over *all* time steps (test included) and keeps missing
readings (zeros) in the targets: fine for compatibility, not for a benchmark. For benchmarks use
``scaling="protocol", target="mph"`` (our split's scaler, targets in mph with a mask).
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional, Sequence, Union

import numpy as np
import torch
from torch import Tensor

from ._require import require_pygt

require_pygt("stgnn_diag.integrations.pygt_data")

from torch_geometric_temporal.dataset import METRLADatasetLoader  # noqa: E402
from torch_geometric_temporal.signal import StaticGraphTemporalSignal  # noqa: E402

from ..datasets import StandardScaler, make_splits  # noqa: E402
from ..datasets.covariates import calendar_covariates, day_of_week, time_of_day  # noqa: E402
from ..datasets.graph import dense_to_edge_index  # noqa: E402
from .pygt_layouts import from_layout  # noqa: E402

ADJ_FILE, VALUES_FILE, ZIP_FILE = "adj_mat.npy", "node_values.npy", "METR-LA.zip"
#: ``features=`` names -> channel of ``node_values.npy``.
FEATURES = {"speed": 0, "tod": 1}

PathLike = Union[str, Path]


# --------------------------------------------------------------------- METRLADatasetLoader files
def write_metrla_loader_files(dataset, folder: PathLike, *, dtype=np.float32) -> Path:
    """Write ``adj_mat.npy``, ``node_values.npy`` (``[T, N, 2]``: speed, time of day) and an empty
    ``METR-LA.zip`` into ``folder`` (created), the layout of PyG Temporal's METR-LA download.

    Args:
        dataset: a :class:`~stgnn_diag.datasets.MetrLA` (``speed``, ``adj``, ``time_of_day()``).
        dtype: of ``node_values.npy`` (float32 like PyG Temporal's file: 57 MB for METR-LA).

    Returns:
        ``folder``, ready for ``METRLADatasetLoader(raw_data_dir=str(folder))``.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    speed = np.asarray(dataset.speed64 if hasattr(dataset, "speed64") else dataset.speed)
    tod = np.asarray(dataset.time_of_day(), dtype=np.float64)
    values = np.empty(speed.shape + (2,), dtype=dtype)
    values[..., 0] = speed
    values[..., 1] = tod[:, None]
    np.save(folder / ADJ_FILE, np.asarray(dataset.adj, dtype=np.float32))
    np.save(folder / VALUES_FILE, values)
    (folder / ZIP_FILE).touch()
    return folder


def load_metrla_loader(folder: PathLike) -> METRLADatasetLoader:
    """PyG Temporal's real ``METRLADatasetLoader`` on ``folder``, guaranteed offline: raises
    ``FileNotFoundError`` instead of downloading when the ``.npy`` files are missing, and adds the
    empty zip placeholder if needed."""
    folder = Path(folder)
    missing = [f for f in (ADJ_FILE, VALUES_FILE) if not (folder / f).is_file()]
    if missing:
        raise FileNotFoundError(f"{missing} not in {folder}; write them with write_metrla_loader_files().")
    (folder / ZIP_FILE).touch(exist_ok=True)
    return METRLADatasetLoader(raw_data_dir=str(folder))


class SeriesDataset:
    """A speed series with its sensor graph, duck-typed like :class:`~stgnn_diag.datasets.MetrLA`.

    Attributes:
        speed ``[T, N]`` float32 (0 = missing), speed64 ``[T, N]`` float64, mask ``[T, N]`` bool,
        timestamps ``[T]`` datetime64[ns], adj ``[N, N]`` float32, edge_index ``[2, E]`` (edge
        ``i -> j`` for ``adj[i, j] != 0``), edge_weight ``[E]``.
    """

    def __init__(self, speed: np.ndarray, timestamps: np.ndarray, adj: np.ndarray, name: str = "series"):
        self.speed64 = np.asarray(speed, dtype=np.float64)
        self.speed = self.speed64.astype(np.float32)
        self.mask = self.speed64 != 0
        self.timestamps = np.asarray(timestamps).astype("datetime64[ns]")
        self.adj = np.asarray(adj, dtype=np.float32)
        self.edge_index, self.edge_weight = dense_to_edge_index(self.adj)
        self.name = name
        if self.timestamps.shape != (self.speed.shape[0],) or self.adj.shape != (self.speed.shape[1],) * 2:
            raise ValueError(f"inconsistent shapes: speed {self.speed.shape}, timestamps {self.timestamps.shape}, "
                             f"adj {self.adj.shape}")

    n_nodes = property(lambda self: self.speed.shape[1])
    n_steps = property(lambda self: self.speed.shape[0])

    def time_of_day(self) -> np.ndarray:
        return time_of_day(self.timestamps)

    def day_of_week(self) -> np.ndarray:
        return day_of_week(self.timestamps)

    def covariates(self) -> np.ndarray:
        """``[T, 8]``: time of day, one-hot weekday (as :meth:`MetrLA.covariates`)."""
        return calendar_covariates(self.timestamps)

    def connectivity(self):
        return self.edge_index, self.edge_weight

    def __len__(self) -> int:
        return self.n_steps

    def __repr__(self) -> str:
        return f"SeriesDataset({self.name}, n_steps={self.n_steps}, n_nodes={self.n_nodes})"


def read_metrla_loader_files(folder: PathLike, *, start_date: str = "2012-03-01") -> SeriesDataset:
    """Read PyG Temporal's ``adj_mat.npy`` / ``node_values.npy`` back into a :class:`SeriesDataset`.

    ``node_values.npy`` has no dates, only the time of day: the timestamps are rebuilt on the
    regular grid it implies (5 minutes for METR-LA), starting on ``start_date`` (METR-LA: 2012-03-01)
    at the first step's time of day. Raises ``ValueError`` if the time of day is not a regular grid.
    """
    folder = Path(folder)
    values = np.load(folder / VALUES_FILE)
    adj = np.load(folder / ADJ_FILE)
    if values.ndim != 3 or values.shape[-1] < 2:
        raise ValueError(f"{VALUES_FILE} must be [T, N, 2] (speed, time of day), got {values.shape}")
    tod = values[:, 0, 1].astype(np.float64)
    steps = np.mod(np.diff(tod), 1.0)
    steps_per_day = int(round(1.0 / float(np.median(steps))))
    k = int(round(tod[0] * steps_per_day)) + np.arange(len(tod))
    if not np.allclose(tod, (k % steps_per_day) / steps_per_day, atol=1e-5):
        raise ValueError(f"the time of day in {VALUES_FILE} is not a regular grid of {steps_per_day} steps a day")
    ns_per_step = 86_400 * 10**9 // steps_per_day
    timestamps = np.datetime64(start_date, "ns") + (k * ns_per_step).astype("timedelta64[ns]")
    return SeriesDataset(values[..., 0], timestamps, adj, name="METR-LA (PyG Temporal files)")


# --------------------------------------------------------------------- StaticGraphTemporalSignal
def _feature_matrix(dataset, features: Sequence[str]) -> np.ndarray:
    cols = []
    shape = dataset.speed.shape
    for f in features:
        if f not in FEATURES and f != "calendar":
            raise ValueError(f"unknown feature {f!r}; choose from {list(FEATURES) + ['calendar']}")
        if f == "speed":
            cols.append(np.asarray(dataset.speed, dtype=np.float32)[..., None])
        elif f == "tod":
            cols.append(np.broadcast_to(np.asarray(dataset.time_of_day(), dtype=np.float32)[:, None],
                                        shape)[..., None])
        else:  # the 8 calendar channels the forecasters read (time of day + one-hot weekday)
            cov = np.asarray(dataset.covariates(), dtype=np.float32)
            cols.append(np.broadcast_to(cov[:, None, :], shape + cov.shape[-1:]))
    return np.concatenate(cols, axis=-1)  # [T, N, F]


def to_static_graph_temporal_signal(dataset, *, window: int = 12, horizon: int = 12,
                                    features: Sequence[str] = ("speed", "tod"), scaling: Optional[str] = "pygt",
                                    target: str = "input", starts: Optional[np.ndarray] = None,
                                    split: Optional[str] = None, protocol: str = "dcrnn",
                                    with_mask: bool = True) -> StaticGraphTemporalSignal:
    """Windows of ``dataset`` as a PyG Temporal ``StaticGraphTemporalSignal``.

    Snapshot ``k`` (window start ``s``) is a PyG ``Data`` with ``x [N, F, window]`` (steps
    ``[s, s + window)``), ``y [N, horizon]`` (speed at ``[s + window, s + window + horizon)``),
    ``edge_index [2, E]`` (our = PyG's direction), ``edge_attr [E]`` and, with ``with_mask``,
    ``mask [N, horizon]`` float (1 = observed, 0 = missing reading).

    Args:
        dataset: :class:`~stgnn_diag.datasets.MetrLA` or :class:`SeriesDataset`.
        features: channels of ``x``, from ``"speed"``, ``"tod"`` (time of day) and ``"calendar"`` (8 channels:
            time of day + one-hot weekday, what the zoo's forecasters read as ``u``; never z-scored).
        scaling: ``"pygt"``: exactly ``METRLADatasetLoader``'s (each feature z-scored over all
            steps, zeros included, float32); ``"protocol"``: speed scaled by the scaler of our
            ``protocol`` (fit on its training data), time of day raw; None: raw values.
        target: ``"input"``: the speed channel as scaled in ``x`` (the loader's convention);
            ``"mph"``: raw speed (use with the mask for masked losses).
        starts: window starts (default: every window, or those of ``split``).
        split: ``"train"`` / ``"val"`` / ``"test"`` windows of ``protocol`` (see
            :func:`~stgnn_diag.datasets.make_splits`).
    """
    if target not in ("input", "mph"):
        raise ValueError(f"target must be 'input' or 'mph', got {target!r}")
    feats = _feature_matrix(dataset, features)  # [T, N, F]
    speed = np.asarray(dataset.speed, dtype=np.float32)
    if scaling == "pygt" and "calendar" in features:
        raise ValueError("scaling='pygt' z-scores every channel, which would break the calendar encoding; "
                         "use scaling='protocol' with the 'calendar' feature.")
    if scaling == "pygt":
        x = feats.transpose(1, 2, 0).astype(np.float32)  # [N, F, T], as the loader
        x = x - x.mean(axis=(0, 2)).reshape(1, -1, 1)
        x = x / x.std(axis=(0, 2)).reshape(1, -1, 1)
    elif scaling == "protocol":
        scaler = make_splits(dataset, protocol, window, horizon).scaler
        feats = feats.copy()
        if "speed" in features:
            feats[..., _channel(features, "speed")] = _scale(scaler, dataset)
        x = feats.transpose(1, 2, 0)
    elif scaling is None:
        x = feats.transpose(1, 2, 0)
    else:
        raise ValueError(f"scaling must be 'pygt', 'protocol' or None, got {scaling!r}")
    x = np.ascontiguousarray(x, dtype=np.float32)
    if target == "input":
        if "speed" not in features:
            raise ValueError("target='input' needs the 'speed' feature")
        y = x[:, _channel(features, "speed"), :]
    else:
        y = np.ascontiguousarray(speed.T)
    if starts is None:
        if split is not None:
            starts = make_splits(dataset, protocol, window, horizon)[split].starts
        else:
            starts = np.arange(speed.shape[0] - window - horizon + 1)
    starts = np.asarray(starts, dtype=np.int64)
    xs = [x[:, :, s:s + window] for s in starts]
    ys = [y[:, s + window:s + window + horizon] for s in starts]
    extra = {}
    if with_mask:
        m = np.ascontiguousarray(speed.T != 0, dtype=np.float32)
        extra["mask"] = [m[:, s + window:s + window + horizon] for s in starts]
    ei, ew = np.asarray(dataset.edge_index, dtype=np.int64), np.asarray(dataset.edge_weight, dtype=np.float32)
    return StaticGraphTemporalSignal(ei, ew, xs, ys, **extra)


def _channel(features: Sequence[str], name: str) -> int:
    """Channel of feature ``name`` in the matrix of ``features`` ("calendar" is 8 channels wide)."""
    c = 0
    for f in features:
        if f == name:
            return c
        c += 8 if f == "calendar" else 1
    raise ValueError(f"no {name!r} feature in {list(features)}")


def _scale(scaler: StandardScaler, dataset) -> np.ndarray:
    return scaler.transform(np.asarray(dataset.speed64 if hasattr(dataset, "speed64") else dataset.speed,
                                       dtype=np.float64)).astype(np.float32)


def signal_to_windows(signal: StaticGraphTemporalSignal, index=None) -> Dict[str, Tensor]:
    """The other way: snapshots of a ``StaticGraphTemporalSignal`` as one tsl-layout batch.

    Args:
        signal: e.g. ``METRLADatasetLoader(...).get_dataset()`` or :func:`to_static_graph_temporal_signal`.
        index: snapshot indices (default: all; mind the memory on a full series).

    Returns:
        ``x [S, window, N, F]``, ``y [S, horizon, N, 1]`` (targets ``[N, horizon]``) or
        ``[S, horizon, N, O]`` (targets ``[N, O, horizon]``), ``edge_index [2, E]``,
        ``edge_weight [E]``, and every additional attribute (e.g. ``mask``) shaped like ``y``.
    """
    idx = range(signal.snapshot_count) if index is None else [int(i) for i in np.asarray(index).reshape(-1)]
    idx = list(idx)
    x = torch.as_tensor(np.stack([np.asarray(signal.features[i]) for i in idx])).float()  # [S, N, F, T]
    out = {"x": from_layout(x, "BNFT")}

    def targets(seq) -> Tensor:
        t = torch.as_tensor(np.stack([np.asarray(seq[i]) for i in idx]))
        if t.dim() == 3:  # [S, N, H]
            return t.transpose(1, 2).unsqueeze(-1)
        return t.permute(0, 3, 1, 2)  # [S, N, O, H] -> [S, H, N, O]

    out["y"] = targets(signal.targets).float()
    for key in signal.additional_feature_keys:
        out[key] = targets(getattr(signal, key))
    out["edge_index"] = torch.as_tensor(np.asarray(signal.edge_index)).long()
    out["edge_weight"] = torch.as_tensor(np.asarray(signal.edge_weight)).float()
    return out
