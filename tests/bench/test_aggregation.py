"""Aggregation: mean ± sample std over seeds against hand computations, best marking, honest grouping."""
import json
import math
import statistics

import pytest

from stgnn_diag.bench.aggregation import (AggregationError, aggregate, build_tables, collect, metric_columns,
                                        summarize)

from .conftest import BASELINE, LABEL, MODELS, MTAG, SEEDS
from .synthetic import make_result, write_results


def test_real_grid_mean_and_sample_std_match_a_hand_computation(tiny_grid):
    results, _ = tiny_grid
    tables = build_tables(aggregate(collect(results)))
    assert len(tables) == 1
    t = tables[0]
    assert (t.protocol, t.horizon, t.budget_label) == ("dcrnn", 12, LABEL) and t.seeds() == SEEDS
    assert [r.model for r in t.rows] == MODELS + [BASELINE]
    for row in t.rows:
        if row.kind == "baseline":
            files = [results / f"{BASELINE}__dcrnn__h12__{LABEL}" / "result.json"]
        else:
            files = [results / f"{row.model}__dcrnn__h12__{LABEL}{MTAG}__s{s}" / "result.json" for s in SEEDS]
        raw = [json.loads(f.read_text()) for f in files]
        assert row.n == len(raw) and row.seeds == [r["seed"] for r in raw]
        for c in metric_columns(12):
            vals = [r["metrics"][c] for r in raw]
            assert row.metrics[c].mean == pytest.approx(statistics.fmean(vals), rel=1e-12)
            if len(vals) > 1:  # sample std: for two values |a - b| / sqrt(2)
                assert row.metrics[c].std == pytest.approx(abs(vals[0] - vals[1]) / math.sqrt(2), rel=1e-9)
            else:
                assert row.metrics[c].std is None
    # best per column = the lowest mean, found by hand
    best = t.best()
    for c in t.columns:
        lo = min(r.metrics[c].mean for r in t.rows)
        assert best[c] == {r.model for r in t.rows if r.metrics[c].mean == lo}


def test_synthetic_three_seeds():
    vals = [2.9, 3.1, 3.6]
    res = [make_result("tts_attn_none", s, {"mae@12": v}) for s, v in enumerate(vals)]
    [row] = aggregate(res)
    st = row.metrics["mae@12"]
    mean = sum(vals) / 3
    std = math.sqrt(sum((v - mean) ** 2 for v in vals) / 2)  # ddof = 1
    assert (st.mean, st.n) == (pytest.approx(mean), 3) and st.std == pytest.approx(std)
    assert st.format() == f"{mean:.3f} ± {std:.3f}" == "3.200 ± 0.361"
    assert summarize([4.0]).format() == "4.000" and summarize([4.0]).std is None
    assert row.train_time_s["CPU"].mean == 10.0 and list(row.train_time_s) == ["CPU"] and row.parameters == 1000


def test_best_marking_with_ties_and_single_rows():
    rs = [make_result("tts_attn_none", 0, {"mae@3": 2.0, "mae@6": 3.0}),
          make_result("tts_attn_mask", 0, {"mae@3": 2.0, "mae@6": 2.5}),
          make_result("historical_average", None, {"mae@3": 4.0, "mae@6": 4.0}, kind="baseline")]
    [t] = build_tables(aggregate(rs))
    best = t.best()
    assert best["mae@3"] == {"tts_attn_none", "tts_attn_mask"} and best["mae@6"] == {"tts_attn_mask"}
    [single] = build_tables(aggregate(rs[:1]))
    assert all(v == set() for v in single.best().values())


