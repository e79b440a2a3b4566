"""Masked metrics against hand computations with explicit loops."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from stgnn_diag.metrics import (default_steps, horizon_metrics, masked_mae, masked_mape, masked_mse,
                                masked_rmse)


def _loops(pred, true, step=None):
    """Independent reference: plain Python over every entry (step is 1-based, None = all)."""
    ae = se = ape = 0.0
    n = 0
    w, h, v = pred.shape
    for i in range(w):
        for k in range(h):
            if step is not None and k != step - 1:
                continue
            for j in range(v):
                y, p = float(true[i, k, j]), float(pred[i, k, j])
                if y == 0.0:
                    continue
                ae += abs(p - y)
                se += (p - y) ** 2
                ape += abs(p - y) / abs(y)
                n += 1
    return ae / n, math.sqrt(se / n), 100.0 * ape / n


@pytest.fixture
def tiny():
    rng = np.random.default_rng(0)
    true = rng.uniform(10, 70, size=(4, 12, 3)).round(2)
    true[rng.random(true.shape) < 0.25] = 0.0
    true[:, 2, 1] = 0.0  # a fully masked (step, node)
    pred = true + rng.normal(0, 3, size=true.shape)
    return pred, true


def test_hand_computed_2x2():
    pred = np.array([[1.0, 2.0], [3.0, 10.0]])
    true = np.array([[2.0, 0.0], [4.0, 5.0]])  # the 0 is missing
    assert masked_mae(pred, true) == pytest.approx((1 + 1 + 5) / 3)
    assert masked_mse(pred, true) == pytest.approx((1 + 1 + 25) / 3)
    assert masked_rmse(pred, true) == pytest.approx(math.sqrt(27 / 3))
    assert masked_mape(pred, true) == pytest.approx(100 * (1 / 2 + 1 / 4 + 5 / 5) / 3)


def test_pooled_against_loops(tiny):
    pred, true = tiny
    mae, rmse, mape = _loops(pred, true)
    assert masked_mae(pred, true) == pytest.approx(mae, rel=1e-12)
    assert masked_rmse(pred, true) == pytest.approx(rmse, rel=1e-12)
    assert masked_mape(pred, true) == pytest.approx(mape, rel=1e-12)
    assert isinstance(masked_mae(pred, true), float)


def test_torch_matches_numpy_and_is_differentiable(tiny):
    pred, true = tiny
    p = torch.tensor(pred, dtype=torch.float64, requires_grad=True)
    t = torch.tensor(true, dtype=torch.float64)
    for fn in (masked_mae, masked_rmse, masked_mape, masked_mse):
        out = fn(p, t)
        assert isinstance(out, torch.Tensor) and out.dim() == 0
        assert float(out.detach()) == pytest.approx(fn(pred, true), rel=1e-10)
    masked_mae(p, t).backward()
    assert p.grad is not None and torch.all(p.grad[t == 0] == 0)
    # float32 tensors and [..., 1] layouts work too
    assert float(masked_mae(p.detach().float()[..., None], t.float()[..., None])) == pytest.approx(
        masked_mae(pred, true), rel=1e-5)


def test_horizon_metrics_against_loops(tiny):
    pred, true = tiny
    out = horizon_metrics(pred, true)
    assert list(out) == ["mae@3", "rmse@3", "mape@3", "mae@6", "rmse@6", "mape@6",
                         "mae@12", "rmse@12", "mape@12", "mae@avg", "rmse@avg", "mape@avg"]
    for s in (3, 6, 12):
        mae, rmse, mape = _loops(pred, true, step=s)
        assert out[f"mae@{s}"] == pytest.approx(mae, rel=1e-12)
        assert out[f"rmse@{s}"] == pytest.approx(rmse, rel=1e-12)
        assert out[f"mape@{s}"] == pytest.approx(mape, rel=1e-12)
    mae, rmse, mape = _loops(pred, true)
    assert (out["mae@avg"], out["rmse@avg"], out["mape@avg"]) == pytest.approx((mae, rmse, mape), rel=1e-12)
    # pooled RMSE is not the mean of per-step RMSEs
    per_step = [_loops(pred, true, step=s)[1] for s in range(1, 13)]
    assert out["rmse@avg"] != pytest.approx(sum(per_step) / 12, rel=1e-9)
    # step 3 is the single 3rd step (index 2), not the average of steps 1..3
    assert out["mae@3"] == pytest.approx(masked_mae(pred[:, 2], true[:, 2]))


def test_horizon_metrics_layouts_and_torch(tiny):
    pred, true = tiny
    ref = horizon_metrics(pred, true)
    four = horizon_metrics(pred[..., None], true[..., None])
    mixed = horizon_metrics(torch.tensor(pred), true[..., None])
    for k in ref:
        assert four[k] == pytest.approx(ref[k]) and mixed[k] == pytest.approx(ref[k])


def test_default_steps_and_horizon_36():
    assert default_steps(12) == (3, 6, 12)
    assert default_steps(36) == (3, 6, 12, 24, 36)
    assert default_steps(24) == (3, 6, 12, 24)
    rng = np.random.default_rng(1)
    true = rng.uniform(1, 5, size=(2, 36, 2))
    out = horizon_metrics(true + 1.0, true)
    assert {f"mae@{s}" for s in (3, 6, 12, 24, 36)} <= set(out)
    assert out["mae@36"] == pytest.approx(1.0) and out["rmse@avg"] == pytest.approx(1.0)


def test_steps_beyond_horizon_raise(tiny):
    pred, true = tiny
    with pytest.raises(ValueError, match="outside 1..6"):
        horizon_metrics(pred[:, :6], true[:, :6], steps=(3, 6, 12))
    with pytest.raises(ValueError, match="outside"):
        horizon_metrics(pred, true, steps=(0,))
    with pytest.raises(ValueError, match="same shape"):
        horizon_metrics(pred, true[:, :6])
    with pytest.raises(ValueError, match="same shape"):
        masked_mae(pred, true[:1])


def test_all_masked_gives_nan():
    z = np.zeros((1, 3, 2))
    assert math.isnan(masked_mae(z + 1, z))
    assert math.isnan(horizon_metrics(z + 1, z, steps=(3,))["mae@3"])
    assert torch.isnan(masked_mae(torch.ones(2), torch.zeros(2)))
