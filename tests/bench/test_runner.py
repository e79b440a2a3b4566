"""The grid runner on real METR-LA: result files, skipping, resumption, interruption, failures, isolation."""
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stgnn_diag.bench import isolation, runner, staleness, store, unit_run
from stgnn_diag.cli.bench import grid_from_args
from stgnn_diag.bench.grid import GridSpec
from stgnn_diag.bench.unit import GridError, Unit
from stgnn_diag.bench.runner import run_grid
from stgnn_diag.bench.store import RESULT_JSON, RUN_DIR, unit_state
from stgnn_diag.training import evaluate, load_checkpoint

from .conftest import BASELINE, LABEL, MODELS, MTAG, SEEDS, TINY_MODEL, bench_args


def _units(args):
    return grid_from_args(args).units()


def _fail_if_called(cfg):
    raise AssertionError(f"training was called for {cfg.out}")


def test_every_unit_has_a_complete_result(tiny_grid, metr_la_root):
    results, args = tiny_grid
    units = _units(args)
    assert [u.unit_id for u in units] == [f"{BASELINE}__dcrnn__h12__{LABEL}"] + [
        f"{m}__dcrnn__h12__{LABEL}{MTAG}__s{s}" for s in SEEDS for m in MODELS]
    assert sorted(p.parent.name for p in results.glob(f"*/{RESULT_JSON}")) == sorted(u.unit_id for u in units)
    for u in units:
        res = json.loads((results / u.unit_id / RESULT_JSON).read_text())
        assert res["unit_id"] == u.unit_id and res["budget"] == "cpu-small" and res["budget_label"] == LABEL
        assert res["cpu_budget"] is True and res["full_budget"] is False
        assert res["windows"] == 300 and res["git_commit"] == res["environment"]["git_commit"]
        assert res["peak_memory"]["rss_mb"] > 50 and res["machine"]["summary"]
        if u.kind == "baseline":
            assert res["parameters"] == 0 and res["seed"] is None
            continue
        run = results / u.unit_id / RUN_DIR
        stored = json.loads((run / "metrics.json").read_text())
        assert res["metrics"] == stored["metrics"] and res["train_time_s"] == stored["train_time_s"]
        assert res["model_overrides"] == TINY_MODEL and res["global_steps"] == 2 and res["resumed"] is False
        # parameter count, checked on the checkpointed model
        module = load_checkpoint(run / "checkpoints" / "last.ckpt")
        assert res["parameters"] == sum(p.numel() for p in module.model.parameters())
        assert module.hparams["model_kwargs"]["hidden_size"] == 8
    # the recorded commit is a commit of this checkout: HEAD or (commits landing during the run) an ancestor
    assert len(res["git_commit"]) == 40
    ancestor = subprocess.run(["git", "merge-base", "--is-ancestor", res["git_commit"], "HEAD"],
                              capture_output=True, cwd=Path(__file__).parent)
    assert ancestor.returncode == 0, ancestor.stderr
    # the baseline's numbers are those of `evaluate` on the same 300 test windows
    base = json.loads((results / units[0].unit_id / RESULT_JSON).read_text())
    ref = evaluate(BASELINE, data_root=metr_la_root, max_windows=300, progress=False)
    assert base["metrics"] == pytest.approx(ref["metrics"], rel=1e-12)
    # seeds give different models
    m = MODELS[0]
    a, b = (json.loads((results / f"{m}__dcrnn__h12__{LABEL}{MTAG}__s{s}" / RESULT_JSON).read_text()) for s in SEEDS)
    assert a["metrics"] != b["metrics"]
    ignored = (results / ".gitignore").read_text().splitlines()
    assert "/*/" in ignored and "!/plots/" in ignored  # unit folders go to units.tar.gz, the plots stay
    assert not list(results.glob("*/run/.lock"))  # finished runs release their lock


def test_rerun_skips_finished_units(tiny_grid, monkeypatch):
    results, args = tiny_grid
    files = sorted(results.glob(f"*/{RESULT_JSON}"))
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in files}
    monkeypatch.setattr(unit_run, "_train", _fail_if_called)
    monkeypatch.setattr(runner, "run_unit", lambda *a, **k: pytest.fail("run_unit called for a finished unit"))
    out = run_grid(_units(args), results, progress=False)
    assert [o.status for o in out.outcomes] == ["skipped"] * 5 and not out.interrupted
    assert {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in files} == before
    assert all(o.result["unit_id"] == o.unit.unit_id for o in out.outcomes)


