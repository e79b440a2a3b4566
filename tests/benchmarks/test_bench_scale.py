"""benchmarks/bench_scale.py: model specs with overrides, the synthetic graphs, the fitted exponents."""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
spec = importlib.util.spec_from_file_location("bench_scale", BENCHMARKS / "bench_scale.py")
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
    rows = [{"model": "m", "window": 12, "batch": 4, "nodes": n, "status": "ok", "train_step_s": 1e-3 * n ** 1.5,
             "model_delta_mb": 0.1 * n} for n in (716, 2352, 8600)]
    # a spot check at another batch is not a point of the batch-4 fit
    rows.append({"model": "m", "window": 12, "batch": 1, "nodes": 2352, "status": "ok", "train_step_s": 50.0,
                 "model_delta_mb": 1.0})
    [fit] = [f for f in bench_scale.fit_table(rows, 716, 8600) if f["axis"] == "N" and f["points"] > 1]
    assert fit["time_exponent"] == pytest.approx(1.5, abs=1e-6) and fit["at"] == "T=12, B=4"
    assert fit["memory_exponent"] == pytest.approx(1.0, abs=1e-6)


def test_a_spec_builds_the_overridden_model():
    row = bench_scale.measure("tas_attn_none[adaptive=lowrank]", 30, 12, 2, 1, "cpu", 1, [3, 4])
    assert row["status"] == "ok" and row["train_step_s"] > 0


def test_a_second_run_keeps_what_the_folder_holds_and_refuses_another_machine(tmp_path, monkeypatch):
    calls = []

    def fake(name, n, window, batch, *rest):
        calls.append((name, n))
        return {"model": name, "nodes": n, "window": window, "batch": batch, "train_step_s": 1e-3 * n,
                "infer_batch_s": 1e-4 * n, "peak_rss_mb": 100.0 + n, "model_delta_mb": float(n), "status": "ok"}

    monkeypatch.setattr(bench_scale, "measure", fake)
    # the measurement in this process (the real one spawns a fresh process per configuration)
    monkeypatch.setattr(bench_scale, "run_in_fresh_process", lambda ctx, fn, args, timeout_s: (True, fn(*args)))
    base = ["--nodes", "100", "200", "--windows", "12", "--out", str(tmp_path), "--data-root", str(tmp_path)]
    assert bench_scale.main(["--models", "a"] + base) == 0
    assert bench_scale.main(["--models", "a", "b"] + base) == 0
    assert calls == [("a", 100), ("a", 200), ("b", 100), ("b", 200)]  # "a" was not measured again
    lines = (tmp_path / "scale.csv").read_text().splitlines()
    assert len(lines) == 5 and lines[1].startswith("a,100,12,4")
    assert bench_scale.main(["--models", "a", "--fresh"] + base) == 0 and calls[-1] == ("a", 200)
    assert len((tmp_path / "scale.csv").read_text().splitlines()) == 5  # "b" stays
    monkeypatch.setattr(bench_scale.platform, "machine", lambda: "another")
    with pytest.raises(SystemExit, match="measured on"):
        bench_scale.main(["--models", "a"] + base)


def test_the_published_tables_are_the_committed_rows():
    import json

    folder = Path(__file__).resolve().parents[2] / "models" / "results" / "scale-cpu"
    rows = json.loads((folder / "scale.json").read_text())["rows"]
    tables = bench_scale.markdown_tables(rows, bench_scale.fit_table(rows, 716, 8600), nodes=[207, 716, 2352, 8600])
    assert tables in (folder / "README.md").read_text()
    with open(folder / "scale.csv") as f:
        assert len(f.read().splitlines()) == len(rows) + 1


def test_a_measurement_in_its_own_process_reports_its_value_its_error_its_death_and_its_timeout(monkeypatch):
    import multiprocessing as mp
    import signal
    import time

    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the spawned child imports bench_scale for its entry point
    monkeypatch.setitem(sys.modules, "bench_scale", bench_scale)
    ctx = mp.get_context("spawn")
    run = bench_scale.run_in_fresh_process
    assert run(ctx, abs, (-3,), 60) == (True, 3)
    assert run(ctx, int, ("x",), 60) == (False, "failed: ValueError: invalid literal for int() with base 10: 'x'")
    assert run(ctx, signal.raise_signal, (signal.SIGKILL,), 60) == (
        False, "failed: the measuring process was killed (SIGKILL: out of memory, most likely)")
    assert run(ctx, time.sleep, (30,), 2) == (False, "timeout after 2 s")


def test_a_configuration_is_predicted_from_smaller_graphs_else_from_shorter_windows():
    ok = dict(model="m", status="ok")
    rows = [{**ok, "nodes": 207, "window": 48, "mem": 6000.0}, {**ok, "nodes": 207, "window": 96, "mem": 15000.0},
            {**ok, "nodes": 716, "window": 96, "mem": 30000.0}]
    # T = 288 at 207 nodes: no smaller graph there, so along T through (48, 6000) and (96, 15000): exponent log2(2.5)
    assert bench_scale.predict(rows, "mem", "m", 207, 288) == pytest.approx(15000 * 3 ** np.log2(2.5))
    # 2,352 nodes at T = 96: along N through 207 and 716 (exponent 0.56 there; never below linear)
    assert bench_scale.predict(rows, "mem", "m", 2352, 96) == pytest.approx(30000 * 2352 / 716)
    assert bench_scale.predict(rows, "mem", "other", 207, 12) is None
