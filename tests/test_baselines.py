"""Baselines against independent naive computations on the real METR-LA data."""
from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest

from stgnn_diag.baselines import BASELINES, baseline_predict
from stgnn_diag.datasets import make_splits
from stgnn_diag.metrics import horizon_metrics

pytestmark = pytest.mark.realdata

STRIDE = 25  # every 25th test window (274 of 6,850) for the loop-based references


@pytest.fixture(scope="module")
def thin(metr_la):
    return make_splits(metr_la, "dcrnn", stride=STRIDE)


def _naive_metrics(pred, true, steps=(3, 6, 12)):
    """Plain-Python masked metrics: step s = index s - 1; avg pooled over all entries."""
    def one(sel):
        ae = se = ape = 0.0
        n = 0
        for i in range(len(true)):
            for k in sel:
                for j in range(true.shape[2]):
                    y = float(true[i][k][j])
                    if y != 0.0:
                        e = float(pred[i][k][j]) - y
                        ae, se, ape, n = ae + abs(e), se + e * e, ape + abs(e) / y, n + 1
        return ae / n, math.sqrt(se / n), 100 * ape / n

    out = {}
    for s in steps:
        out[f"mae@{s}"], out[f"rmse@{s}"], out[f"mape@{s}"] = one([s - 1])
    out["mae@avg"], out["rmse@avg"], out["mape@avg"] = one(range(true.shape[1]))
    return out


def _targets(metr_la, starts):
    return np.stack([metr_la.speed[t + 12:t + 24] for t in starts])


def _check(pred_pkg, ref, targets):
    got = horizon_metrics(pred_pkg, targets)
    want = _naive_metrics(ref, targets)
    for k in want:
        assert got[k] == pytest.approx(want[k], rel=1e-6), k


def test_last_value(metr_la, thin):
    ref = []
    for t in thin.test.starts:
        last = metr_la.speed[t + 11]
        ref.append([last for _ in range(12)])
    ref = np.array(ref)
    pred = baseline_predict("last_value", thin)
    assert pred.shape == (len(thin.test), 12, 207) and pred.dtype == np.float32
    assert np.array_equal(pred, ref)
    _check(pred, ref, _targets(metr_la, thin.test.starts))


def _node_train_means(metr_la, stop):
    means = []
    for j in range(207):
        vals = [v for v in metr_la.speed64[:stop, j] if v != 0]
        means.append(sum(vals) / len(vals))
    return np.array(means)


def test_last_value_ffill(metr_la, thin):
    fallback = None
    ref = np.zeros((len(thin.test), 12, 207))
    for i, t in enumerate(thin.test.starts):
        for j in range(207):
            value = None
            for k in range(t + 11, t - 1, -1):  # walk back inside the window
                if metr_la.speed[k, j] != 0:
                    value = metr_la.speed[k, j]
                    break
            if value is None:
                if fallback is None:
                    fallback = _node_train_means(metr_la, thin.fit_stop)
                value = fallback[j]
            ref[i, :, j] = value
    pred = baseline_predict("last_value_ffill", thin)
    np.testing.assert_allclose(pred, ref, rtol=1e-6)
    _check(pred, ref, _targets(metr_la, thin.test.starts))


