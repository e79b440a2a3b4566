"""Training engine on real METR-LA, small slices (each run well under a minute on 2 cores)."""
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

from stgnn_diag.training import (CheckpointError, NonFiniteLossError, RunDirError, TrainConfig, evaluate,
                                 load_checkpoint, train)
from tests.calendar import calendar_u

TINY = dict(model="tts_attn_penalty", max_windows=600, max_epochs=2, batch_size=16, limit_train_batches=4,
            limit_val_batches=2, model_overrides={"hidden_size": 8, "heads": 2, "temporal_layers": 1,
                                                  "spatial_layers": 1}, progress=False)


def tiny_cfg(tmp_path, root, name="run", **kw):
    return TrainConfig(out=str(tmp_path / name), data_root=str(root), **{**TINY, **kw})


def test_run_folder_contents_and_reload(tmp_path, metr_la_root):
    res = train(tiny_cfg(tmp_path, metr_la_root))
    out = tmp_path / "run"
    for f in ("config.json", "metrics.json", "metrics.csv", "loss_curve.png", "checkpoints/last.ckpt",
              "checkpoints/epoch000.ckpt", "checkpoints/epoch001.ckpt"):
        assert (out / f).is_file(), f
    saved = json.loads((out / "metrics.json").read_text())
    assert set(saved["metrics"]) >= {"mae@3", "mae@6", "mae@12", "mae@avg", "rmse@12", "mape@6"}
    assert saved["global_steps"] == 8 and saved["windows"] == 600
    # the checkpoint reloads and reproduces the metrics through `evaluate`
    again = evaluate(checkpoint=out / "checkpoints" / "last.ckpt", data_root=metr_la_root, max_windows=600,
                     progress=False)
    for k, v in res["metrics"].items():
        assert again["metrics"][k] == pytest.approx(v, rel=1e-6)


@pytest.mark.slow
def test_two_runs_with_one_seed_are_identical(tmp_path, metr_la_root):
    a = train(tiny_cfg(tmp_path, metr_la_root, "a"))
    b = train(tiny_cfg(tmp_path, metr_la_root, "b"))
    assert a["metrics"] == b["metrics"]
    wa = load_checkpoint(tmp_path / "a" / "checkpoints" / "last.ckpt").state_dict()
    wb = load_checkpoint(tmp_path / "b" / "checkpoints" / "last.ckpt").state_dict()
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    c = train(tiny_cfg(tmp_path, metr_la_root, "c", seed=1))
    assert c["metrics"] != a["metrics"]


def test_existing_run_is_never_overwritten_silently(tmp_path, metr_la_root):
    train(tiny_cfg(tmp_path, metr_la_root, max_epochs=1))
    before = (tmp_path / "run" / "metrics.json").read_bytes()
    with pytest.raises(RunDirError, match="--resume"):
        train(tiny_cfg(tmp_path, metr_la_root, max_epochs=1))
    assert (tmp_path / "run" / "metrics.json").read_bytes() == before
    with pytest.raises(RunDirError, match="Nothing to resume"):
        train(tiny_cfg(tmp_path, metr_la_root, "empty", resume=True))


def test_resume_with_another_model_is_refused_and_changes_nothing(tmp_path, metr_la_root):
    train(tiny_cfg(tmp_path, metr_la_root, max_epochs=1))
    before = {f: (tmp_path / "run" / f).read_bytes() for f in ("metrics.json", "config.json")}
    with pytest.raises(RunDirError, match="another run than the one"):
        train(tiny_cfg(tmp_path, metr_la_root, model="tas_attn_mask", resume=True,
                       model_overrides={"hidden_size": 8, "heads": 2, "n_layers": 1}))
    assert {f: (tmp_path / "run" / f).read_bytes() for f in before} == before
    assert not (tmp_path / "run" / ".lock").exists()