def test_unit_with_checkpoint_but_no_result_is_resumed(tiny_grid, tmp_path, metr_la_root):
    results, args = tiny_grid
    unit = next(u for u in _units(args) if u.kind == "model" and u.seed == 1)
    mine = tmp_path / "results"
    shutil.copytree(results / unit.unit_id, mine / unit.unit_id)
    original = json.loads((mine / unit.unit_id / RESULT_JSON).read_text())
    (mine / unit.unit_id / RESULT_JSON).unlink()
    (mine / unit.unit_id / RUN_DIR / "metrics.json").unlink()
    assert unit_state(mine, unit) == "partial"
    out = run_grid([unit], mine, data_root=metr_la_root, progress=False)
    assert [o.status for o in out.outcomes] == ["resumed"]
    res = json.loads((mine / unit.unit_id / RESULT_JSON).read_text())
    assert res["resumed"] is True and res["global_steps"] == original["global_steps"] == 2
    # resumed from the final checkpoint: the very same model, the very same test metrics
    assert res["metrics"] == original["metrics"]
    assert unit_state(mine, unit) == "done"


def test_finished_training_without_result_is_completed_without_training(tiny_grid, tmp_path, monkeypatch):
    results, args = tiny_grid
    unit = next(u for u in _units(args) if u.kind == "model")
    mine = tmp_path / "results"
    shutil.copytree(results / unit.unit_id, mine / unit.unit_id)
    original = json.loads((mine / unit.unit_id / RESULT_JSON).read_text())
    (mine / unit.unit_id / RESULT_JSON).unlink()
    assert unit_state(mine, unit) == "trained"
    monkeypatch.setattr(unit_run, "_train", _fail_if_called)
    out = run_grid([unit], mine, progress=False)
    assert [o.status for o in out.outcomes] == ["resumed"]
    assert out.outcomes[0].result["metrics"] == original["metrics"]
    assert out.outcomes[0].result["peak_memory"]["rss_mb"] is None  # nothing ran now: not measured


def test_other_settings_in_the_results_folder_are_an_error(tiny_grid, monkeypatch, tmp_path):
    """A folder whose stored settings differ from its unit's (other model overrides cannot share an id any more,
    since the id carries their hash: here a result.json edited by hand) is an error, never silently reused."""
    import shutil

    results, args = tiny_grid
    monkeypatch.setattr(unit_run, "_train", _fail_if_called)
    copy = tmp_path / "copy"
    shutil.copytree(results, copy)
    unit = _units(args)[1]
    f = copy / unit.unit_id / RESULT_JSON
    res = json.loads(f.read_text())
    res["settings"]["model_overrides"]["hidden_size"] = 16
    f.write_text(json.dumps(res))
    with pytest.raises(GridError, match="other settings"):
        run_grid(_units(args), copy, progress=False)
    other = GridSpec(models=MODELS, seeds=SEEDS, overrides=dict(_units(args)[0].overrides),
                     model_overrides={"*": {**TINY_MODEL, "hidden_size": 16}})
    assert not {u.unit_id for u in other.units() if u.kind == "model"} & {u.unit_id for u in _units(args)}


def _fake_metrics(cfg):
    return {"metrics": {f"{m}@{s}": 1.0 + cfg.seed for m in ("mae", "rmse", "mape") for s in (3, 6, 12, "avg")},
            "windows": 10, "parameters": 7, "train_time_s": 0.1, "epochs": 1, "global_steps": 1, "resumed": cfg.resume,
            "environment": {"git_commit": "abc"}, "config": {}}


def _fake_units(n=3):
    return [Unit("tts_attn_none", "model", "dcrnn", 12, 12, "cpu-small", s) for s in range(n)]


