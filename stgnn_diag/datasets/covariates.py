"""Calendar covariates: time of day and day of week.

The encoding (:mod:`stgnn_diag.calendar`, ``EXOG_SIZE = 8`` channels):

* channel 0: time of day, fraction of the day in ``[0, 1)`` (00:00 -> 0, 23:55 -> 287/288), as DCRNN;
* channels 1..7: day of week, one-hot, Monday = channel 1 ... Sunday = channel 7
  (pandas' ``dayofweek`` order, Monday = 0).
"""
from __future__ import annotations

import numpy as np

from ..calendar import EXOG_SIZE  # noqa: F401  (re-exported: the channels :func:`calendar_covariates` returns)

_NS_PER_DAY = 86_400 * 10**9

#: What the model's ``u`` holds for each covariates choice of the training engine (written into saved configs).
ENCODINGS = {
    "tod_dow": f"u [batch, window, {EXOG_SIZE}]: channel 0 time of day as a fraction of the day in [0, 1) "
               "(00:00 -> 0, 23:55 -> 287/288); channels 1..7 one-hot weekday, Monday first "
               "(stgnn_diag.datasets.covariates.calendar_covariates)",
    "tod": "u [batch, window, 1]: time of day as a fraction of the day in [0, 1)",
    "none": "no covariates",
}


def time_of_day(timestamps: np.ndarray) -> np.ndarray:
    """Fraction of the day elapsed.

    Shapes:
        timestamps: ``[time]`` datetime64 -> ``[time]`` float64 in ``[0, 1)``.
    """
    ts = np.asarray(timestamps).astype("datetime64[ns]")
    ns = (ts - ts.astype("datetime64[D]")).astype("timedelta64[ns]").astype(np.int64)
    return ns / _NS_PER_DAY


def day_of_week(timestamps: np.ndarray) -> np.ndarray:
    """Day of week, Monday = 0 ... Sunday = 6 (1970-01-01 was a Thursday = 3).

    Shapes:
        timestamps: ``[time]`` datetime64 -> ``[time]`` int64.
    """
    days = np.asarray(timestamps).astype("datetime64[D]").astype(np.int64)
    return (days + 3) % 7


def calendar_covariates(timestamps: np.ndarray) -> np.ndarray:
    """Time of day and one-hot day of week.

    Shapes:
        timestamps: ``[time]`` -> ``[time, 8]`` float32 (``[tod, mon, tue, wed, thu, fri, sat, sun]``).
    """
    tod = time_of_day(timestamps)
    dow = day_of_week(timestamps)
    out = np.zeros((tod.shape[0], EXOG_SIZE), dtype=np.float32)
    out[:, 0] = tod
    out[np.arange(tod.shape[0]), 1 + dow] = 1.0
    return out


def tod_from_sin_cos(sin, cos):
    """Time of day as our fraction in ``[0, 1)`` from a (sin, cos) encoding, e.g. tsl's
    ``dataset.datetime_encoded('day')`` columns ``day_sin`` / ``day_cos`` (``sin(2 pi f)``, ``cos(2 pi f)``).
    Works on numpy arrays and torch tensors."""
    import math

    if hasattr(sin, "atan2"):  # torch
        return (sin.atan2(cos) / (2 * math.pi)) % 1.0
    return (np.arctan2(sin, cos) / (2 * np.pi)) % 1.0


def tod_from_zscore(z, mean: float, std: float):
    """Time of day as our fraction in ``[0, 1)`` from a z-scored one, e.g. channel 1 of PyG Temporal's
    ``METRLADatasetLoader`` features (standardised with that channel's mean and std over the whole file:
    pass those, ``node_values[..., 1].mean()`` / ``.std()``)."""
    return (z * std + mean) % 1.0
