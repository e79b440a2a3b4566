"""The data set as an axis, end to end on a synthetic PEMS-BAY folder: ``bench --datasets``, ``train
--dataset``, ``evaluate`` (which refuses another data set than the checkpoint's) and the report's header."""
from __future__ import annotations

import argparse
import json

import pytest

from stgnn_diag.bench import staleness, unit_run
from stgnn_diag.cli import bench as cli
from stgnn_diag.bench.store import RESULT_JSON
from stgnn_diag.training import evaluate
from stgnn_diag.training.predictor import CheckpointError

from ..datasets.test_registry import write_bay
from .conftest import LABEL, MTAG, TINY_ARGS


@pytest.fixture(scope="module")
def bay_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("bay")
    write_bay(root / "pems_bay", n_steps=700, n_nodes=6)
    return root


def test_a_grid_on_another_data_set(bay_root, tmp_path, metr_la_root):
    p = argparse.ArgumentParser()
    cli.add_parser(p.add_subparsers())
    results = tmp_path / "results"
    args = p.parse_args(["bench", "--models", "tts_attn_none", "last_value", "--datasets", "pems_bay", *TINY_ARGS,
                         "--results", str(results), "--data-root", str(bay_root), "--no-progress"])
    assert args.func(args) == 0
    model_id = f"tts_attn_none__pems_bay__dcrnn__h12__{LABEL}{MTAG}__s0"
    assert sorted(p.parent.name for p in results.glob(f"*/{RESULT_JSON}")) == sorted(
        [f"last_value__pems_bay__dcrnn__h12__{LABEL}", model_id])
    res = json.loads((results / model_id / RESULT_JSON).read_text())
    assert res["dataset"] == "pems_bay" and res["settings"]["dataset"] == "pems_bay"
    report = (results / "README.md").read_text()
    assert "### PEMS-BAY · protocol `dcrnn`" in report and "METR-LA" not in report
    ckpt = results / model_id / "run" / "checkpoints" / "last.ckpt"
    again = evaluate(checkpoint=ckpt, data_root=bay_root, max_windows=300, progress=False)
    assert again["dataset"] == "pems_bay"
    assert again["metrics"]["mae@12"] == pytest.approx(res["metrics"]["mae@12"], rel=1e-5)
    with pytest.raises(CheckpointError, match="trained on data set 'pems_bay'"):
        evaluate(checkpoint=ckpt, dataset="metr_la", data_root=metr_la_root, progress=False)


def test_an_unknown_data_set_is_a_grid_error(tmp_path):
    from stgnn_diag.bench.grid import GridSpec
    from stgnn_diag.bench.unit import GridError

    with pytest.raises(GridError, match="Did you mean pems_bay"):
        GridSpec(models=["last_value"], datasets=["pemsbay"]).units()


def test_train_and_evaluate_take_the_data_set(bay_root, tmp_path, capsys):
    from stgnn_diag.cli import main

    out = tmp_path / "run"
    argv = ["train", "--model", "tts_attn_none", "--dataset", "pems_bay", "--data-root", str(bay_root),
            "--out", str(out), "--no-progress", *TINY_ARGS]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "test set of PEMS-BAY" in printed
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["dataset"] == "pems_bay" and json.loads((out / "config.json").read_text())["dataset"] == "pems_bay"
    assert main(["evaluate", "--checkpoint", str(out / "checkpoints" / "last.ckpt"), "--dataset", "metr_la",
                 "--no-progress"]) == 2
    assert "trained on data set 'pems_bay'" in capsys.readouterr().err
    assert main(["train", "--model", "tts_attn_none", "--dataset", "pems-bay", "--out", str(tmp_path / "x")]) == 2
    assert "Did you mean pems_bay" in capsys.readouterr().err


def test_records_written_before_the_data_set_axis_count_as_metr_la(tmp_path, monkeypatch):
    from stgnn_diag.bench import runner
    from stgnn_diag.bench.grid import GridSpec
    from stgnn_diag.datasets import recorded_dataset

    from .synthetic import make_result, write_results

    assert recorded_dataset({}) == recorded_dataset({"dataset": None}) == "metr_la"
    assert recorded_dataset({"dataset": "pems_bay"}) == "pems_bay"
    old = make_result("tts_attn_none", 0, {}, budget="cpu-small")
    del old["settings"]["dataset"]  # a result.json written before the data set axis existed
    write_results(tmp_path, old)
    unit = GridSpec(models=["tts_attn_none"]).units()[0]
    monkeypatch.setattr(unit_run, "_train", lambda cfg: pytest.fail("a finished METR-LA unit was trained again"))
    assert [o.status for o in runner.run_grid([unit], tmp_path, progress=False, log=lambda s: None).outcomes] == [
        "skipped"]
    bay = GridSpec(models=["tts_attn_none"], datasets=["pems_bay"]).units()[0]
    (tmp_path / bay.unit_id).mkdir()
    (tmp_path / bay.unit_id / RESULT_JSON).write_text(json.dumps(old))  # an old (METR-LA) result in the wrong folder
    with pytest.raises(runner.GridError, match="other settings"):
        runner.run_grid([bay], tmp_path, progress=False, log=lambda s: None)
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({
        "model": "tts_attn_none", "protocol": "dcrnn", "horizon": 12, "window": 12, "budget": "cpu-small",
        "seed": 0, "model_overrides": None}))  # config.json without a data set
    staleness.check_run_config(unit, run)
    with pytest.raises(runner.GridError):
        staleness.check_run_config(bay, run)