def test_resume_after_the_zoo_entry_changed_is_refused(tmp_path, metr_la_root):
    from stgnn_diag.zoo import get_entry

    train(tiny_cfg(tmp_path, metr_la_root, max_epochs=1))
    cfg_path = tmp_path / "run" / "config.json"
    saved = json.loads(cfg_path.read_text())
    kwargs = saved["model_config"]["model_kwargs"]  # every constructor argument, not only the overrides
    assert saved["model_config"]["name"] == TINY["model"] and kwargs["hidden_size"] == 8
    assert set(kwargs) >= set(get_entry(TINY["model"]).defaults) and "spatial_on" in kwargs
    kwargs["spatial_layers"] += 1  # what the entry built when the run started (its default changed since)
    cfg_path.write_text(json.dumps(saved))
    with pytest.raises(RunDirError, match=r"another 'tts_attn_penalty'.*spatial_layers: the run has"):
        train(tiny_cfg(tmp_path, metr_la_root, max_epochs=1, resume=True))
    assert not (tmp_path / "run" / ".lock").exists()


def test_bad_names_fail_before_any_work(tmp_path, metr_la_root):
    with pytest.raises(ValueError, match="Unknown model"):
        train(tiny_cfg(tmp_path, metr_la_root, model="tts_attn_penalti"))
    with pytest.raises(ValueError, match="Unknown budget"):
        train(tiny_cfg(tmp_path, metr_la_root, "b2", budget="gpu-huge"))
    with pytest.raises(ValueError, match="Unknown protocol"):
        train(tiny_cfg(tmp_path, metr_la_root, "b3", protocol="tsl"))
    assert not (tmp_path / "run").exists()


def test_checkpoint_mismatches_are_clear_errors(tmp_path, metr_la_root):
    train(tiny_cfg(tmp_path, metr_la_root, max_epochs=1))
    ckpt = tmp_path / "run" / "checkpoints" / "last.ckpt"
    with pytest.raises(CheckpointError, match="not 'tas_attn_none'"):
        evaluate("tas_attn_none", ckpt, data_root=metr_la_root, max_windows=50, progress=False)
    with pytest.raises(CheckpointError, match="horizon 36"):
        evaluate(checkpoint=ckpt, horizon=36, data_root=metr_la_root, max_windows=50, progress=False)
    with pytest.raises(CheckpointError, match="trained under protocol 'dcrnn'"):  # its own scaler, or refused
        evaluate(checkpoint=ckpt, protocol="paper", data_root=metr_la_root, max_windows=50, progress=False)
    # another run's checkpoint copied into this run's folder
    other = tmp_path / "other_run"
    train(tiny_cfg(tmp_path, metr_la_root, "other_run", model="tas_attn_mask", max_epochs=1,
                   model_overrides={"hidden_size": 8, "heads": 2, "n_layers": 1}))
    (tmp_path / "run" / "checkpoints" / "relabelled.ckpt").write_bytes((other / "checkpoints" / "last.ckpt").read_bytes())
    for load in (load_checkpoint, lambda p: __import__("stgnn_diag.sensitivity.checkpoint", fromlist=["x"]).build_model(
            checkpoint=p, n_nodes=207)):
        with pytest.raises(ValueError, match="not the checkpoint of the run"):
            load(tmp_path / "run" / "checkpoints" / "relabelled.ckpt")
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(ckpt.read_bytes()[:1000])
    with pytest.raises(CheckpointError, match="not a readable checkpoint"):
        load_checkpoint(bad)
    # weights of another shape
    state = torch.load(ckpt, weights_only=False)
    state["hyper_parameters"]["model_kwargs"]["hidden_size"] = 16
    other = tmp_path / "other.ckpt"
    torch.save(state, other)
    with pytest.raises(CheckpointError, match="do not fit"):
        load_checkpoint(other)
    # a diverged run's weights: refused instead of a table of nan
    state = torch.load(ckpt, weights_only=False)
    key = next(k for k in state["state_dict"] if k.startswith("model.") and state["state_dict"][k].is_floating_point())
    state["state_dict"][key] = torch.full_like(state["state_dict"][key], float("nan"))
    torch.save(state, tmp_path / "nan.ckpt")
    with pytest.raises(CheckpointError, match="NaN / Inf weights"):
        evaluate(checkpoint=tmp_path / "nan.ckpt", data_root=metr_la_root, max_windows=50, progress=False)


