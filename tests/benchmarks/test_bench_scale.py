"""benchmarks/bench_scale.py: model specs with overrides, the synthetic graphs, the fitted exponents."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

spec = importlib.util.spec_from_file_location(
    "bench_scale", Path(__file__).resolve().parents[2] / "benchmarks" / "bench_scale.py")
bench_scale = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_scale)


def test_a_model_spec_carries_its_overrides():
    assert bench_scale.parse_model_spec("tts_attn_none") == ("tts_attn_none", {})
    assert bench_scale.parse_model_spec("tas_attn_none[adaptive=lowrank,k=2]") == (
        "tas_attn_none", {"adaptive": "lowrank", "k": 2})
    with pytest.raises(ValueError, match="brackets"):
        bench_scale.parse_model_spec("tas_attn_none[adaptive=lowrank")


def test_the_synthetic_graph_has_the_drawn_out_degrees():
    degrees = [3, 5, 8]
    ei, ew = bench_scale.synthetic_graph(200, degrees)
    out = np.bincount(ei[0].numpy(), minlength=200)
    assert set(out.tolist()) <= {k + 1 for k in degrees}  # + the self-loop
    assert ei.max() < 200 and (ew > 0).all() and (ew <= 1).all()


def test_the_exponent_of_a_power_law_is_recovered():
    rows = [{"model": "m", "window": 12, "nodes": n, "status": "ok", "train_step_s": 1e-3 * n ** 1.5,
             "model_delta_mb": 0.1 * n} for n in (716, 2352, 8600)]
    [fit] = [f for f in bench_scale.fit_table(rows, 716, 8600) if f["axis"] == "N"]
    assert fit["time_exponent"] == pytest.approx(1.5, abs=1e-6)
    assert fit["memory_exponent"] == pytest.approx(1.0, abs=1e-6)


def test_a_spec_builds_the_overridden_model():
    row = bench_scale.measure("tas_attn_none[adaptive=lowrank]", 30, 12, 2, 1, "cpu", 1, [3, 4])
    assert row["status"] == "ok" and row["train_step_s"] > 0