def test_ctrl_c_stops_the_grid_and_the_unit_resumes_next_time(tmp_path, monkeypatch):
    calls = []

    def interrupted_second(cfg):
        calls.append((cfg.seed, cfg.resume))
        if cfg.seed == 1:  # what Lightning does on Ctrl-C: checkpoints stay, SIGINT ignored, sys.exit(1)
            ckpt = Path(cfg.out) / "checkpoints" / "last.ckpt"
            ckpt.parent.mkdir(parents=True)
            ckpt.write_bytes(b"checkpoint")
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            raise SystemExit(1)
        return _fake_metrics(cfg)

    monkeypatch.setattr(unit_run, "_train", interrupted_second)
    units = _fake_units()
    out = run_grid(units, tmp_path, progress=False, log=lambda s: None)
    assert out.interrupted and [o.status for o in out.outcomes] == ["done", "interrupted", "pending"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert [unit_state(tmp_path, u) for u in units] == ["done", "partial", "new"]
    calls.clear()
    monkeypatch.setattr(unit_run, "_train", lambda cfg: calls.append((cfg.seed, cfg.resume)) or _fake_metrics(cfg))
    out = run_grid(units, tmp_path, progress=False, log=lambda s: None)
    assert [o.status for o in out.outcomes] == ["skipped", "resumed", "done"]
    assert calls == [(1, True), (2, False)]  # the interrupted unit resumes; the finished one is not rerun


def test_an_equal_time_unit_trains_by_the_clock_and_records_the_steps_it_reached(tmp_path, monkeypatch):
    seen = []

    def timed(cfg):
        seen.append((cfg.max_time, cfg.max_steps, cfg.max_epochs))
        return {**_fake_metrics(cfg), "global_steps": 431, "schedule_steps": 431, "max_steps_repeats": True}

    monkeypatch.setattr(unit_run, "_train", timed)
    unit = GridSpec(models=["tts_attn_none"], budgets=["cpu-15min"], overrides={"max_time": "15m"}).units()[0]
    assert unit.unit_id == "tts_attn_none__dcrnn__h12__cpu-15min+t15m__s0"
    run_grid([unit], tmp_path, progress=False, log=lambda s: None)
    assert seen == [("15m", None, None)]  # the clock, not a step count, bounds the training
    result = json.loads((tmp_path / unit.unit_id / RESULT_JSON).read_text())
    assert (result["global_steps"], result["schedule_steps"], result["max_steps_repeats"]) == (431, 431, True)
    assert result["overrides"] == {"max_time": "15m"} and result["budget_label"] == "cpu-15min+t15m"
    assert result["machine"]["gemm_gflops"] > 0  # the compute it trained with, measured in its own process


def test_a_result_trained_before_its_budget_preset_changed_is_not_this_unit(tmp_path, monkeypatch):
    monkeypatch.setattr(unit_run, "_train", _fake_metrics)
    unit = _fake_units(1)[0]
    run_grid([unit], tmp_path, progress=False, log=lambda s: None)
    path = tmp_path / unit.unit_id / RESULT_JSON
    assert run_grid([unit], tmp_path, progress=False, log=lambda s: None).outcomes[0].status == "skipped"
    old = json.loads(path.read_text())
    assert old["budget_resolved"]["lr"] == 0.008
    old["budget_resolved"]["lr"] = 0.003  # the preset's learning rate when this unit trained
    path.write_text(json.dumps(old))
    monkeypatch.setattr(unit_run, "_train", _fail_if_called)
    with pytest.raises(GridError, match="lr: 0.003 then, 0.008 now"):
        run_grid([unit], tmp_path, progress=False, log=lambda s: None)
    assert staleness.find_reusable(unit, [tmp_path]) is None  # nor copied into another grid as today's unit
    run = tmp_path / "partial" / RUN_DIR
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({**_train_config_of(unit), "budget_resolved": old["budget_resolved"]}))
    with pytest.raises(GridError, match="budget.lr"):
        staleness.check_run_config(unit, run)  # a half-trained run is not resumed under the new preset either


