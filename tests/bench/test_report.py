"""Rendering: markdown header and bold cells, CSV, PNG plots, the published rows only on request."""
import csv
import re
from pathlib import Path

import pytest

from stgnn_diag.bench.aggregation import aggregate, build_tables
from stgnn_diag.bench.paper_table import LABEL, paper_rows
from stgnn_diag.bench.report import table_markdown, write_report

from .conftest import BASELINE, LABEL as TINY_LABEL, MODELS
from .synthetic import MACHINE, make_result, write_results

PNG = b"\x89PNG\r\n\x1a\n"
PAPER_MD = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "PAPER.md"


def _rows_of(md: str):
    """``{model: [cells]}`` of the first markdown table in ``md`` (our table)."""
    out = {}
    for line in md.splitlines():
        m = re.match(r"\| `([^`]+)`", line)
        if m:
            out.setdefault(m.group(1), [c.strip() for c in line.strip("|").split("|")])
    return out


def _variants(folder: Path, budget="cpu-small", overrides=None):
    rs = []
    for arch in ("tas_attn", "tts_attn"):
        for k, v in enumerate(("noresid", "none", "mask", "dropout", "penalty")):
            for s in (0, 1, 2):
                rs.append(make_result(f"{arch}_{v}", s, {"mae@3": 3.0 + 0.1 * k + 0.01 * s,
                                                         "mae@12": 4.0 - 0.1 * k + (arch == "tts_attn") * 0.05},
                                      budget=budget, overrides=overrides))
    rs.append(make_result("historical_average", None, {"mae@3": 4.16, "mae@12": 4.16}, kind="baseline",
                          budget=budget, overrides=overrides))
    return write_results(folder, *rs)


def test_markdown_states_protocol_budget_seeds_machine_and_bolds_the_best(tmp_path):
    files = write_report(_variants(tmp_path / "res"))
    md = files.text
    assert "protocol `dcrnn`" in md and "horizon 12" in md and "budget `cpu-small`" in md
    assert "CPU budget" in md and "CPU-budget numbers: not comparable with full-budget" in md
    assert "**Seeds:** 0, 1, 2" in md and MACHINE["summary"] in md and "0123456789" in md
    rows = _rows_of(md)
    assert len(rows) == 11 and rows["historical_average"][1] == "1" and rows["tts_attn_none"][1] == "3"
    # MAE@3 (column 2): lowest mean is (a) noresid of both arrangements (tie); MAE@12 (column 4): tas penalty
    bold3 = {m for m, c in rows.items() if c[2].startswith("**")}
    bold12 = {m for m, c in rows.items() if c[4].startswith("**")}
    assert bold3 == {"tas_attn_noresid", "tts_attn_noresid"} and bold12 == {"tas_attn_penalty"}
    assert rows["tas_attn_noresid"][2] == "**3.010 ± 0.010**"  # mean of 3.00, 3.01, 3.02; sample std 0.01
    assert LABEL not in md  # published rows only on request


def test_full_budget_table_has_no_cpu_warning_and_budgets_get_separate_tables(tmp_path):
    res = _variants(tmp_path / "res")
    _variants(res, budget="paper")
    files = write_report(res)
    assert len(files.tables) == 2
    sections = files.text.split("### ")[1:]
    paper = next(s for s in sections if "budget `paper`" in s)
    cpu = next(s for s in sections if "budget `cpu-small`" in s)
    assert "full budget" in paper and "not comparable" not in paper
    assert "not comparable" in cpu


def test_csv_and_plots(tmp_path):
    files = write_report(_variants(tmp_path / "res"), tmp_path / "out")
    with open(files.csv) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 11 and {r["source"] for r in rows} == {"run here"}
    r = next(r for r in rows if r["model"] == "tts_attn_mask")
    assert float(r["mae@3_mean"]) == pytest.approx(3.21) and float(r["mae@3_std"]) == pytest.approx(0.01)
    assert r["n"] == "3" and r["seeds"] == "0;1;2" and r["cpu_budget"] == "True" and r["budget_label"] == "cpu-small"
    ha = next(r for r in rows if r["model"] == "historical_average")
    assert ha["mae@3_std"] == "" and ha["kind"] == "baseline"
    assert float(r["steps_mean"]) == 150 and ha["steps_mean"] == ""
    names = sorted(p.name for p in files.plots)
    assert names == ["dcrnn_h12_cpu-small_diag_variants_mae.png", "dcrnn_h12_cpu-small_metrics_vs_step.png"]
    for p in files.plots:
        data = p.read_bytes()
        assert data[:8] == PNG and len(data) > 5000


