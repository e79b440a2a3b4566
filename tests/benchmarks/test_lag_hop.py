"""benchmarks/lag_hop.py: one tiny unit end to end, resumed without training again."""
import csv
import importlib.util
from pathlib import Path

import pytest

spec = importlib.util.spec_from_file_location(
    "lag_hop_bench", Path(__file__).resolve().parents[2] / "benchmarks" / "lag_hop.py")
lag_hop = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lag_hop)


def test_a_unit_trains_scores_and_is_not_trained_again(tmp_path, monkeypatch):
    argv = ["--models", "tts_attn_none", "--hops", "1", "--lags", "2", "--nodes", "8", "--steps", "600",
            "--max-epochs", "1", "--hidden-size", "8", "--batch-size", "16", "--window", "6",
            "--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "out")]
    assert lag_hop.main(argv) == 0
    [row] = list(csv.DictReader(open(tmp_path / "out" / "results.csv")))
    assert (row["model"], row["hop"], row["lag"], row["nodes"]) == ("tts_attn_none", "1", "2", "8")
    assert float(row["noise_floor"]) == pytest.approx(4.0 * (2 / 3.141592653589793) ** 0.5)
    assert 0 <= float(row["hit_rate"]) <= 1 and int(row["reach_hops"]) >= 1
    assert (tmp_path / "out" / "lag_hop.png").stat().st_size > 0

    import stgnn_diag.training

    def no_training(cfg):
        raise AssertionError("a finished unit was trained again")

    monkeypatch.setattr(stgnn_diag.training, "train", no_training)
    (tmp_path / "out" / "results.csv").unlink()  # scored again from its run folder, not retrained
    assert lag_hop.main(argv) == 0
    assert len(list(csv.DictReader(open(tmp_path / "out" / "results.csv")))) == 1


def test_a_lag_outside_the_window_is_refused(tmp_path):
    with pytest.raises(SystemExit):
        lag_hop.main(["--lags", "12", "--window", "12", "--out", str(tmp_path)])


def test_the_published_table_is_its_results_csv():
    folder = Path(__file__).resolve().parents[2] / "models" / "results" / "lag-hop-cpu"
    rows = list(csv.DictReader(open(folder / "results.csv")))
    assert len(rows) == 48 and lag_hop.markdown_table(rows) in (folder / "README.md").read_text()


def test_windows_are_units_of_their_own(tmp_path, monkeypatch):
    """A unit at another window trains in a folder of its own and adds a row: nothing of the first is reused."""
    base = ["--models", "tts_attn_none", "--hops", "1", "--lags", "2", "--nodes", "8", "--steps", "600",
            "--max-epochs", "1", "--hidden-size", "8", "--batch-size", "16",
            "--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "out")]
    assert lag_hop.main(base + ["--window", "6"]) == 0
    assert lag_hop.main(base + ["--window", "8"]) == 0
    rows = list(csv.DictReader(open(tmp_path / "out" / "results.csv")))
    assert sorted(int(r["window"]) for r in rows) == [6, 8]
    assert len(list((tmp_path / "runs").iterdir())) == 2


def test_two_sources_and_a_weaker_signal_are_units_of_their_own(tmp_path):
    """``--lags 1+4`` trains one unit on a task with a source at each lag; ``--alpha`` gets its own folder and row."""
    base = ["--models", "tts_attn_none", "--hops", "1", "--nodes", "8", "--steps", "600", "--max-epochs", "1",
            "--hidden-size", "8", "--batch-size", "16", "--window", "6",
            "--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "out")]
    assert lag_hop.main(base + ["--lags", "1+4"]) == 0
    assert lag_hop.main(base + ["--lags", "1+4", "--alpha", "0.5"]) == 0
    rows = list(csv.DictReader(open(tmp_path / "out" / "results.csv")))
    assert sorted((r["lag"], float(r["alpha"])) for r in rows) == [("1+4", 0.5), ("1+4", 0.9)]
    for r in rows:
        hits = [float(h) for h in r["source_hit_rates"].split("/")]
        assert len(hits) == 2 and float(r["hit_rate"]) == pytest.approx(sum(hits) / 2, abs=1e-4)
        assert len(r["profile_top"].split()) == 2
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == [
        "tts_attn_none__h1-l1+4__s0__w6", "tts_attn_none__h1-l1+4__s0__w6__a0.5"]
    table = lag_hop.markdown_table(rows)
    assert table.count("| 1+4 |") == 2 and " / " in table
    with pytest.raises(SystemExit):
        lag_hop.main(base + ["--lags", "2+2"])