def test_a_result_trained_before_its_zoo_entry_changed_is_not_this_unit(tmp_path, monkeypatch):
    from stgnn_diag.zoo import resolved_config

    unit = _fake_units(1)[0]
    built = resolved_config(unit.model, n_nodes=207, horizon=12, window=12, exog_size=8, hidden_size=32)

    def recorded(cfg):  # what train() records: every constructor argument of the model it built
        return {**_fake_metrics(cfg), "config": {"model_config": built}}

    monkeypatch.setattr(unit_run, "_train", recorded)
    run_grid([unit], tmp_path, progress=False, log=lambda s: None)
    path = tmp_path / unit.unit_id / RESULT_JSON
    old = json.loads(path.read_text())
    assert old["model_config"]["model_kwargs"]["temporal_layers"] == built["model_kwargs"]["temporal_layers"]
    assert run_grid([unit], tmp_path, progress=False, log=lambda s: None).outcomes[0].status == "skipped"
    assert staleness.find_reusable(unit, [tmp_path]) == tmp_path / unit.unit_id
    # the entry built 5 temporal layers when this unit trained (its default changed since)
    old["model_config"]["model_kwargs"]["temporal_layers"] = 5
    path.write_text(json.dumps(old))
    monkeypatch.setattr(unit_run, "_train", _fail_if_called)
    now = built["model_kwargs"]["temporal_layers"]
    with pytest.raises(GridError, match=f"another 'tts_attn_none'.*temporal_layers: 5 then, {now} now"):
        run_grid([unit], tmp_path, progress=False, log=lambda s: None)
    assert staleness.find_reusable(unit, [tmp_path]) is None
    run = tmp_path / "partial" / RUN_DIR
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({**_train_config_of(unit), "model_config": old["model_config"]}))
    with pytest.raises(GridError, match="model.temporal_layers"):
        staleness.check_run_config(unit, run)
    # an option the zoo gained after the result (absent from its record) is no change at its constructor default
    old["model_config"]["model_kwargs"]["temporal_layers"] = now
    del old["model_config"]["model_kwargs"]["level_skip"]
    path.write_text(json.dumps(old))
    assert run_grid([unit], tmp_path, progress=False, log=lambda s: None).outcomes[0].status == "skipped"
    # ... but it is one when the unit asks for another value of it
    skip = dataclasses.replace(unit, model_overrides=(("level_skip", True),))
    assert staleness.model_changes(skip, old) == {"level_skip": (None, True)}
    # a result without the record (trained before results kept it) is not checked
    del old["model_config"]
    path.write_text(json.dumps(old))
    assert run_grid([unit], tmp_path, progress=False, log=lambda s: None).outcomes[0].status == "skipped"


def _train_config_of(unit):
    return {"model": unit.model, "dataset": unit.dataset, "protocol": unit.protocol, "horizon": unit.horizon,
            "window": unit.window, "budget": unit.budget, "seed": unit.seed, "model_overrides": None}


def test_an_isolated_unit_interrupted_alone_stops_the_grid_without_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "run_isolated", lambda *a, **k: 130)  # the worker's exit status after Ctrl-C
    out = run_grid(_fake_units(), tmp_path, isolate=True, progress=False, log=lambda s: None)
    assert out.interrupted and [o.status for o in out.outcomes] == ["interrupted", "pending", "pending"]
    assert not list(tmp_path.rglob("error.json"))


def test_a_failed_unit_is_recorded_and_the_grid_goes_on(tmp_path, monkeypatch):
    def broken_first(cfg):
        if cfg.seed == 0:
            raise RuntimeError("boom")
        return _fake_metrics(cfg)

    monkeypatch.setattr(unit_run, "_train", broken_first)
    units = _fake_units(2)
    out = run_grid(units, tmp_path, progress=False, log=lambda s: None)
    assert [o.status for o in out.outcomes] == ["failed", "done"] and "boom" in out.failed[0].error
    err = json.loads((tmp_path / units[0].unit_id / "error.json").read_text())
    assert "RuntimeError: boom" in err["error"] and "Traceback" in err["detail"]
    assert not (tmp_path / units[0].unit_id / RESULT_JSON).exists()
    out = run_grid(units, tmp_path, progress=False, log=lambda s: None, fail_fast=True)  # still broken: stops
    assert [o.status for o in out.outcomes] == ["failed", "pending"]
    monkeypatch.setattr(unit_run, "_train", _fake_metrics)
    out = run_grid(units, tmp_path, progress=False, log=lambda s: None)
    assert [o.status for o in out.outcomes] == ["done", "skipped"]
    assert not (tmp_path / units[0].unit_id / "error.json").exists()


