"""The calendar encoding of the covariates ``u``, which :mod:`stgnn_diag.datasets.covariates` writes and the models'
calendar embeddings read (:func:`check_calendar`), in one place below both.

* channel 0: time of day, fraction of the day in ``[0, 1)`` (00:00 -> 0, 23:55 -> 287/288), as DCRNN;
* channels 1..7: day of week, one-hot, Monday = channel 1 ... Sunday = channel 7 (pandas' ``dayofweek`` order).

A model built with ``exog_size=1`` reads the time of day only; ``exog_size=8`` both.
"""
from __future__ import annotations

from torch import Tensor

from ._tensor_checks import cheap_to_check

__all__ = ["EXOG_SIZE", "CALENDAR_EXOG_SIZES", "CALENDAR_TOL", "check_calendar"]

#: Channels of the full encoding (time of day + one-hot weekday).
EXOG_SIZE = 8

#: ``exog_size`` values that carry the encoding: the time of day alone, or with the weekday.
CALENDAR_EXOG_SIZES = (1, EXOG_SIZE)

#: Where a user learns the expected calendar encoding and how to convert another one.
_CALENDAR_HELP = ("the time of day as a fraction of the day in [0, 1) in channel 0 and a one-hot weekday "
                  "(Monday first) in channels 1..7 (stgnn_diag.datasets.covariates.calendar_covariates). "
                  "From tsl's datetime_encoded('day') (sin, cos): stgnn_diag.datasets.covariates."
                  "tod_from_sin_cos; from PyG Temporal's z-scored time of day: tod_from_zscore")


#: Float error tolerated around [0, 1) (a slot is a fraction of 1/288 = 3.5e-3 wide).
CALENDAR_TOL = 1e-4


def check_calendar(u: Tensor, tod: bool, dow: bool) -> None:
    """Raise ``ValueError`` unless the channels of ``u [..., c]`` that the calendar embeddings read hold our
    encoding (checked where :func:`cheap_to_check`): another encoding would be looked up as wrong slots."""
    if u is None or not cheap_to_check(u):
        return
    if tod:
        t = u[..., 0]
        if bool((t < -CALENDAR_TOL).any()) or bool((t >= 1 + CALENDAR_TOL).any()):
            raise ValueError(f"u[..., 0] holds values in [{float(t.min()):.3g}, {float(t.max()):.3g}], not a "
                             f"time of day in [0, 1). The calendar embeddings expect {_CALENDAR_HELP}.")
    if dow:
        d = u[..., 1:8]
        if d.size(-1) != 7 or not bool(((d == 0) | (d == 1)).all()) or not bool((d.sum(-1) == 1).all()):
            raise ValueError(f"u[..., 1:8] is not a one-hot weekday. The calendar embeddings expect "
                             f"{_CALENDAR_HELP}.")
