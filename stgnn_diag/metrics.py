"""Masked forecasting metrics (MAE, RMSE, MAPE) on de-normalised predictions.

Conventions (DCRNN / Graph WaveNet): entries whose *target* equals the null value (0 = missing
reading) are left out; every remaining entry has the same weight. Per-step metrics are single-step
(``@3`` = the 3rd predicted step, index 2, not an average of steps 1..3); ``@avg`` pools every
step and entry (``rmse@avg`` = sqrt of the pooled masked MSE, not the mean of per-step RMSEs).
Functions accept numpy arrays or torch tensors: numpy in -> Python float out; torch in -> 0-dim
tensor out (differentiable, usable as a loss). An empty mask gives NaN.
"""
from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple, Union

import numpy as np
import torch
from torch import Tensor

Array = Union[np.ndarray, Tensor]

#: Default evaluation steps by horizon (other horizons: the entries <= horizon, plus the horizon).
DEFAULT_STEPS = {12: (3, 6, 12), 36: (3, 6, 12, 24, 36)}


def _prepare(pred: Array, true: Array, null_val: float):
    if isinstance(pred, Tensor) or isinstance(true, Tensor):
        ref = pred if isinstance(pred, Tensor) else true
        pred = torch.as_tensor(pred, device=ref.device)
        true = torch.as_tensor(true, device=ref.device).to(pred.dtype if pred.is_floating_point() else torch.float32)
        if not pred.is_floating_point():
            pred = pred.float()
    else:
        pred = np.asarray(pred, dtype=np.float64)
        true = np.asarray(true, dtype=np.float64)
    if tuple(pred.shape) != tuple(true.shape):
        raise ValueError(f"pred {tuple(pred.shape)} and true {tuple(true.shape)} must have the same shape")
    if isinstance(true, Tensor):
        mask = ~torch.isnan(true) if np.isnan(null_val) else (true != null_val) & ~torch.isnan(true)
    else:
        mask = ~np.isnan(true) if np.isnan(null_val) else (true != null_val) & ~np.isnan(true)
    return pred, true, mask


def _masked_mean(values: Array, mask: Array):
    if isinstance(values, Tensor):
        m = mask.to(values.dtype)
        return torch.where(mask, values, torch.zeros_like(values)).sum() / m.sum()
    count = mask.sum()
    return float(np.where(mask, values, 0.0).sum() / count) if count else float("nan")


def masked_mae(pred: Array, true: Array, null_val: float = 0.0):
    """Mean absolute error over entries with ``true != null_val``.

    Shapes:
        pred, true: any equal shapes, e.g. ``[windows, horizon, nodes]`` or ``[..., nodes, 1]``.
    """
    pred, true, mask = _prepare(pred, true, null_val)
    err = (pred - true).abs() if isinstance(pred, Tensor) else np.abs(pred - true)
    return _masked_mean(err, mask)


def masked_mse(pred: Array, true: Array, null_val: float = 0.0):
    """Mean squared error over entries with ``true != null_val``. Shapes: as :func:`masked_mae`."""
    pred, true, mask = _prepare(pred, true, null_val)
    return _masked_mean((pred - true) ** 2, mask)


def masked_rmse(pred: Array, true: Array, null_val: float = 0.0):
    """Square root of the pooled masked MSE. Shapes: as :func:`masked_mae`."""
    mse = masked_mse(pred, true, null_val)
    return mse.sqrt() if isinstance(mse, Tensor) else float(np.sqrt(mse))


def masked_mape(pred: Array, true: Array, null_val: float = 0.0):
    """Mean absolute percentage error, in percent, over entries with ``true != null_val``.

    Shapes: as :func:`masked_mae`.
    """
    pred, true, mask = _prepare(pred, true, null_val)
    if isinstance(pred, Tensor):
        safe = torch.where(mask, true, torch.ones_like(true))
        ape = (pred - true).abs() / safe.abs()
    else:
        safe = np.where(mask, true, 1.0)
        ape = np.abs(pred - true) / np.abs(safe)
    return _masked_mean(ape, mask) * 100.0


