"""Evaluation protocols on METR-LA: how windows are cut, split and scaled.

``"dcrnn"`` (default, canonical; DCRNN, Graph WaveNet, STAEformer, BasicTS <= 0.4):
    every ``window + horizon`` span of the whole series is a sample (12/12: 34,249); split by count
    exactly as DCRNN's ``generate_training_data.py``: ``num_test = round(n * 0.2)``,
    ``num_train = round(n * 0.7)``, ``num_val = n - num_test - num_train``; train first, then val,
    test last (12/12: 23,974 / 3,425 / 6,850). One global StandardScaler on the speed values of the
    training *input* windows, zeros included, each reading counted as many times as it occurs in
    overlapping windows (12/12: mean 54.40592829587609, std 19.493739270573062). The training
    readings (for baselines) are the steps covered by those inputs: ``[0, num_train - 1 + window)``.
``"paper"`` (Hankemeier & Schilling, ESANN 2026, from their code):
    the raw timeline is split first, ``train_end = int(0.7 T)``, ``val_end = train_end + int(0.1 T)``,
    ``test_end = val_end + int(0.2 T)`` (METR-LA: [0, 23990), [23990, 27417), [27417, 34271): the last
    step is unused), then windows are cut inside each part (12/12: 23,967 / 3,404 / 6,831). A
    per-node StandardScaler (population std) is fit on the training part, zeros included.

In both, zeros stay in the inputs (scaled like any value) and targets equal to 0 are masked.

Windows of different lengths on the same targets (``align_window``): the protocol cuts, splits and scales
the series as it would for inputs of ``align_window`` steps, and a window of ``window <= align_window`` steps
keeps those target spans and reads the ``window`` steps just before each. Every input length from 1 to
``align_window`` is then scored on identical test targets (the first ``align_window - window`` steps of the
series, which only the longer inputs need, are read by none of the shorter ones), so MAE columns across
input lengths compare like with like. ``align_window=None`` is the protocol at ``window`` itself.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Callable, Dict, Optional, Tuple

import numpy as np

from .scaler import StandardScaler
from .windows import WindowDataset, window_starts

SPLIT_NAMES = ("train", "val", "test")


@dataclass
class ProtocolSpec:
    """What a protocol decides: window starts per split, the scaler, and the training steps.

    Attributes:
        starts: ``{"train"|"val"|"test": int64 [windows]}``.
        scaler: fit on the training data as the protocol prescribes.
        fit_stop: the training readings are the steps ``[0, fit_stop)``.
    """

    starts: Dict[str, np.ndarray]
    scaler: StandardScaler
    fit_stop: int


def _dcrnn(speed64: np.ndarray, window: int, horizon: int) -> ProtocolSpec:
    t = speed64.shape[0]
    n = t - window - horizon + 1
    num_test = round(n * 0.2)
    num_train = round(n * 0.7)
    num_val = n - num_test - num_train
    allw = np.arange(n, dtype=np.int64)
    starts = {
        "train": allw[:num_train],
        "val": allw[num_train:num_train + num_val],
        "test": allw[num_train + num_val:],
    }
    fit_stop = num_train - 1 + window
    # multiplicity of each reading among the training input windows (DCRNN fits on x_train)
    counts = np.zeros(fit_stop, dtype=np.float64)
    for k in range(window):
        counts[k:k + num_train] += 1.0
    scaler = StandardScaler.fit(speed64[:fit_stop], axis=None, weights=counts)
    return ProtocolSpec(starts, scaler, fit_stop)


def _paper(speed64: np.ndarray, window: int, horizon: int) -> ProtocolSpec:
    t = speed64.shape[0]
    train_end = int(0.7 * t)
    val_end = train_end + int(0.1 * t)
    test_end = val_end + int(0.2 * t)
    bounds = {"train": (0, train_end), "val": (train_end, val_end), "test": (val_end, test_end)}
    starts = {k: window_starts(a, b, window, horizon) for k, (a, b) in bounds.items()}
    scaler = StandardScaler.fit(speed64[:train_end], axis=0)
    return ProtocolSpec(starts, scaler, train_end)


#: Registered protocols: name -> ``fn(speed64 [time, nodes], window, horizon) -> ProtocolSpec``.
PROTOCOLS: Dict[str, Callable[[np.ndarray, int, int], ProtocolSpec]] = {
    "dcrnn": _dcrnn,
    "paper": _paper,
}


@dataclass
class Splits:
    """Train / val / test windows of one protocol, plus the scaler.

    Attributes:
        train, val, test: :class:`WindowDataset` (sharing the same scaled series).
        scaler: ``transform`` / ``inverse_transform`` for numpy and torch (mph <-> scaled).
        protocol, window, horizon, align_window: how the splits were made.
        fit_stop: training readings are the steps ``[0, fit_stop)`` (scaler and baselines use them).
        dataset: the source :class:`~stgnn_diag.datasets.MetrLA` (or any object with ``speed64``,
            ``speed``, ``timestamps``, ``covariates()``, ``edge_index``, ``edge_weight``).
    """

    train: WindowDataset
    val: WindowDataset
    test: WindowDataset
    scaler: StandardScaler
    protocol: str
    window: int
    horizon: int
    fit_stop: int
    dataset: object = field(repr=False)
    align_window: Optional[int] = None

    def __getitem__(self, name: str) -> WindowDataset:
        if name not in SPLIT_NAMES:
            raise KeyError(f"unknown split {name!r}; choose one of {SPLIT_NAMES}")
        return getattr(self, name)

    @property
    def n_nodes(self) -> int:
        return self.train.n_nodes

    @property
    def exog_size(self) -> int:
        return self.train.exog_size

    @property
    def edge_index(self):
        """``[2, E]`` long, edge ``i -> j`` for ``adj[i, j] != 0``."""
        return self.dataset.edge_index

    @property
    def edge_weight(self):
        """``[E]`` float32."""
        return self.dataset.edge_weight

    def sizes(self) -> Tuple[int, int, int]:
        """``(len(train), len(val), len(test))``."""
        return len(self.train), len(self.val), len(self.test)


def _check_int(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def make_splits(
    dataset,
    protocol: str = "dcrnn",
    window: int = 12,
    horizon: int = 12,
    *,
    stride: int = 1,
    max_windows: Optional[int] = None,
    align_window: Optional[int] = None,
) -> Splits:
    """Cut, split and scale the windows of ``dataset`` under a protocol.

    Args:
        dataset: a :class:`~stgnn_diag.datasets.MetrLA`.
        protocol: ``"dcrnn"`` (canonical, default) or ``"paper"``; see the module docstring.
        window: input steps (12 in the literature).
        horizon: predicted steps (12 = 1 hour, 36 = 3 hours).
        stride: keep every ``stride``-th window of each split (for quick tests / smoke runs).
        max_windows: then keep at most the first ``max_windows`` windows of each split.
            ``stride`` and ``max_windows`` only thin the windows: the scaler and the training
            readings (``fit_stop``) are those of the full protocol.
        align_window: the targets, scaler and training readings of the protocol at this input length,
            with inputs of ``window`` steps (``window <= align_window``); see the module docstring.

    Returns:
        :class:`Splits`.

    Raises:
        ValueError: unknown protocol (lists the valid ones), bad sizes, or a series too short.
    """
    if protocol not in PROTOCOLS:
        close = difflib.get_close_matches(str(protocol), PROTOCOLS, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"Unknown protocol {protocol!r}; valid protocols: {sorted(PROTOCOLS)}.{hint}")
    window = _check_int("window", window)
    horizon = _check_int("horizon", horizon)
    stride = _check_int("stride", stride)
    if max_windows is not None:
        max_windows = _check_int("max_windows", max_windows)
    if align_window is not None:
        align_window = _check_int("align_window", align_window)
        if align_window < window:
            raise ValueError(f"align_window={align_window} is shorter than window={window}: the targets are "
                             f"aligned to the longest input length of a comparison; pass align_window >= window")
    lean = bool(getattr(dataset, "memory_mapped", False))  # the series is a file: no copy of it in memory
    speed64 = dataset.speed64 if lean else np.asarray(dataset.speed64)
    cut = window if align_window is None else align_window
    spec = PROTOCOLS[protocol](speed64, cut, horizon)
    empty = [k for k in SPLIT_NAMES if len(spec.starts[k]) == 0]
    if empty:
        raise ValueError(
            f"series of {speed64.shape[0]} steps too short for window={cut}, horizon={horizon} "
            f"under protocol {protocol!r}: no window in {empty}")
    scaled = None if lean else spec.scaler.transform(speed64).astype(np.float32)
    speed = np.asarray(dataset.speed, dtype=np.float32)
    cov = np.asarray(dataset.covariates(), dtype=np.float32)
    parts = {}
    for name in SPLIT_NAMES:
        starts = spec.starts[name][::stride] + (cut - window)  # the same targets, the last `window` inputs
        if max_windows is not None:
            starts = starts[:max_windows]
        parts[name] = WindowDataset(scaled, speed, cov, starts, window, horizon, name=name, scaler=spec.scaler)
    return Splits(**parts, scaler=spec.scaler, protocol=protocol, window=window, horizon=horizon,
                  fit_stop=spec.fit_stop, dataset=dataset, align_window=align_window)