def test_budgets_protocols_and_horizons_are_never_mixed():
    rs = [make_result("tts_attn_none", 0, {"mae@3": 1.0}),
          make_result("tts_attn_none", 1, {"mae@3": 2.0}, overrides={"max_epochs": 1}),
          make_result("tts_attn_none", 0, {"mae@3": 3.0}, budget="paper"),
          make_result("tts_attn_none", 0, {"mae@3": 4.0}, protocol="paper"),
          make_result("tts_attn_none", 0, {"mae@3": 5.0}, horizon=36)]
    tables = build_tables(aggregate(rs))
    assert len(tables) == 5 and all(len(t.rows) == 1 and t.rows[0].n == 1 for t in tables)
    keys = {(t.protocol, t.horizon, t.budget_label): t.rows[0].metrics["mae@3"].mean for t in tables}
    assert keys == {("dcrnn", 12, "cpu-small"): 1.0, ("dcrnn", 12, "cpu-small+e1"): 2.0, ("dcrnn", 12, "paper"): 3.0,
                    ("paper", 12, "cpu-small"): 4.0, ("dcrnn", 36, "cpu-small"): 5.0}
    by_label = {t.budget_label: t for t in tables if t.protocol == "dcrnn" and t.horizon == 12}
    assert by_label["paper"].full_budget and not by_label["paper"].cpu_budget
    assert by_label["cpu-small"].cpu_budget and not by_label["cpu-small+e1"].full_budget
    assert "mae@36" in next(t for t in tables if t.horizon == 36).columns


def test_one_entry_with_different_model_overrides_gives_rows_of_its_own():
    # `bench --set-for tas_attn_none hidden_size=48` beside the default units in one folder: never averaged
    # with them, never an error, each row named with its overrides
    base = [make_result("tts_attn_none", s, {"mae@3": 3.0}) for s in (0, 1)]
    wide = make_result("tts_attn_none", 0, {"mae@3": 2.0}, model_overrides={"hidden_size": 48, "heads": 2})
    rows = {r.model: r for r in aggregate([*base, wide])}
    assert set(rows) == {"tts_attn_none", 'tts_attn_none [heads=2, hidden_size=48]'}
    assert [r.model for r in aggregate(base)] == ["tts_attn_none"]  # one set of overrides: the plain name
    assert rows["tts_attn_none"].n == 2 and rows["tts_attn_none"].metrics["mae@3"].mean == 3.0
    assert rows['tts_attn_none [heads=2, hidden_size=48]'].metrics["mae@3"].mean == 2.0


def test_results_that_cannot_be_averaged_are_errors():
    a = make_result("tts_attn_none", 0, {}, model_overrides={"hidden_size": 8})
    b = make_result("tts_attn_none", 1, {}, model_overrides={"hidden_size": 8})
    b["settings"] = {**b["settings"], "window": 24}  # a result file whose recorded settings disagree
    with pytest.raises(AggregationError, match="different settings"):
        aggregate([a, b])
    with pytest.raises(AggregationError, match=r"seed\(s\) \[0\]"):
        aggregate([a, dict(a)])
    s0, s1 = make_result("tts_attn_none", 0, {}), make_result("tts_attn_none", 1, {})
    s0["budget_resolved"] = {**s0["budget_resolved"], "lr": 0.003}  # seed 0 trained before the preset changed
    with pytest.raises(AggregationError, match="different settings of budget 'cpu-small'"):
        aggregate([s0, s1])
    assert aggregate([{**s0, "budget_resolved": None}, s1])[0].n == 2  # a result without the record: not checked
    m0 = {**s1, "seed": 0, "model_config": {"name": "tts_attn_none", "model_kwargs": {"temporal_layers": 2}}}
    m1 = {**s1, "model_config": {"name": "tts_attn_none", "model_kwargs": {"temporal_layers": 1}}}
    with pytest.raises(AggregationError, match="different configurations of 'tts_attn_none'"):
        aggregate([m0, m1])  # the zoo entry's default changed between the seeds
    assert aggregate([{**m0, "model_config": None}, m1])[0].n == 2
    c = make_result("tts_attn_none", 0, {}, windows=100)
    d = make_result("tts_attn_mask", 0, {}, windows=300)
    with pytest.raises(AggregationError, match="different numbers of windows"):
        build_tables(aggregate([c, d]))
    e = make_result("tts_attn_none", 0, {})
    del e["metrics"]["mae@avg"]
    with pytest.raises(AggregationError, match="missing"):
        aggregate([e])