def test_lightning_load_from_checkpoint_rebuilds_the_module(tmp_path, metr_la_root):
    """``ForecastModule.load_from_checkpoint`` (Lightning's idiom) builds the model from the saved name and
    arguments and gives the same predictions as the library's loader; a file that would run code is refused."""
    from stgnn_diag.training import ForecastModule
    from stgnn_diag.training.safe_load import UnsafeCheckpointError
    from tests.training.test_safe_load import Payload

    train(tiny_cfg(tmp_path, metr_la_root, max_epochs=1))
    ckpt = tmp_path / "run" / "checkpoints" / "last.ckpt"
    a, b = ForecastModule.load_from_checkpoint(ckpt).eval(), load_checkpoint(ckpt)
    assert a.hparams["model_name"] == "tts_attn_penalty" and a.edge_index.shape == b.edge_index.shape
    x, u = torch.randn(3, 12, 207, 1), calendar_u(3, 12)
    with torch.no_grad():
        torch.testing.assert_close(a(x, u), b(x, u))
    assert a.scaler_std.item() == pytest.approx(b.scaler_std.item()) and a.scaler_std.item() > 1
    state = torch.load(ckpt, weights_only=False)
    state["evil"] = Payload(str(tmp_path / "ran"))
    torch.save(state, tmp_path / "evil.ckpt")
    with pytest.raises(UnsafeCheckpointError, match="exec"):
        ForecastModule.load_from_checkpoint(tmp_path / "evil.ckpt")
    assert not (tmp_path / "ran").exists()


def test_nan_loss_stops_with_a_clear_error(tmp_path, metr_la_root):
    from stgnn_diag.training.module import ForecastModule
    from stgnn_diag.training.budgets import get_budget

    module = ForecastModule("tts_attn_none", dict(hidden_size=8, heads=2, exog_size=8, n_nodes=3), 54.4, 19.5,
                            get_budget("cpu-small"), 1, edge_index=torch.tensor([[0, 1], [1, 2]]))
    with torch.no_grad():
        next(module.model.parameters()).fill_(float("nan"))
    batch = {"x": torch.randn(2, 12, 3, 1), "u": calendar_u(2, 12), "y": torch.rand(2, 12, 3, 1) + 1}
    with pytest.raises(NonFiniteLossError, match="lower --lr"):
        module.training_step(batch, 0)


def _train_argv(out, root):
    """The command line of the interrupted runs below (80 steps, a periodic checkpoint every 25)."""
    return [sys.executable, "-m", "stgnn_diag.cli", "train", "--model", "tts_attn_none", "--out", str(out),
            "--data-root", str(root), "--max-windows", "800", "--max-epochs", "2",
            "--batch-size", "8", "--limit-train-batches", "40", "--limit-val-batches", "2", "--hidden-size", "8",
            "--set", "heads=2", "--set", "temporal_layers=1", "--set", "spatial_layers=1",
            "--no-progress", "--no-baselines"]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, metr_la_root):
    """Test metrics of the run of :func:`_train_argv` never interrupted (what a resumed run must equal)."""
    out = tmp_path_factory.mktemp("straight") / "run"
    once = subprocess.run(_train_argv(out, metr_la_root), env={**os.environ, "PYTHONUNBUFFERED": "1"},
                          capture_output=True, text=True, timeout=600)
    assert once.returncode == 0, once.stderr[-2000:]
    return json.loads((out / "metrics.json").read_text())["metrics"]


