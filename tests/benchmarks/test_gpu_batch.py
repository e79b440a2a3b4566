"""benchmarks/gpu_batch.py: the shortened schedule it picks, the queue it skips, and what it packs."""
import importlib.util
import os
import sys
import tarfile
import time
from pathlib import Path

import pytest
import torch

_spec = importlib.util.spec_from_file_location(
    "gpu_batch", Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_batch.py")
gpu_batch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_batch)


def test_paper_epochs_is_the_largest_menu_entry_that_fits():
    steps = gpu_batch.PAPER_STEPS_PER_EPOCH + gpu_batch.PAPER_VAL_STEPS / 3
    epoch_s = steps * 0.01 * 2.0  # 10 ms a step, twice slower in the pool
    assert gpu_batch.paper_epochs(0.01, 150 * epoch_s, 2.0) == 150
    assert gpu_batch.paper_epochs(0.01, 149 * epoch_s, 2.0) == 100
    assert gpu_batch.paper_epochs(0.01, 24 * epoch_s, 2.0) == 20
    assert gpu_batch.paper_epochs(0.01, 4 * epoch_s, 2.0) == 0


def _touch(path: Path, text: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_queue_skips_done_units_and_pack_keeps_only_resumable_checkpoints(tmp_path, monkeypatch):
    monkeypatch.setattr(gpu_batch, "REPO", tmp_path)
    t1 = "models/results/table1-cpu"
    done = tmp_path / t1 / "tas_attn_none__dcrnn__h12__cpu-15min__s0"
    _touch(done / "result.json")
    queue = gpu_batch.queue_units()
    assert (t1, "tas_attn_none", 12, 0) not in queue and (t1, "tas_attn_mask", 12, 0) in queue
    assert len(queue) == 10 * 3 + 11 + 10 * 2 - 1 and queue[0] == (t1, "tas_attn_noresid", 12, 0)
    weights = [u for u in queue if u[0] == "models/results/templates-cpu"]
    assert [m for _, m, _, _ in weights] == [v.replace("_attn_", "_template_") for v in gpu_batch.VARIANTS] + [
        "paper_tas"] and {(h, s) for _, _, h, s in weights} == {(12, 0)}
    # paper_tas runs with its own lr: its unit folder carries it, and a finished one leaves the queue
    cmd = gpu_batch.bench_cmd(*weights[-1], "cpu-15min")
    assert cmd[cmd.index("--lr") + 1] == "0.001" and "--lr" not in gpu_batch.bench_cmd(*weights[0], "cpu-15min")
    paper_done = _touch(tmp_path / "models/results/templates-cpu/paper_tas__dcrnn__h12__cpu-15min+lr0.001__s0/result.json")
    assert ("models/results/templates-cpu", "paper_tas", 12, 0) not in gpu_batch.queue_units()
    paper_done.unlink()
    assert queue.index(weights[-1]) < queue.index(("models/results/horizon36-cpu", "tas_attn_noresid", 36, 0))

    old = _touch(tmp_path / t1 / "old_unit" / "result.json")
    since = time.time() - 1
    os.utime(old, (since - 100, since - 100))  # written before the lease: not packed
    _touch(done / "result.json", "new")
    ckpt = done / "run" / "checkpoints" / "last.ckpt"                # finished unit: weights only, apart
    ckpt.parent.mkdir(parents=True)
    torch.save({"state_dict": {"w": torch.ones(3)}, "hyper_parameters": {"model_name": "tas_attn_none"},
                "optimizer_states": [{"state": torch.zeros(1000)}], "loops": {}}, ckpt)
    partial = tmp_path / t1 / "tts_attn_none__dcrnn__h12__cpu-15min__s0"
    _touch(partial / "run" / "config.json")
    _touch(partial / "run" / "checkpoints" / "last.ckpt")             # unfinished: kept, to resume
    _touch(partial / "run" / "checkpoints" / "epoch000.ckpt")         # per-epoch copies: dropped
    paper = tmp_path / gpu_batch.PAPER_RESULTS / "tas_attn_none__dcrnn__h12__paper+e20__s0"
    assert gpu_batch.paper_unit("tas_attn_none", 0, {"max_epochs": 20}) == paper  # the folder bench makes
    _touch(paper / "result.json")
    _touch(paper / "run" / "checkpoints" / "last.ckpt")               # paper-schedule weights: kept
    out = tmp_path / "out"
    out.mkdir()
    gpu_batch.pack(out, since, {paper.name})
    with tarfile.open(out / "results.tar.gz") as tar:
        names = set(tar.getnames())
    rel = lambda p: str(p.relative_to(tmp_path))  # noqa: E731
    assert names == {rel(done / "result.json"), rel(partial / "run" / "config.json"),
                     rel(partial / "run" / "checkpoints" / "last.ckpt"), rel(paper / "result.json"),
                     rel(paper / "run" / "checkpoints" / "last.ckpt")}
    with tarfile.open(out / "weights.tar.gz") as tar:
        assert tar.getnames() == [rel(ckpt)]
        tar.extractall(tmp_path / "back", filter="data")
    back = torch.load(tmp_path / "back" / rel(ckpt), weights_only=False)
    assert set(back) == {"state_dict", "hyper_parameters"} and torch.equal(back["state_dict"]["w"], torch.ones(3))


def test_dry_run_lists_the_queue(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(gpu_batch, "REPO", tmp_path)
    assert gpu_batch.main(["--out", str(tmp_path / "out"), "--deadline-s", "1", "--dry-run"]) == 0
    assert capsys.readouterr().out.startswith("61 cpu-15min units to run:")


def test_timed_phases_see_the_repository_on_the_python_path(tmp_path):
    # a benchmark script run from an un-installed copy of the tree must import stgnn_diag from the repository
    log = tmp_path / "phase.log"
    rec = gpu_batch._timed([sys.executable, "-c", "import os; print(os.environ['PYTHONPATH'])"], 60, log)
    assert rec["returncode"] == 0
    assert str(gpu_batch.REPO) in log.read_text().strip().split(os.pathsep)


class _DoneProcess:
    returncode = 0

    def poll(self):
        return 0


def test_paper_full_resumes_the_units_instead_of_shortening_them(tmp_path, monkeypatch, capsys):
    # the 150 epochs span several leases: each run trains the full-budget units from their last checkpoint
    monkeypatch.setattr(gpu_batch, "REPO", tmp_path)
    partial = gpu_batch.paper_unit("tas_attn_none")
    assert partial == tmp_path / gpu_batch.PAPER_RESULTS / "tas_attn_none__dcrnn__h12__paper__s0"
    (partial / "run" / "checkpoints").mkdir(parents=True)
    torch.save({"global_step": 5000, "epoch": 26, "state_dict": {}}, partial / "run" / "checkpoints" / "last.ckpt")
    _touch(gpu_batch.paper_unit("tas_attn_dropout") / "result.json")
    models = ["--paper-models", "tas_attn_none", "tas_attn_penalty", "tas_attn_dropout", "--paper-full"]
    seeds = ["--paper-seeds", "0", "2"]  # one unit a seed: the target is a mean over seeds

    assert gpu_batch.main(["--out", str(tmp_path / "out"), "--deadline-s", "1", "--dry-run", *models, *seeds]) == 0
    out = capsys.readouterr().out
    total = 150 * gpu_batch.PAPER_STEPS_PER_EPOCH
    assert f"tas_attn_none s0: partial: resumes at step 5000 of {total} (epoch 26 of 150" in out
    assert "tas_attn_none s2: new" in out and "tas_attn_penalty s0: new" in out
    assert "tas_attn_dropout s0: done" in out and "tas_attn_dropout s2: new" in out

    started = []

    def fake_start(self, name, cmd):  # the resumed unit trains on until the deadline and checkpoints
        started.append(cmd)
        self.procs.append((name, _DoneProcess()))
        if name == "paper_tas_attn_none_s0":
            time.sleep(0.05)  # file times tick coarser than time.time(): written "after the start" for pack
            torch.save({"global_step": 9000, "epoch": 48}, partial / "run" / "checkpoints" / "last.ckpt")

    def no_probe(*a, **k):
        raise AssertionError("--paper-full must not shorten the schedule, so it needs no step probe")

    monkeypatch.setattr(gpu_batch.Pool, "start", fake_start)
    monkeypatch.setattr(gpu_batch, "probe_step_seconds", no_probe)
    assert gpu_batch.main(["--out", str(tmp_path / "out"), "--deadline-s", "5", "--workers", "0", *models,
                           *seeds]) == 0
    assert sorted((c[c.index("--models") + 1], c[c.index("--seeds") + 1]) for c in started) == [
        (m, s) for m in ("tas_attn_dropout", "tas_attn_none", "tas_attn_penalty") for s in ("0", "2")]
    for cmd in started:
        assert cmd[cmd.index("--budgets") + 1] == "paper" and "--max-epochs" not in cmd
        assert cmd[cmd.index("--results") + 1] == gpu_batch.PAPER_RESULTS
    with tarfile.open(tmp_path / "out" / "results.tar.gz") as tar:  # the checkpoint to resume from comes back
        assert str((partial / "run" / "checkpoints" / "last.ckpt").relative_to(tmp_path)) in tar.getnames()
    assert "resumes at step 9000" in gpu_batch.paper_state(partial)


def test_paper_set_trains_and_finds_the_units_bench_names_for_the_overrides(tmp_path, monkeypatch, capsys):
    # a wider forecaster on the full budget: the command carries the override, and the unit folder the script
    # reads the state from (and packs) is the one bench writes for it, m<hash> included
    from stgnn_diag.bench.grid import GridSpec

    monkeypatch.setattr(gpu_batch, "REPO", tmp_path)
    spec = GridSpec(models=["tas_attn_none"], seeds=[0, 1], budgets=["paper"],
                    model_overrides={"*": {"hidden_size": 64, "dropout": 0.1}})
    bench_dirs = [tmp_path / gpu_batch.PAPER_RESULTS / u.unit_id for u in spec.units()]
    assert all("__m" in d.name for d in bench_dirs)
    _touch(bench_dirs[0] / "result.json")
    args = ["--out", str(tmp_path / "out"), "--paper-models", "tas_attn_none", "--paper-seeds", "0", "1",
            "--paper-full", "--paper-set", "hidden_size=64", "--paper-set", "dropout=0.1"]
    assert gpu_batch.main([*args[:2], "--deadline-s", "1", "--dry-run", *args[2:]]) == 0
    out = capsys.readouterr().out
    assert "tas_attn_none s0: done" in out and "tas_attn_none s1: new" in out

    started = []
    monkeypatch.setattr(gpu_batch.Pool, "start", lambda self, name, cmd: (started.append(cmd),
                                                                         self.procs.append((name, _DoneProcess()))))
    assert gpu_batch.main([*args[:2], "--deadline-s", "5", "--workers", "0", *args[2:]]) == 0
    assert len(started) == 2
    for cmd in started:
        sets = [cmd[i + 1] for i, x in enumerate(cmd) if x == "--set"]
        assert sets == ["hidden_size=64", "dropout=0.1"]


def test_bench_runs_train_beside_the_pool_and_their_folder_is_packed(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(gpu_batch, "REPO", tmp_path)
    args = ("--models tas_attn_none --seeds 1 --budgets cpu-15min --max-epochs 20 --set-for tas_attn_none "
            "'input_mask=True' --results models/results/probes/long-gpu")
    assert gpu_batch.main(["--out", str(tmp_path / "out"), "--deadline-s", "1", "--dry-run", "--bench", args]) == 0
    line = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("bench run:")]
    assert len(line) == 1 and line[0].endswith(
        "bench --models tas_attn_none --seeds 1 --budgets cpu-15min --max-epochs 20 --set-for tas_attn_none "
        "input_mask=True --results models/results/probes/long-gpu --accelerator gpu --no-report --no-progress")
    assert gpu_batch.bench_results(args) == "models/results/probes/long-gpu"
    assert gpu_batch.bench_results("--models x --results=a/b") == "a/b"
    with pytest.raises(SystemExit, match="--results"):  # nothing to pack from: refused before anything trains
        gpu_batch.main(["--out", str(tmp_path / "out"), "--deadline-s", "1", "--bench", "--models x"])

    since = time.time() - 1
    unit = tmp_path / "models/results/probes/long-gpu/tas_attn_none__dcrnn__h12__cpu-15min+e20__s1"
    _touch(unit / "run" / "checkpoints" / "last.ckpt")  # interrupted at the deadline: kept, to resume
    _touch(unit / "run" / "metrics.csv")
    out = tmp_path / "out"
    out.mkdir()
    gpu_batch.pack(out, since, set())
    with tarfile.open(out / "results.tar.gz") as tar:
        assert not tar.getnames()  # an extra folder is packed only when named
    gpu_batch.pack(out, since, set(), ["models/results/probes/long-gpu"])
    with tarfile.open(out / "results.tar.gz") as tar:
        assert set(tar.getnames()) == {str((unit / "run" / f).relative_to(tmp_path))
                                       for f in ("checkpoints/last.ckpt", "metrics.csv")}