def test_paper_rows_only_when_asked_labelled_with_the_protocol_note(tmp_path):
    res = write_results(tmp_path / "res", make_result("tas_attn_none", 0, {}),
                        make_result("tas_attn_none", 0, {}, horizon=36))
    files = write_report(res, paper=True)
    h12, h36 = [s for s in files.text.split("### ")[1:]]
    assert LABEL in h12 and "Protocol difference" in h12 and "no message passing" in h12
    assert "DCRNN split" in h12 and "raw timeline split" in h12
    assert LABEL not in h36  # published numbers exist for horizon 12 only
    assert "3.165 ± 0.028" in h12 and h12.count(LABEL) >= 5
    with open(files.csv) as f:
        published = [r for r in csv.DictReader(f) if r["source"] == LABEL]
    assert len(published) == 5 and published[0]["mae@3_mean"] == "3.165"


def test_published_rows_match_paper_md():
    rows = {r["row"]: r["metrics"] for r in paper_rows()}
    assert list(rows) == ["(a) no residual", "(b) no regularization", "(c) diagonal mask", "(d) diagonal dropout",
                          "(e) diagonal penalty"]
    cols = ["mae@3", "mae@6", "mae@12", "rmse@3", "rmse@6", "rmse@12", "mape@3", "mape@6", "mape@12"]
    if PAPER_MD.is_file():  # the reference page next to the checkout: compare every number
        seen = 0
        for line in PAPER_MD.read_text().splitlines():
            name = line.split("|")[1].strip() if line.startswith("| (") and "±" in line else None
            if name in rows:
                cells = [c.strip() for c in line.strip().strip("|").split("|")[1:]]
                published = [tuple(float(x) for x in c.split("±")) for c in cells]
                assert published == [rows[name][c] for c in cols], name
                seen += 1
        assert seen == 5
    else:  # spot checks transcribed independently
        assert rows["(d) diagonal dropout"]["mae@12"] == (3.940, 0.011)
        assert rows["(a) no residual"]["mape@12"] == (13.406, 0.185)


def test_real_tiny_grid_report(tiny_grid):
    results, _ = tiny_grid
    report = results
    md = (report / "README.md").read_text()
    assert f"budget `{TINY_LABEL}`" in md and "max_windows=300" in md and "hidden_size=8" in md
    assert "CPU-budget numbers: not comparable" in md and "**Seeds:** 0, 1" in md
    rows = _rows_of(md)
    assert set(rows) == {*MODELS, BASELINE}
    [t] = build_tables(aggregate(json_results(results)))
    for m in rows:
        row = next(r for r in t.rows if r.model == m)
        assert rows[m][2].strip("*") == row.metrics["mae@3"].format()
    pngs = sorted((report / "plots").glob("*.png"))
    assert len(pngs) == 3 and all(p.read_bytes()[:8] == PNG for p in pngs)
    assert (report / "plots" / "time_to_accuracy.png") in pngs  # from the units' real run logs
    assert table_markdown(t).count("| `") == 3


def json_results(folder):
    from stgnn_diag.bench.aggregation import collect

    return collect(folder)


def test_reused_units_are_named_in_the_header(tmp_path):
    mine = make_result("tas_attn_mask", 0, {"mae@12": 4.4})
    copied = {**make_result("tas_attn_mask", 1, {"mae@12": 4.5}), "reused_from": "../table1/tas_attn_mask__x__s1"}
    base = {**make_result("historical_average", None, {}, kind="baseline"), "reused_from": "../table1/ha"}
    md = write_report(write_results(tmp_path / "res", mine, copied, base)).text
    assert "- **Reused units** (copied with `--reuse` from `../table1`: same settings, trained once): " \
           "`tas_attn_mask` 1 of 2; `historical_average` 1 of 1." in md
    assert "Reused" not in write_report(write_results(tmp_path / "plain", mine)).text


