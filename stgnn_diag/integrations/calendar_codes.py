"""Our calendar covariates as the integer codes some ecosystem models embed (GMAN, STID).

stgnn_diag's covariates (:mod:`stgnn_diag.datasets.covariates`) are floats: channel 0 = time of
day in ``[0, 1)``, channels 1..7 = one-hot day of week (Monday first); ``exog_size=1`` models get
the time of day only. GMAN wants ``(day_of_week, step_of_day)`` codes for the input *and* the
predicted steps; STID wants one embedding index per covariate.
"""
from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch import Tensor

from ..calendar import CALENDAR_EXOG_SIZES  # noqa: F401  (re-exported)


def calendar_codes(u: Tensor, steps_per_day: int = 288) -> Tuple[Tensor, Optional[Tensor]]:
    """``u [b, t, 1 | 8]`` (or ``[b, t, n, 1 | 8]``, node 0 is read) -> ``(step_of_day [b, t],
    day_of_week [b, t] or None)`` as long tensors (``round(tod * steps_per_day) % steps_per_day``)."""
    if u.dim() == 4:
        u = u[:, :, 0]
    if u.dim() != 3 or u.size(-1) not in CALENDAR_EXOG_SIZES:
        raise ValueError(f"calendar covariates are [batch, time, 1 or 8] (time of day [+ one-hot weekday]), "
                         f"got {tuple(u.shape)}")
    tod = torch.round(u[..., 0].double() * steps_per_day).long() % steps_per_day
    dow = u[..., 1:8].argmax(-1) if u.size(-1) == 8 else None
    return tod, dow


def extend_codes(tod: Tensor, dow: Optional[Tensor], horizon: int,
                 steps_per_day: int = 288) -> Tuple[Tensor, Optional[Tensor]]:
    """Continue the codes of a window for ``horizon`` more steps (regular sampling).

    Shapes:
        tod, dow ``[b, t]`` -> ``[b, t + horizon]`` each (dow None stays None).
    """
    steps = torch.arange(1, horizon + 1, device=tod.device)
    nxt = tod[:, -1:] + steps  # [b, horizon], may pass midnight
    tod_f = nxt % steps_per_day
    out_tod = torch.cat([tod, tod_f], dim=1)
    if dow is None:
        return out_tod, None
    out_dow = torch.cat([dow, (dow[:, -1:] + nxt // steps_per_day) % 7], dim=1)
    return out_tod, out_dow
