"""Non-learned baselines, evaluated under the same protocol as the models.

Each baseline maps ``(splits, split)`` to predictions in mph.

Shapes:
    predictions: ``[windows, horizon, nodes]`` float32, aligned with ``splits[split].targets()``.

* ``last_value``: the last input reading repeated over the horizon, zeros (missing) included.
* ``last_value_ffill``: the last non-zero reading inside the input window; a node with no
  non-zero reading in the window falls back to its mean non-zero *training* reading (steps
  ``[0, splits.fit_stop)``), and a node with none there to the global non-zero training mean.
* ``historical_average``: per node, weekday and 5-minute slot of the day, the mean of the non-zero
  training readings. Training readings = steps ``[0, splits.fit_stop)``: the training slice for
  the ``paper`` protocol, the steps covered by the training windows' inputs for ``dcrnn``
  (``[0, num_train - 1 + window)``). Empty cells fall back to the node's mean at that slot over
  all weekdays, then to the node's mean, then to the global mean (non-zero training readings).
"""
from __future__ import annotations

import difflib
from typing import Callable, Dict

import numpy as np

from .datasets.covariates import day_of_week

__all__ = ["BASELINES", "baseline_predict", "last_value", "last_value_ffill", "historical_average",
           "fit_historical_average", "time_slots"]


def _split(splits, split: str):
    try:
        return splits[split]
    except KeyError as err:
        raise ValueError(str(err.args[0])) from None


def _train_node_means(splits) -> np.ndarray:
    train = np.asarray(splits.dataset.speed64[: splits.fit_stop])
    nz = train != 0
    count = nz.sum(axis=0)
    glob = train[nz].mean() if nz.any() else 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(count > 0, train.sum(axis=0) / count, glob)
    return means


def last_value(splits, split: str = "test") -> np.ndarray:
    """Repeat the last input reading (0 if it is missing). Shapes: ``[windows, horizon, nodes]``."""
    ds = _split(splits, split)
    last = ds.speed.numpy()[ds.starts + ds.window - 1]  # [windows, nodes]
    return np.repeat(last[:, None, :], ds.horizon, axis=1).astype(np.float32)


def last_value_ffill(splits, split: str = "test") -> np.ndarray:
    """Repeat the last non-zero input reading (fallback: training mean of the node).

    Shapes: ``[windows, horizon, nodes]``.
    """
    ds = _split(splits, split)
    x = ds.raw_inputs()  # [windows, window, nodes]
    nz = x != 0
    last_pos = ds.window - 1 - np.argmax(nz[:, ::-1, :], axis=1)  # [windows, nodes]
    last = np.take_along_axis(x, last_pos[:, None, :], axis=1)[:, 0, :]
    fallback = _train_node_means(splits).astype(np.float32)
    last = np.where(nz.any(axis=1), last, fallback[None, :])
    return np.repeat(last[:, None, :], ds.horizon, axis=1).astype(np.float32)


def time_slots(timestamps: np.ndarray) -> tuple:
    """Slot of the day and number of slots, from the sampling step of ``timestamps``.

    Returns:
        ``(slot [time] int64, slots_per_day)``; METR-LA: 288 five-minute slots.
    """
    ts = np.asarray(timestamps).astype("datetime64[ns]")
    step = np.diff(ts).min().astype(np.int64)
    since_midnight = (ts - ts.astype("datetime64[D]")).astype(np.int64)
    per_day = int(round(86_400 * 10**9 / step))
    return (since_midnight // step).astype(np.int64), per_day


def fit_historical_average(speed: np.ndarray, timestamps: np.ndarray) -> np.ndarray:
    """Mean non-zero reading per weekday, slot and node, with the fallbacks of the module doc.

    Shapes:
        speed: ``[time, nodes]``; timestamps: ``[time]`` -> table ``[7, slots_per_day, nodes]`` float64.
    """
    speed = np.asarray(speed, dtype=np.float64)
    slot, per_day = time_slots(timestamps)
    dow = day_of_week(timestamps)
    nz = speed != 0
    total = np.zeros((7, per_day, speed.shape[1]))
    count = np.zeros_like(total)
    np.add.at(total, (dow, slot), np.where(nz, speed, 0.0))
    np.add.at(count, (dow, slot), nz.astype(np.float64))
    glob = speed[nz].mean() if nz.any() else 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        node = np.where(nz.sum(0) > 0, speed.sum(0) / nz.sum(0), glob)               # [nodes]
        by_slot = total.sum(0) / count.sum(0)                                        # [slots, nodes]
        by_slot = np.where(count.sum(0) > 0, by_slot, node[None, :])
        table = np.where(count > 0, total / count, by_slot[None, :, :])
    return table


def historical_average(splits, split: str = "test") -> np.ndarray:
    """Weekday x slot x node mean of the non-zero training readings, looked up at each target step.

    Shapes: ``[windows, horizon, nodes]``.
    """
    ds = _split(splits, split)
    data = splits.dataset
    stop = splits.fit_stop
    table = fit_historical_average(data.speed64[:stop], data.timestamps[:stop])
    ts = np.asarray(data.timestamps)
    slot, per_day = time_slots(ts)
    if per_day != table.shape[1]:
        raise ValueError("sampling step differs between the training and evaluation steps")
    dow = day_of_week(ts)
    t = ds.starts[:, None] + np.arange(ds.window, ds.window + ds.horizon)  # [windows, horizon]
    return table[dow[t], slot[t]].astype(np.float32)


#: Registered baselines: name -> ``fn(splits, split) -> [windows, horizon, nodes]`` mph.
BASELINES: Dict[str, Callable] = {
    "last_value": last_value,
    "last_value_ffill": last_value_ffill,
    "historical_average": historical_average,
}


def baseline_predict(name: str, splits, split: str = "test") -> np.ndarray:
    """Predict a split with a registered baseline.

    Args:
        name: a key of :data:`BASELINES`.
        splits: :class:`~stgnn_diag.datasets.Splits` from ``make_splits``.
        split: ``"train"``, ``"val"`` or ``"test"``.

    Returns:
        float32 ``[windows, horizon, nodes]`` in mph.

    Raises:
        ValueError: unknown name (with close matches) or split.
    """
    if name not in BASELINES:
        close = difflib.get_close_matches(str(name), BASELINES, n=3, cutoff=0.4)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ValueError(f"Unknown baseline {name!r}; registered: {sorted(BASELINES)}.{hint}")
    return BASELINES[name](splits, split)