def _train_until_checkpoint_then(sig, out, root, while_running=None):
    """Start a real training process, send it ``sig`` after its first mid-epoch checkpoint (after calling
    ``while_running()``, if given); its argv."""
    args = _train_argv(out, root)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ckpt = out / "checkpoints" / "last.ckpt"
    deadline = time.time() + 240
    while not ckpt.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    time.sleep(0.5)
    assert proc.poll() is None, "training finished before it could be interrupted"
    if while_running is not None:
        while_running()
    os.kill(proc.pid, sig)
    assert proc.wait() == (-signal.SIGKILL if sig == signal.SIGKILL else 130)  # 130: the CLI's "interrupted"
    return args, env


@pytest.mark.slow
def test_killed_mid_epoch_then_resumed(tmp_path, metr_la_root, uninterrupted):
    """SIGKILL a real training process after its first mid-epoch checkpoint, then --resume it: the steps since
    that checkpoint are trained again, on the same batches, so the result is the uninterrupted run's."""
    out = tmp_path / "killed"

    def second_run_on_the_live_folder():  # refused, and --overwrite deletes nothing of the live run
        with pytest.raises(RunDirError, match="in use by another training process"):
            train(tiny_cfg(tmp_path, metr_la_root, "killed", overwrite=True))
        assert (out / "config.json").is_file() and (out / "checkpoints" / "last.ckpt").is_file()

    args, env = _train_until_checkpoint_then(signal.SIGKILL, out, metr_la_root, second_run_on_the_live_folder)
    assert not (out / "metrics.json").exists()
    step_at_kill = torch.load(out / "checkpoints" / "last.ckpt", weights_only=False)["global_step"]
    assert 0 < step_at_kill < 80
    done = subprocess.run(args + ["--resume"], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads((out / "metrics.json").read_text())
    assert result["resumed"] is True and np.isfinite(result["metrics"]["mae@avg"])
    assert result["global_steps"] >= 80
    load_checkpoint(out / "checkpoints" / "last.ckpt")  # valid, reloadable
    assert not list((out / "checkpoints").glob("last-v*.ckpt"))
    from stgnn_diag.training.plots import read_epoch_log
    assert read_epoch_log(out / "metrics.csv")["epoch"] == [1, 2]  # both epochs, across the two attempts
    # the killed attempt left no record: the training time is the resumed attempt's alone, and says so
    first, second = result["attempts"]
    assert first == {"attempt": "attempt0", "recorded": False}
    assert second["attempt"] == "attempt1" and second["device"] == "cpu" and second["finished"] is True
    assert result["train_time_complete"] is False and result["train_time_s"] == second["fit_s"]
    assert result["metrics"] == pytest.approx(uninterrupted, rel=1e-5)


@pytest.mark.slow
def test_ctrl_c_then_resumed_adds_up_both_attempts(tmp_path, metr_la_root, uninterrupted):
    """SIGINT (Ctrl-C): Lightning shuts down, the attempt is recorded; the resumed run's time is the sum."""
    out = tmp_path / "interrupted"
    args, env = _train_until_checkpoint_then(signal.SIGINT, out, metr_la_root)
    first = json.loads((out / "logs" / "attempt0" / "attempt.json").read_text())
    assert first["finished"] is False and 0 < first["end_step"] < 80 and first["fit_s"] > 0
    # the step in progress finished and was saved: no step since the periodic checkpoint (every 25) is lost
    assert torch.load(out / "checkpoints" / "last.ckpt", weights_only=False)["global_step"] == first["end_step"]
    assert first["environment"]["torch"] == torch.__version__
    done = subprocess.run(args + ["--resume"], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads((out / "metrics.json").read_text())
    assert [a["finished"] for a in result["attempts"]] == [False, True]
    assert result["train_time_complete"] is True
    assert result["train_time_s"] == pytest.approx(sum(a["fit_s"] for a in result["attempts"]), abs=0.11)
    # the resumed epoch trained on the batches the uninterrupted run would have (the loader's place is in the
    # checkpoint): the same test metrics as one run that was never interrupted
    assert "dataloader is not resumable" not in done.stderr
    assert result["metrics"] == pytest.approx(uninterrupted, rel=1e-5)


def test_diagonal_schedule_is_applied_per_epoch_and_saved(tmp_path, metr_la_root):
    train(tiny_cfg(tmp_path, metr_la_root, diag_schedule="diag_penalty:0:-2:1"))
    module = load_checkpoint(tmp_path / "run" / "checkpoints" / "last.ckpt")
    from stgnn_diag.nn import attention_layers
    assert all(float(m.regularizer.penalty) == -2.0 for m in attention_layers(module.model))  # epoch 1 -> end value
    log = (tmp_path / "run" / "metrics.csv").read_text()
    assert "diag_penalty" in log
    with pytest.raises(ValueError, match="no TemporalAttention with diag='dropout'"):
        train(tiny_cfg(tmp_path, metr_la_root, "bad", diag_schedule="diag_p:0:0.3:2"))


@pytest.mark.slow
def test_small_end_to_end_run_beats_the_raw_last_value_baseline(tmp_path, metr_la_root):
    """A cpu-small-style run on a slice (train on the first 3000 windows, test on the first 1500)
    must beat the last-value baseline (last input, zeros included) on the same test windows."""
    cfg = tiny_cfg(tmp_path, metr_la_root, model="tts_attn_penalty", max_windows=3000, max_epochs=3,
                   batch_size=16, limit_train_batches=40, limit_val_batches=4, lr=5e-3,
                   model_overrides={"hidden_size": 16, "heads": 2, "temporal_layers": 2, "spatial_layers": 1})
    res = train(cfg)
    base = evaluate("last_value", data_root=metr_la_root, max_windows=3000, progress=False)
    assert res["windows"] == base["windows"]
    assert res["metrics"]["mae@avg"] < base["metrics"]["mae@avg"], (res["metrics"], base["metrics"])
    assert res["metrics"]["mae@12"] < base["metrics"]["mae@12"]


def test_merged_log_keeps_epochs_from_every_attempt(tmp_path):
    from stgnn_diag.training.logs import merge_attempt_logs

    for k, text in enumerate(["epoch,step,train_mae,val_mae\n0,3,,5.0\n0,3,6.0,\n1,7,,4.5\n",
                              "epoch,step,train_mae,val_mae,diag_p\n1,7,,4.4\n1,7,5.1,,0.1\n2,11,,4.0\n"]):
        (tmp_path / "logs" / f"attempt{k}").mkdir(parents=True)
        (tmp_path / "logs" / f"attempt{k}" / "metrics.csv").write_text(text)
    from stgnn_diag.training.plots import read_epoch_log
    log = read_epoch_log(merge_attempt_logs(tmp_path, tmp_path / "metrics.csv"))
    assert log["epoch"] == [1, 2, 3]
    assert log["val_mae"] == [5.0, 4.4, 4.0]  # epoch 1 (index 1) from the later attempt
    assert log["train_mae"][0] == 6.0 and log["train_mae"][1] == 5.1


def test_an_option_added_since_a_run_started_is_no_change_at_its_default():
    """model_kwargs_changes: an argument the record lacks counts as its constructor default, nothing else."""
    from stgnn_diag.training.run_dir import model_kwargs_changes

    defaults = {"k": 2, "level_skip": False}
    now = {"k": 1, "level_skip": False, "hidden_size": 32}
    assert model_kwargs_changes({"k": 1, "hidden_size": 32}, now, defaults) == {}
    assert model_kwargs_changes({"hidden_size": 32}, now, defaults) == {"k": (None, 1)}  # 1 is not k's default
    assert model_kwargs_changes({"k": 1}, now, defaults) == {"hidden_size": (None, 32)}  # no default known
    assert model_kwargs_changes({"k": 1, "hidden_size": 32}, {**now, "level_skip": True}, defaults) == {
        "level_skip": (None, True)}