@pytest.mark.slow
def test_isolated_units_run_in_their_own_process(tiny_grid, tmp_path, metr_la_root):
    results, args = tiny_grid
    base = _units(args)[0]
    assert base.kind == "baseline"
    bad = Unit("tts_attn_none", "model", "dcrnn", 12, 12, "cpu-small", 0, base.overrides,
               (("no_such_option", 1),))
    out = run_grid([base, bad], tmp_path, data_root=metr_la_root, isolate=True, progress=False, log=lambda s: None)
    assert [o.status for o in out.outcomes] == ["done", "failed"]
    res = json.loads((tmp_path / base.unit_id / RESULT_JSON).read_text())
    in_process = json.loads((results / base.unit_id / RESULT_JSON).read_text())
    assert res["isolated"] is True and res["peak_memory"]["rss_exact"] is True
    assert res["metrics"] == in_process["metrics"]
    err = json.loads((tmp_path / bad.unit_id / "error.json").read_text())
    assert "no_such_option" in err["error"] and not (tmp_path / bad.unit_id / RESULT_JSON).exists()


def test_machine_summary_names_every_device_a_unit_trained_on():
    from stgnn_diag.bench.store import with_attempts as _with_attempts

    cpu = {"summary": "x86_64, 2 CPU cores, CPU only", "gpus": []}
    assert _with_attempts(cpu, None) == cpu
    assert _with_attempts(cpu, [{"device": "cpu"}, {"device": "cpu"}]) == cpu
    mixed = _with_attempts(cpu, [{"device": "cuda (NVIDIA H200)"}, {"device": "cpu"}])
    assert mixed["summary"] == "x86_64, 2 CPU cores, CPU only; trained in attempts on cuda (NVIDIA H200) then cpu"
    assert cpu["summary"] == "x86_64, 2 CPU cores, CPU only"  # the input is not changed
    unrecorded = _with_attempts(cpu, [{"attempt": "attempt0", "recorded": False}, {"device": "cpu"}])
    assert unrecorded["summary"].endswith("trained in attempts on unrecorded then cpu")


def test_units_finished_in_another_folder_are_reused_not_rerun(tiny_grid, tmp_path, monkeypatch, capsys):
    results, args = tiny_grid
    units = _units(args)
    extra = Unit(MODELS[0], "model", "dcrnn", 12, 12, "cpu-small", 5, units[1].overrides, units[1].model_overrides)
    other = Unit(MODELS[0], "model", "dcrnn", 12, 12, "cpu-small", 0, units[1].overrides,
                 tuple(sorted({**dict(units[1].model_overrides), "hidden_size": 16}.items())))  # other settings
    mine = tmp_path / "mine"
    (mine / units[0].unit_id).mkdir(parents=True)  # a leftover empty folder of a new unit is replaced
    monkeypatch.setattr(runner, "run_unit", lambda u, *a, **k: {"unit_id": u.unit_id, "ran": True})
    plan = run_grid(units + [extra], mine, progress=False, dry_run=True, reuse=[tmp_path / "none", results])
    assert [o.state for o in plan.outcomes] == ["reusable"] * len(units) + ["new"]
    out = run_grid(units + [extra], mine, progress=False, reuse=[results])
    assert [o.status for o in out.outcomes] == ["reused"] * len(units) + ["done"]
    for u in units:
        copied = json.loads((mine / u.unit_id / RESULT_JSON).read_text())
        original = json.loads((results / u.unit_id / RESULT_JSON).read_text())
        assert (mine / copied.pop("reused_from")).resolve() == (results / u.unit_id).resolve()
        assert copied == original
        assert not (mine / u.unit_id / RUN_DIR / "checkpoints").exists()
        assert unit_state(mine, u) == "done"
    # other model settings: another id, so the stored unit is never taken for it
    assert other.unit_id != units[1].unit_id
    assert staleness.find_reusable(other, [results]) is None
    assert staleness.find_reusable(units[1], [results]) == results / units[1].unit_id


def test_a_36_step_horizon_unit_trains_and_reports_steps_24_and_36(tmp_path, metr_la_root):
    # issue 6's long-horizon experiment: 12 steps in, 36 out, metrics at 3, 6, 12, 24, 36 and pooled
    args = grid_from_args(bench_args(tmp_path / "r", metr_la_root, "--horizons", "36"))
    units = [u for u in args.units() if u.model in (MODELS[0], BASELINE) and u.seed in (None, 0)]
    out = run_grid(units, tmp_path / "r", data_root=metr_la_root, progress=False)
    assert [o.status for o in out.outcomes] == ["done", "done"]
    for o in out.outcomes:
        assert o.unit.unit_id.startswith(f"{o.unit.model}__dcrnn__h36__")
        assert set(o.result["metrics"]) == {f"{m}@{s}" for m in ("mae", "rmse", "mape")
                                            for s in (3, 6, 12, 24, 36, "avg")}
    module = load_checkpoint(tmp_path / "r" / units[1].unit_id / RUN_DIR / "checkpoints" / "last.ckpt")
    assert module.model.horizon == 36


