"""benchmarks/window_sink.py on a tiny bench grid over two aligned windows (real METR-LA, 1 epoch of 2 batches)."""
import argparse
import csv
import importlib.util
from pathlib import Path

import pytest

from stgnn_diag.cli import bench as bench_cli

spec = importlib.util.spec_from_file_location(
    "window_sink", Path(__file__).resolve().parents[2] / "benchmarks" / "window_sink.py")
window_sink = importlib.util.module_from_spec(spec)
spec.loader.exec_module(window_sink)


@pytest.mark.slow
def test_the_sink_and_the_far_lag_share_of_each_unit(tmp_path, metr_la_root):
    p = argparse.ArgumentParser()
    bench_cli.add_parser(p.add_subparsers())
    args = p.parse_args(["bench", "--models", "tts_attn_none", "--window", "12", "16", "--max-epochs", "1",
                         "--limit-train-batches", "2", "--limit-val-batches", "2", "--batch-size", "8",
                         "--max-windows", "64", "--set", "hidden_size=8", "--set", "heads=2",
                         "--results", str(tmp_path / "res"), "--data-root", str(metr_la_root), "--no-progress",
                         "--no-report"])
    assert args.func(args) == 0
    assert window_sink.main(["--results", str(tmp_path / "res"), "--out", str(tmp_path / "out"), "--windows", "4",
                             "--jacobian-windows", "1"]) == 0
    rows = list(csv.DictReader(open(tmp_path / "out" / "window_sink.csv")))
    assert sorted({int(r["window"]) for r in rows}) == [12, 16]
    assert all(r["align_window"] == "16" for r in rows)
    for r in rows:
        assert float(r["diag_x_tokens"]) > 0 and int(r["tokens"]) == int(r["window"])
        share = float(r["far_lag_share"])
        assert share == 0.0 if r["window"] == "12" else 0.0 < share < 1.0  # lags 12 .. 15 exist only at T = 16
        profile = [float(v) for v in r["lag_profile"].split()]
        assert len(profile) == int(r["window"]) and sum(profile) == pytest.approx(1.0, abs=1e-3)
        assert sum(profile[12:]) == pytest.approx(share, abs=1e-3)  # the far-lag share is the profile's tail
    assert (tmp_path / "out" / "window_sink.png").stat().st_size > 0
    (tmp_path / "out" / "window_sink.png").unlink()
    assert window_sink.main(["--plot-only", "--out", str(tmp_path / "out")]) == 0  # from the CSV alone
    assert (tmp_path / "out" / "window_sink.png").stat().st_size > 0