def test_collect_reads_only_result_files(tmp_path):
    write_results(tmp_path, make_result("tts_attn_none", 0, {}), make_result("tts_attn_none", 1, {}))
    (tmp_path / "other_unit").mkdir()
    (tmp_path / "other_unit" / "error.json").write_text("{}")
    assert [r["seed"] for r in collect(tmp_path)] == [0, 1]
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "result.json").write_text(json.dumps({"hello": 1}))
    with pytest.raises(ValueError, match="not a stgnn-diag bench result"):
        collect(tmp_path)
    with pytest.raises(FileNotFoundError):
        collect(tmp_path / "missing")


def test_resumed_units_name_every_commit_and_flag_only_unrecorded_training_time():
    first = {"attempt": "attempt0", "device": "cuda (NVIDIA H200)", "fit_s": 400.0,
             "environment": {"git_commit": "aaaaaaaaaaaa", "git_dirty": False}}
    second = {"attempt": "attempt1", "device": "cpu", "fit_s": 1.0,
              "environment": {"git_commit": "bbbbbbbbbbbb", "git_dirty": False}}
    complete = make_result("tas_attn_none", 0, {"mae@12": 4.0})
    complete.update(resumed=True, train_time_complete=True, attempts=[first, second], git_commit="bbbbbbbbbbbb")
    [row] = aggregate([complete])
    assert row.resumed and not row.train_time_partial
    assert row.git_commits == ["aaaaaaaaaa", "bbbbbbbbbb"] and row.git_dirty is False
    older = make_result("tas_attn_none", 1, {"mae@12": 4.1})
    older.update(resumed=True)  # written before attempts were recorded
    [row] = aggregate([complete, older])
    assert row.train_time_partial


# --- compute: equal-time results from machines of different speed are never averaged or tabled together ----------

def _timed(model, seed, gflops, **kw):
    r = make_result(model, seed, {}, budget="cpu-15min", overrides={"max_time": "15m"}, **kw)
    r["machine"] = {**r["machine"], "gemm_gflops": gflops}
    return r


def test_equal_time_seeds_trained_with_different_compute_are_not_averaged():
    with pytest.raises(AggregationError, match=r"different compute.*40 to 80 GFLOP/s \(2\.00x"):
        aggregate([_timed("tts_attn_mask", 0, 40.0), _timed("tts_attn_mask", 1, 80.0)])
    [row] = aggregate([_timed("tts_attn_mask", 0, 40.0), _timed("tts_attn_mask", 1, 44.0)])  # within 1.3x
    assert row.n == 2 and row.speeds == [40.0, 44.0] and row.timed
    # results recorded before the figure existed are not checked; fixed-step results are not limited by the clock
    assert aggregate([_timed("tts_attn_mask", 0, None), _timed("tts_attn_mask", 1, 80.0)])[0].n == 2
    fixed = [make_result("tts_attn_mask", s, {}, budget="cpu-15min") for s in (0, 1)]
    for r, g in zip(fixed, (40.0, 80.0)):
        r["machine"] = {**r["machine"], "gemm_gflops": g}
    [row] = aggregate(fixed)
    assert row.n == 2 and not row.timed


def test_an_equal_time_table_refuses_rows_from_machines_of_different_speed():
    rows = aggregate([_timed("tts_attn_mask", 0, 40.0), _timed("tsl:STIDModel", 0, 75.0)])
    with pytest.raises(AggregationError, match=r"equal-time rows \['tts_attn_mask', 'tsl:STIDModel'\].*1\.88x"):
        build_tables(rows)
    [t] = build_tables(aggregate([_timed("tts_attn_mask", 0, 40.0), _timed("tsl:STIDModel", 0, 41.0)]))
    assert len(t.rows) == 2