def test_results_gitignore_is_brought_up_to_date_but_a_users_own_is_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(unit_run, "_train", _fake_metrics)
    old = tmp_path / "old"
    old.mkdir()
    (old / ".gitignore").write_text("# written by stgnn-diag bench: checkpoints are not results\n*/run/checkpoints/\n")
    run_grid(_fake_units(1), old, progress=False, log=lambda s: None)
    assert (old / ".gitignore").read_text() == store.RESULTS_GITIGNORE
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / ".gitignore").write_text("*.png\n")
    run_grid(_fake_units(1), mine, progress=False, log=lambda s: None)
    assert (mine / ".gitignore").read_text() == "*.png\n"


def test_a_sigterm_to_the_bench_stops_its_isolated_worker(tmp_path):
    # `kill <bench pid>` or a scheduler's time limit reaches the bench alone (not its process group): the
    # worker must not go on training, and holding its run folder's lock, after the bench has gone
    script = tmp_path / "bench.py"
    script.write_text(
        "import sys\n"
        "from stgnn_diag.bench.isolation import run_worker as _run_worker\n"
        "worker = 'import os, time; print(os.getpid(), flush=True); time.sleep(120)'\n"
        "sys.exit(_run_worker([sys.executable, '-c', worker], grace_s=10))\n")
    bench = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    worker_pid = int(bench.stdout.readline())  # the worker runs: the bench's handler was set before it started
    try:
        os.kill(worker_pid, 0)  # running
        bench.send_signal(signal.SIGTERM)
        assert bench.wait(timeout=30) == 128 + signal.SIGTERM
        with pytest.raises(ProcessLookupError):  # stopped and reaped by the bench
            os.kill(worker_pid, 0)
    finally:  # a failing run leaves no process behind
        if bench.poll() is None:
            for pid in (worker_pid, bench.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            bench.wait()


def test_a_sigterm_while_the_worker_starts_stops_it_once_started(monkeypatch):
    # the signal lands inside Popen (after the fork, before the process object is returned): it is held,
    # then acted on, so the new worker is stopped rather than orphaned
    workers = []

    def popen_then_sigterm(cmd):
        workers.append(real_popen(cmd))
        os.kill(os.getpid(), signal.SIGTERM)
        return workers[-1]

    real_popen = subprocess.Popen
    monkeypatch.setattr(isolation.subprocess, "Popen", popen_then_sigterm)
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as stopped:
        isolation.run_worker([sys.executable, "-c", "import time; time.sleep(120)"], grace_s=10)
    assert stopped.value.code == 128 + signal.SIGTERM
    assert workers[0].returncode == -signal.SIGTERM  # terminated and reaped
    assert signal.getsignal(signal.SIGTERM) is before  # the bench's own handler is back


@pytest.mark.parametrize("isolate", [False, True])
def test_a_unit_another_process_trains_is_left_alone_without_an_error(tiny_grid, tmp_path, metr_la_root, isolate):
    """A second bench reaching a live unit (its run lock held by a running process) reports it busy, exits 1,
    and writes nothing into its folder: a report made meanwhile must not list the live unit as failed."""
    from stgnn_diag.training.run_dir import RunLock

    _, args = tiny_grid
    unit = [u for u in _units(args) if u.kind == "model"][0]
    run = tmp_path / unit.unit_id / RUN_DIR
    with RunLock(run):  # held by this (live) process, as by another bench's worker
        before = sorted(p.relative_to(tmp_path) for p in (tmp_path / unit.unit_id).rglob("*"))
        out = run_grid([unit], tmp_path, data_root=metr_la_root, isolate=isolate, progress=False,
                       log=lambda s: None)
        after = sorted(p.relative_to(tmp_path) for p in (tmp_path / unit.unit_id).rglob("*"))
    assert [o.status for o in out.outcomes] == ["busy"] and not out.failed
    assert "in use by another training process" in out.busy[0].error
    assert "1 busy" in out.summary()
    assert after == before == [Path(unit.unit_id) / RUN_DIR, Path(unit.unit_id) / RUN_DIR / ".lock"]
    assert unit_state(tmp_path, unit) == "new"