def default_steps(horizon: int) -> Tuple[int, ...]:
    """Evaluation steps for a horizon: 12 -> (3, 6, 12); 36 -> (3, 6, 12, 24, 36)."""
    if horizon in DEFAULT_STEPS:
        return DEFAULT_STEPS[horizon]
    steps = tuple(s for s in DEFAULT_STEPS[36] if s < horizon)
    return steps + (horizon,)


def _to_numpy(x: Array) -> np.ndarray:
    if isinstance(x, Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def _squeeze_feature(x: Array) -> Array:
    return x[..., 0] if x.ndim == 4 and x.shape[-1] == 1 else x


def horizon_metrics(
    pred: Array,
    true: Array,
    steps: Optional[Sequence[int]] = None,
    null_val: float = 0.0,
) -> Dict[str, float]:
    """MAE / RMSE / MAPE at single steps and pooled over all steps.

    Args:
        pred: predictions in original units.
        true: targets in original units (``null_val`` = missing).
        steps: 1-based steps to report (step 3 = index 2); default from :func:`default_steps`.
        null_val: target value that marks a missing reading.

    Returns:
        ``{"mae@3": ..., "rmse@3": ..., "mape@3": ..., ..., "mae@avg", "rmse@avg", "mape@avg"}``
        as Python floats (MAPE in percent).

    Raises:
        ValueError: shapes differ, or a step is < 1 or beyond the horizon.

    Shapes:
        pred, true: ``[windows, horizon, nodes]`` or ``[windows, horizon, nodes, 1]``.
    """
    pred, true = _squeeze_feature(pred), _squeeze_feature(true)
    if tuple(pred.shape) != tuple(true.shape):
        raise ValueError(f"pred {tuple(pred.shape)} and true {tuple(true.shape)} must have the same shape")
    if pred.ndim != 3:
        raise ValueError(f"expected [windows, horizon, nodes(, 1)], got shape {tuple(pred.shape)}")
    pred, true = _to_numpy(pred), _to_numpy(true)
    horizon = pred.shape[1]
    steps = tuple(default_steps(horizon) if steps is None else steps)
    bad = [s for s in steps if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 1 <= s <= horizon]
    if bad:
        raise ValueError(f"steps {bad} outside 1..{horizon} (the horizon of the predictions)")
    return metrics_from_sums(horizon_sums(pred, true, null_val), steps)


def horizon_sums(pred: np.ndarray, true: np.ndarray, null_val: float = 0.0) -> np.ndarray:
    """Per-step sums of ``|e|``, ``e^2``, ``|e| / |y|`` and the count of kept entries, in float64: what
    :func:`horizon_metrics` reports, and what a split too large for memory adds up batch by batch
    (:func:`metrics_from_sums` of the total).

    Shapes:
        pred, true: ``[windows, horizon, nodes]`` numpy -> ``[4, horizon]``.
    """
    horizon = pred.shape[1]
    sums = np.zeros((4, horizon), dtype=np.float64)
    for h in range(horizon):
        p, t = pred[:, h].astype(np.float64), true[:, h].astype(np.float64)
        keep = ~np.isnan(t) if np.isnan(null_val) else (t != null_val) & ~np.isnan(t)
        e = np.abs(p[keep] - t[keep])
        sums[:, h] = (e.sum(), np.square(e).sum(), (e / np.abs(t[keep])).sum(), keep.sum())
    return sums


def metrics_from_sums(sums: np.ndarray, steps: Sequence[int]) -> Dict[str, float]:
    """The metrics of :func:`horizon_metrics` from :func:`horizon_sums` ``[4, horizon]`` (1-based ``steps``)."""

    def _report(ae, se, ape, n):
        if n == 0:
            return float("nan"), float("nan"), float("nan")
        return float(ae / n), float(np.sqrt(se / n)), float(ape / n * 100.0)

    out: Dict[str, float] = {}
    for s in steps:
        out[f"mae@{s}"], out[f"rmse@{s}"], out[f"mape@{s}"] = _report(*sums[:, s - 1])
    out["mae@avg"], out["rmse@avg"], out["mape@avg"] = _report(*sums.sum(axis=1))
    return out
