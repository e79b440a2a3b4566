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
* ``historical_median``: per node, weekday and slot, the median of the non-zero training readings of the
  slot and the ``MEDIAN_POOL`` slots either side of it (the same weekday's 25 minutes around it for
  5-minute data). The median, not the mean, is the constant forecast of least absolute error, and the
  pooled slots give each cell about five times the readings of one slot. Cells with no non-zero reading take
  the ``historical_average`` value. This is the table of the models' ``seasonal_fallback``.
"""
from __future__ import annotations

import difflib
import warnings
from typing import Callable, Dict

import numpy as np

from .datasets.covariates import day_of_week

__all__ = ["BASELINES", "baseline_predict", "last_value", "last_value_ffill", "historical_average",
           "historical_median", "fit_historical_average", "fit_historical_median", "time_slots"]

#: Slots either side of a slot whose readings ``historical_median`` pools (2: chosen on the METR-LA validation
#: split among 0-3, where 1-3 tie within 0.0001 MAE and 0 is 0.0005 worse at step 3).
MEDIAN_POOL = 2


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


def fit_historical_median(speed: np.ndarray, timestamps: np.ndarray, pool: int = MEDIAN_POOL,
                          block: int = 32) -> np.ndarray:
    """Median non-zero reading per weekday, slot and node over the slot and ``pool`` slots either side of it
    (wrapping round the week: Sunday's last slot neighbours Monday's first); cells with no non-zero reading
    take :func:`fit_historical_average`'s value. ``block`` nodes are done at a time (memory
    ``7 * slots * (2 * pool + 1) * readings per cell * block`` float32).

    Shapes:
        speed: ``[time, nodes]``; timestamps: ``[time]`` -> table ``[7, slots_per_day, nodes]`` float64.
    """
    if not isinstance(pool, (int, np.integer)) or pool < 0:
        raise ValueError(f"pool must be a whole number of slots >= 0, got {pool!r}.")
    speed = np.asarray(speed, dtype=np.float64)
    slot, per_day = time_slots(timestamps)
    if 2 * pool + 1 > 7 * per_day:
        raise ValueError(f"pool={pool} spans more than the {7 * per_day} slots of a week.")
    week = day_of_week(timestamps) * per_day + slot                                  # [time]
    cells = 7 * per_day
    order = np.argsort(week, kind="stable")
    count = np.bincount(week, minlength=cells)
    rank = np.arange(len(week)) - np.repeat(np.cumsum(count) - count, count)           # occurrence in its cell
    table = fit_historical_average(speed, timestamps).reshape(cells, -1)
    for lo in range(0, speed.shape[1], block):
        part = speed[order, lo:lo + block].astype(np.float32)
        vals = np.full((cells, max(int(count.max()), 1), part.shape[1]), np.nan, dtype=np.float32)
        vals[week[order], rank] = np.where(part != 0, part, np.nan)
        pooled = np.concatenate([np.roll(vals, s, axis=0) for s in range(-pool, pool + 1)], axis=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)                             # all-NaN cells
            med = np.nanmedian(pooled, axis=1)
        table[:, lo:lo + block] = np.where(np.isnan(med), table[:, lo:lo + block], med)
    return table.reshape(7, per_day, -1)


def _lookup(splits, split: str, fit) -> np.ndarray:
    """``fit(training readings, their timestamps)`` ``[7, slots, nodes]`` at each target step of ``split``."""
    ds = _split(splits, split)
    data = splits.dataset
    stop = splits.fit_stop
    table = fit(data.speed64[:stop], data.timestamps[:stop])
    ts = np.asarray(data.timestamps)
    slot, per_day = time_slots(ts)
    if per_day != table.shape[1]:
        raise ValueError("sampling step differs between the training and evaluation steps")
    dow = day_of_week(ts)
    t = ds.starts[:, None] + np.arange(ds.window, ds.window + ds.horizon)  # [windows, horizon]
    return table[dow[t], slot[t]].astype(np.float32)


def historical_average(splits, split: str = "test") -> np.ndarray:
    """Weekday x slot x node mean of the non-zero training readings, looked up at each target step.

    Shapes: ``[windows, horizon, nodes]``.
    """
    return _lookup(splits, split, fit_historical_average)


def historical_median(splits, split: str = "test", pool: int = MEDIAN_POOL) -> np.ndarray:
    """Weekday x slot x node median of the non-zero training readings, pooled over ``pool`` slots either side
    (:func:`fit_historical_median`), looked up at each target step.

    Shapes: ``[windows, horizon, nodes]``.
    """
    return _lookup(splits, split, lambda speed, timestamps: fit_historical_median(speed, timestamps, pool=pool))


#: Registered baselines: name -> ``fn(splits, split) -> [windows, horizon, nodes]`` mph.
BASELINES: Dict[str, Callable] = {
    "last_value": last_value,
    "last_value_ffill": last_value_ffill,
    "historical_average": historical_average,
    "historical_median": historical_median,
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
