"""The ``bench`` sub-command through argparse: dry run, report only, grid files, exit codes, errors."""
import argparse
import hashlib
import json

import pytest

from stgnn_diag.bench import unit_run
from stgnn_diag.cli import bench as cli
from stgnn_diag.bench.unit import GridError

from tests.bench.synthetic import make_result, write_results


def parse(*argv):
    p = argparse.ArgumentParser()
    cli.add_parser(p.add_subparsers())
    return p.parse_args(["bench", *argv])


def test_dry_run_lists_units_and_creates_nothing(tmp_path, capsys):
    results = tmp_path / "res"
    a = parse("--models", "tas_attn_*", "historical_average", "--seeds", "0", "1", "--horizons", "12", "36",
              "--results", str(results), "--dry-run")
    assert a.func(a) == 0
    out = capsys.readouterr().out
    lines = dict(line.split() for line in out.splitlines()[:-1])
    assert lines["tas_attn_penalty__dcrnn__h36__cpu-small__s1"] == "new"
    assert lines["historical_average__dcrnn__h12__cpu-small"] == "new"
    assert "22 units: 22 new" in out  # 2 horizons x (1 baseline + 2 seeds x 5 models)
    assert not results.exists()


def test_dry_run_reports_the_state_of_each_unit(tmp_path, capsys):
    write_results(tmp_path, make_result("tts_attn_none", 0, {}))
    partial = tmp_path / "tts_attn_none__dcrnn__h12__cpu-small__s1" / "run" / "checkpoints"
    partial.mkdir(parents=True)
    (partial / "last.ckpt").write_bytes(b"x")
    a = parse("--models", "tts_attn_none", "--seeds", "0", "1", "2", "--results", str(tmp_path), "--dry-run")
    assert a.func(a) == 0
    assert "3 units: 1 done, 1 partial, 1 new" in capsys.readouterr().out


def test_grid_file_and_command_line_values(tmp_path):
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"models": ["tts_attn_none"], "seeds": [0, 1, 2], "overrides": {"max_epochs": 2},
                                "model_overrides": {"*": {"hidden_size": 16}}}))
    a = parse("--grid", str(grid), "--seeds", "5", "--max-windows", "100", "--set", "heads=2",
              "--set-for", "tts_*", "spatial_layers=1")
    g = cli.grid_from_args(a)
    assert g.seeds == [5] and g.overrides == {"max_epochs": 2, "max_windows": 100}
    [u] = g.units()
    assert dict(u.model_overrides) == {"hidden_size": 16, "heads": 2, "spatial_layers": 1}
    tag = hashlib.sha1(json.dumps({"heads": 2, "hidden_size": 16, "spatial_layers": 1}, sort_keys=True).encode())
    assert u.unit_id == f"tts_attn_none__dcrnn__h12__cpu-small+e2-w100__m{tag.hexdigest()[:8]}__s5"


def test_partial_grid_file_completed_by_the_command_line(tmp_path):
    grid = tmp_path / "emb.json"  # only model settings, as models/results/grids/*.json
    grid.write_text(json.dumps({"model_overrides": {"tts_attn_*": {"node_embedding": True}}}))
    g = cli.grid_from_args(parse("--grid", str(grid), "--models", "tts_attn_none", "historical_average"))
    [u] = [u for u in g.units() if u.kind == "model"]
    assert dict(u.model_overrides) == {"node_embedding": True}
    with pytest.raises(GridError, match="Give --models"):
        cli.grid_from_args(parse("--grid", str(grid)))


@pytest.mark.parametrize("argv,match", [(["--models", "tas_attn_zz*"], "matches no zoo model"),
                                        (["--models", "tts_attn_none", "--budgets", "gpu"], "Unknown budget"),
                                        (["--models", "tts_attn_none", "--protocols", "tsl"], "Unknown protocol"),
                                        ([], "Give --models")])
def test_invalid_grids_are_clear_errors(tmp_path, argv, match):
    a = parse(*argv, "--results", str(tmp_path / "r"), "--dry-run")
    with pytest.raises(GridError, match=match):
        a.func(a)


def test_report_only(tmp_path, capsys):
    a = parse("--results", str(tmp_path / "missing"), "--report-only")
    with pytest.raises(FileNotFoundError, match="No results folder"):
        a.func(a)
    (tmp_path / "empty").mkdir()
    a = parse("--results", str(tmp_path / "empty"), "--report-only")
    with pytest.raises(ValueError, match="No result files"):
        a.func(a)
    res = write_results(tmp_path / "res", make_result("tts_attn_none", 0, {"mae@3": 2.5}),
                        make_result("tts_attn_none", 1, {"mae@3": 3.5}))
    a = parse("--results", str(res), "--report-only", "--report-dir", str(tmp_path / "rep"), "--paper-rows")
    assert a.func(a) == 0
    out = capsys.readouterr().out
    assert "3.000 ± 0.707" in out and "published (ESANN 2026" in out
    assert (tmp_path / "rep" / "README.md").is_file() and (tmp_path / "rep" / "results.csv").is_file()


def test_exit_status_for_failed_and_interrupted_grids(tmp_path, monkeypatch, capsys):
    def fail(cfg):
        raise RuntimeError("broken unit")

    monkeypatch.setattr(unit_run, "_train", fail)
    a = parse("--models", "tts_attn_none", "--results", str(tmp_path / "a"), "--no-progress")
    assert a.func(a) == 1
    assert "broken unit" in capsys.readouterr().err

    def interrupt(cfg):
        raise KeyboardInterrupt

    monkeypatch.setattr(unit_run, "_train", interrupt)
    a = parse("--models", "tts_attn_none", "--results", str(tmp_path / "b"), "--no-progress")
    assert a.func(a) == 130
    assert "run the same command again to resume" in capsys.readouterr().err

    def busy(cfg):
        from stgnn_diag.training.run_dir import RunBusyError

        raise RunBusyError(f"{cfg.out} is in use by another training process")

    monkeypatch.setattr(unit_run, "_train", busy)
    a = parse("--models", "tts_attn_none", "--results", str(tmp_path / "c"), "--no-progress")
    assert a.func(a) == 1  # not every unit is done
    err = capsys.readouterr().err
    assert "busy: tts_attn_none" in err and "failed:" not in err
    assert not list((tmp_path / "c").rglob("error.json"))