def _naive_historical_average(metr_la, stop):
    """{(weekday, slot): [nodes] mean of non-zero training readings} with python datetimes."""
    sums, counts = {}, {}
    for t in range(stop):
        when = dt.datetime.fromisoformat(str(metr_la.timestamps[t])[:19])
        key = (when.weekday(), (when.hour * 60 + when.minute) // 5)
        row = metr_la.speed64[t]
        sums[key] = sums.get(key, 0) + row
        counts[key] = counts.get(key, 0) + (row != 0)
    return sums, counts


def test_historical_average(metr_la, thin):
    assert thin.fit_stop == 23974 + 11  # inputs of the training windows cover [0, 23985)
    sums, counts = _naive_historical_average(metr_la, thin.fit_stop)
    ref = np.zeros((len(thin.test), 12, 207))
    n_fallback = 0
    for i, t in enumerate(thin.test.starts):
        for k in range(12):
            when = dt.datetime.fromisoformat(str(metr_la.timestamps[t + 12 + k])[:19])
            key = (when.weekday(), (when.hour * 60 + when.minute) // 5)
            c = counts[key]
            ok = c > 0
            n_fallback += int((~ok).sum())
            ref[i, k] = np.where(ok, sums[key] / np.maximum(c, 1), np.nan)
    pred = baseline_predict("historical_average", thin)
    finite = ~np.isnan(ref)
    np.testing.assert_allclose(pred[finite], ref[finite], rtol=1e-6)
    assert n_fallback < 0.01 * ref.size  # empty (weekday, slot, node) cells are rare
    if n_fallback:
        ref[~finite] = pred[~finite]  # fallback cells: checked by the unit test below
    _check(pred, ref, _targets(metr_la, thin.test.starts))



def test_historical_average_fallbacks():
    from stgnn_diag.baselines import fit_historical_average

    ts = np.datetime64("2012-03-05T00:00", "ns") + np.arange(288 * 7) * np.timedelta64(5, "m")  # a Monday
    speed = np.full((len(ts), 2), 50.0)
    speed[:, 1] = 0.0                     # node 1: never observed -> global mean
    speed[::288, 0] = 0.0                 # slot 0 of node 0 empty every day -> node mean
    speed[288 * 2 + 1, 0] = 80.0          # Wednesday slot 1 -> 80 exactly
    table = fit_historical_average(speed, ts)
    assert table.shape == (7, 288, 2)
    assert table[2, 1, 0] == 80.0 and table[3, 1, 0] == 50.0
    node0_mean = speed[speed[:, 0] != 0, 0].mean()
    assert table[0, 0, 0] == pytest.approx(node0_mean)
    assert np.allclose(table[..., 1], speed[speed != 0].mean())


def test_historical_median(metr_la, thin):
    """Against the median, by statistics.median, of the non-zero training readings of the same weekday within
    two slots (python datetimes), for every target step of a few test windows."""
    import statistics

    by_key = {}
    for t in range(thin.fit_stop):
        when = dt.datetime.fromisoformat(str(metr_la.timestamps[t])[:19])
        by_key.setdefault(when.weekday() * 288 + (when.hour * 60 + when.minute) // 5, []).append(t)
    pred = baseline_predict("historical_median", thin)
    checked = 0
    for i in range(0, len(thin.test), 40):
        for k in range(12):
            when = dt.datetime.fromisoformat(str(metr_la.timestamps[thin.test.starts[i] + 12 + k])[:19])
            key = when.weekday() * 288 + (when.hour * 60 + when.minute) // 5
            rows = [t for d in range(-2, 3) for t in by_key.get((key + d) % 2016, [])]
            for j in range(0, 207, 7):
                vals = [float(metr_la.speed64[t, j]) for t in rows if metr_la.speed64[t, j] != 0]
                if vals:
                    assert pred[i, k, j] == pytest.approx(statistics.median(vals), rel=1e-6)
                    checked += 1
    assert checked > 2000
    ha = baseline_predict("historical_average", thin)
    true = _targets(metr_la, thin.test.starts)
    nz = true != 0
    # the median is the constant of least absolute error: on the test windows it beats the mean by > 0.2 mph
    assert np.abs(pred - true)[nz].mean() < np.abs(ha - true)[nz].mean() - 0.2


def test_historical_median_pools_round_the_week_and_falls_back_to_the_mean():
    from stgnn_diag.baselines import fit_historical_average, fit_historical_median

    ts = np.datetime64("2012-03-05T00:00", "ns") + np.arange(288 * 14) * np.timedelta64(5, "m")  # two weeks from a Monday
    rng = np.random.default_rng(0)
    speed = rng.uniform(20, 70, size=(len(ts), 3))
    speed[:, 2] = 0.0                                   # node 2: never observed -> the mean table's global mean
    sunday_last = 288 * 6 + 287
    speed[[sunday_last, 2016 + sunday_last], 1] = [10.0, 12.0]
    speed[[0, 1, 2016, 2016 + 1], 1] = [60.0, 61.0, 62.0, 63.0]
    speed[[2, 3, 2016 + 2, 2016 + 3], 1] = 0.0          # Monday slots 2-3 of node 1: missing both weeks
    speed[[288 * 6 + 286, 288 * 6 + 285, 2016 + 288 * 6 + 286, 2016 + 288 * 6 + 285], 1] = 0.0
    table = fit_historical_median(speed, ts)
    assert table.shape == (7, 288, 3)
    # Monday slot 0 of node 1 pools Sunday's last two slots (10, 12 and two missing) and Monday's 0-2 (60-63 and missing)
    assert table[0, 0, 1] == pytest.approx(np.median([10.0, 12.0, 60.0, 61.0, 62.0, 63.0]))
    assert np.allclose(table[..., 2], fit_historical_average(speed, ts)[..., 2])
    plain = fit_historical_median(speed, ts, pool=0)
    np.testing.assert_allclose(plain[3, 100], np.median(speed[[288 * 3 + 100, 2016 + 288 * 3 + 100]], axis=0)[:2].tolist()
                               + [table[3, 100, 2]], rtol=1e-6)
    speed[:, 0] = 0.0
    speed[5, 0] = 50.0                                  # node 0: one reading: every cell but its own neighbourhood empty
    table = fit_historical_median(speed, ts)
    assert table[0, 5, 0] == 50.0 and table[0, 3, 0] == 50.0
    assert table[4, 100, 0] == pytest.approx(fit_historical_average(speed, ts)[4, 100, 0])
    with pytest.raises(ValueError, match="pool"):
        fit_historical_median(speed, ts, pool=-1)


def test_paper_protocol_historical_average_uses_training_slice(metr_la):
    s = make_splits(metr_la, "paper", max_windows=3)
    assert s.fit_stop == 23990
    pred = baseline_predict("historical_average", s, split="val")
    assert pred.shape == (3, 12, 207) and np.isfinite(pred).all()


def test_registry_and_unknown_name(thin):
    assert set(BASELINES) == {"last_value", "last_value_ffill", "historical_average", "historical_median"}
    with pytest.raises(ValueError, match="Did you mean 'last_value'"):
        baseline_predict("last_valeu", thin)
    with pytest.raises(ValueError, match="registered"):
        baseline_predict("arima", thin)
    with pytest.raises(ValueError, match="unknown split"):
        baseline_predict("last_value", thin, split="dev")
    assert baseline_predict("last_value", thin, split="val").shape == (len(thin.val), 12, 207)


def test_report_all_baselines_dcrnn_test(dcrnn_splits, capsys):
    """Full dcrnn test set, printed (literature: historical average MAE ~4.16 at every step)."""
    y = dcrnn_splits.test.targets()
    lines, results = [], {}
    for name in BASELINES:
        results[name] = m = horizon_metrics(baseline_predict(name, dcrnn_splits), y)
        lines.append(f"[{name}, dcrnn test] " + ", ".join(f"{k}={v:.4f}" for k, v in m.items()))
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    ha = results["historical_average"]
    assert 3.9 < ha["mae@avg"] < 4.5
    assert ha["mae@3"] == pytest.approx(ha["mae@12"], abs=0.05)  # HA does not depend on the step
    lv = results["last_value_ffill"]
    assert lv["mae@3"] < lv["mae@6"] < lv["mae@12"]