def test_training_times_of_gpu_and_cpu_seeds_are_never_averaged_together(tmp_path):
    # seed 2 trained on a GPU (its test pass on a CPU after a lease's deadline: the longest fit decides)
    cpu = [make_result("tts_attn_none", s, {}, train_time_s=900.0 + s) for s in (0, 1)]
    gpu = make_result("tts_attn_none", 2, {}, train_time_s=100.0)
    gpu["attempts"] = [{"attempt": "attempt0", "device": "cuda (NVIDIA H200)", "fit_s": 100.0},
                       {"attempt": "attempt1", "device": "cpu", "fit_s": 0.0}]
    [row] = aggregate([*cpu, gpu])
    assert row.train_time_s["CPU"].mean == pytest.approx(900.5) and row.train_time_s["CPU"].n == 2
    assert row.train_time_s["GPU"].mean == 100.0 and row.train_time_s["GPU"].n == 1
    [t] = build_tables([row])
    md = table_markdown(t)
    assert "| CPU 900.5 ×2 · GPU 100.0 ×1 |" in md and "averaged apart" in md
    # a table whose seeds all trained on one kind of machine keeps the plain number
    [t1] = build_tables(aggregate(cpu))
    assert "| 900.5 |" in table_markdown(t1) and "averaged apart" not in table_markdown(t1)
    write_results(tmp_path / "res", *cpu, gpu)
    write_report(tmp_path / "res")
    [line] = list(csv.DictReader(open(tmp_path / "res" / "tables.csv")))
    assert float(line["train_time_s_cpu_mean"]) == pytest.approx(900.5) and line["train_time_s_gpu_n"] == "1"


def test_an_equal_time_table_shows_the_steps_each_model_reached(tmp_path):
    timed = {"max_time": "15m"}
    seeds = [make_result("tts_attn_none", s, {}, budget="cpu-15min", overrides=timed, steps=n) for s, n in ((0, 900),
                                                                                                        (1, 940))]
    seeds[1]["schedule_steps"] = 950  # seed 1 ran out of time 10 steps before its fixed length
    res = write_results(tmp_path / "res", *seeds,
                        make_result("tsl:STIDModel", 0, {}, budget="cpu-15min", overrides=timed, steps=16250),
                        make_result("historical_average", None, {}, kind="baseline", budget="cpu-15min",
                                    overrides=timed))
    md = write_report(res).text
    assert "budget `cpu-15min+t15m`" in md and "| steps |" in md
    assert "15m of training per unit, batches of 32" in md and "4 epochs" not in md
    rows = _rows_of(md)
    assert "920 ± 28‡" in rows["tts_attn_none"] and "16,250" in rows["tsl:STIDModel"] and "‡: at least one" in md
    assert rows["historical_average"][-3] == "—"  # steps, train s, peak RSS: a baseline trains no step


def test_a_folder_trained_with_different_compute_says_so_under_its_time_to_accuracy_plot(tmp_path, monkeypatch):
    from stgnn_diag.bench.time_to_accuracy import Curve, plot_time_to_accuracy

    fast, slow = (make_result(m, 0, {}, budget="cpu-15min") for m in ("tts_attn_mask", "tsl:STIDModel"))
    for r, g in ((fast, 80.0), (slow, 40.0)):
        r["machine"] = {**r["machine"], "gemm_gflops": g}
        r["run_dir"] = "run"
    res = write_results(tmp_path / "res", fast, slow)
    for r in (fast, slow):
        (res / r["unit_id"] / "run").mkdir()
        (res / r["unit_id"] / "run" / "metrics.csv").write_text("train_seconds,val_mae_last\n60,4.0\n120,3.5\n")
    files = write_report(res)
    assert "Time-to-accuracy plot:" in files.text and "40 to 80 GFLOP/s (2.00x" in files.text
    assert any(p.name == "time_to_accuracy.png" for p in files.plots)
    fast["machine"]["gemm_gflops"] = 44.0  # the same machine: no caveat
    write_results(res, fast)
    assert "Time-to-accuracy plot:" not in write_report(res).text
    import matplotlib.axes

    label, original = [], matplotlib.axes.Axes.set_xlabel
    monkeypatch.setattr(matplotlib.axes.Axes, "set_xlabel",
                        lambda self, text, *a, **k: label.append(text) or original(self, text, *a, **k))
    plot_time_to_accuracy([Curve("a", 0, [1.0], [3.0], gemm_gflops=80.0),
                           Curve("b", 0, [1.0], [3.0], gemm_gflops=40.0)], tmp_path / "p.png")
    assert "40-80 GFLOP/s: not one machine" in label[-1] and (tmp_path / "p.png").is_file()
