"""Data-parallel training equals one process with the same global batch: two CPU processes on one machine
(Lightning DDP over gloo) and two "nodes" of one process each (two torchrun launches, static rendezvous on the
loopback), against one process, on real METR-LA windows."""
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
import time
import warnings

import pytest
import torch
from torch.utils.data import RandomSampler

from stgnn_diag.training.data import _EpochBatchSampler

#: A tiny run without dropout (a dropout mask is drawn per process: it would differ from one process's).
ARGS = ["--model", "tas_attn_none", "--max-windows", "400", "--max-epochs", "1", "--batch-size", "8",
        "--limit-val-batches", "2", "--hidden-size", "8", "--set", "heads=2", "--set", "n_layers=1",
        "--no-progress", "--no-baselines"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _train_cmd(out, root, *extra):
    return ["-m", "stgnn_diag.cli", "train", "--out", str(out), "--data-root", str(root), *ARGS, *extra]


def _result(out):
    return json.loads((out / "metrics.json").read_text())


@pytest.fixture(scope="module")
def one_process(tmp_path_factory, metr_la_root):
    out = tmp_path_factory.mktemp("ddp") / "single"
    done = subprocess.run([sys.executable, *_train_cmd(out, metr_la_root)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return _result(out)


def _assert_equal_to_one_process(result, single):
    ranks = result["ranks"]
    assert ranks["world_size"] == 2 and ranks["agree"], ranks  # both ranks end with the same weights
    # the same batches: the same number of steps and the same schedule as one process
    assert result["global_steps"] == result["schedule_steps"] == single["global_steps"] > 8
    # the same model, to the tolerance of the reduction order: 1.6e-4 at most here; with each rank's own masked mean
    # as its loss (not the global batch's) the metrics move by 1e-2
    for k, v in single["metrics"].items():
        assert result["metrics"][k] == pytest.approx(v, rel=1e-3), k


def _kill_groups(procs) -> None:
    """SIGKILL each launch's process group: a rank whose launcher has exited (a failed rank 0 leaves the rank it
    started waiting for it) goes down too."""
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:  # the whole group has ended
            pass
        p.wait()


def _run_launches(cmds, env, logs_at: Path, deadline_s: float = 200.0):
    """Start the launch commands together and wait for all; ``(return codes, stderr tails)``.

    A launch that fails takes the others down at once (a lone rank waits for its peers until the rendezvous times
    out), and none may run past ``deadline_s``: a hang becomes a failure that shows every launch's stderr. Each
    launch is a process group, so the ranks it started go down with it."""
    logs = [open(logs_at.parent / f"{logs_at.name}-launch{i}.log", "w+") for i in range(len(cmds))]
    procs = [subprocess.Popen([sys.executable, *cmd], env=env, stdout=subprocess.DEVNULL, stderr=log, text=True,
                              start_new_session=True) for cmd, log in zip(cmds, logs)]
    t0 = time.monotonic()
    while any(p.poll() is None for p in procs):
        if any(p.returncode not in (None, 0) for p in procs) or time.monotonic() - t0 > deadline_s:
            break
        time.sleep(0.5)
    _kill_groups(procs)
    tails = []
    for log in logs:
        log.seek(0)
        tails.append(log.read()[-3000:])
        log.close()
    return [p.returncode for p in procs], tails


def _launches(world: int, out, root, port, *extra):
    """The ``train`` launch on ``world`` processes of this machine: ``(commands, env)``."""
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "PYTHONUNBUFFERED": "1"}
    devices = ["--devices", "2", "--strategy", "ddp"] if world == 2 else []
    return [_train_cmd(out, root, *devices, *extra)], env


def _train_on_a_free_port(tmp_path, name, launches, out=None):
    """``launches(out, port) -> (commands, env)`` run on a free port, tried twice; the run folder of the success
    (a new folder for each try, or ``out`` for both: a resume, whose failed rank 0 has not touched the folder).

    The port is chosen free, but rank 0 binds it only after the launch starts, so another process can take it in
    between (rank 0 then fails with EADDRINUSE and its peers wait): a failed launch is tried once more on a new
    port, with a warning that shows what failed. What is tested is the training, not that race."""
    failures = []
    for attempt in range(2):
        folder = out or tmp_path / f"{name}-{attempt}"
        cmds, env = launches(folder, _port())
        codes, tails = _run_launches(cmds, env, folder)
        if all(c == 0 for c in codes):
            return folder
        failures.append((codes, tails))
        warnings.warn(f"{name} launch {attempt} failed with {codes}: " + "; ".join(t[-800:] for t in tails))
    pytest.fail(f"{name}: both launches failed: {failures}")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_two_processes_train_the_model_one_process_trains(tmp_path, metr_la_root, one_process):
    def launches(out, port):
        return _launches(2, out, metr_la_root, port)

    _assert_equal_to_one_process(_result(_train_on_a_free_port(tmp_path, "devices2", launches)), one_process)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_two_nodes_of_one_process_each_train_the_model_one_process_trains(tmp_path, metr_la_root, one_process):
    """The documented multi-node launch (docs/training.md), with two "machines" on the loopback."""
    def launches(out, port):
        env = {k: v for k, v in os.environ.items() if k not in ("MASTER_ADDR", "MASTER_PORT")}
        env["GLOO_SOCKET_IFNAME"] = "lo"  # both "machines" are this one: gloo's sockets on the loopback too
        return [["-m", "torch.distributed.run", "--nnodes", "2", "--nproc-per-node", "1", "--node-rank", str(rank),
                 "--master-addr", "127.0.0.1", "--master-port", str(port), "--rdzv-conf", "timeout=90",
                 *_train_cmd(out, metr_la_root, "--devices", "1", "--num-nodes", "2", "--strategy", "ddp")]
                for rank in (0, 1)], env

    _assert_equal_to_one_process(_result(_train_on_a_free_port(tmp_path, "nodes2", launches)), one_process)


def _kill_at_first_checkpoint(cmds, env, out, deadline_s: float = 200.0) -> int:
    """Start a launch and kill it (SIGKILL, its whole process group) as soon as ``checkpoints/last.ckpt`` exists;
    the step that checkpoint holds."""
    from stgnn_diag.training.safe_load import load_file

    ckpt = out / "checkpoints" / "last.ckpt"
    procs = [subprocess.Popen([sys.executable, *cmd], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True) for cmd in cmds]
    t0 = time.monotonic()
    while not ckpt.exists() and time.monotonic() - t0 < deadline_s and all(p.poll() is None for p in procs):
        time.sleep(0.05)
    _kill_groups(procs)
    assert ckpt.exists() and not (out / "metrics.json").exists(), "the run ended before it could be killed"
    return int(load_file(ckpt)["global_step"])


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("first, then", [(2, 1), (1, 2)])
def test_a_run_killed_on_one_world_size_resumes_on_another_to_the_one_process_result(tmp_path, metr_la_root,
                                                                                      one_process, first, then):
    """Killed (SIGKILL) at its first mid-epoch checkpoint on ``first`` processes and resumed with ``--resume`` on
    ``then``: the remaining batches, the learning-rate schedule and the final model are those of one uninterrupted
    process (the batch sampler's position is the global batch's, whatever the world size)."""
    out = tmp_path / "run"
    step = _kill_at_first_checkpoint(*_launches(first, out, metr_la_root, _port(), "--checkpoint-every", "10"), out)
    assert 0 < step < one_process["global_steps"]
    _train_on_a_free_port(tmp_path, "resume", lambda o, port: _launches(then, o, metr_la_root, port, "--resume"),
                          out=out)
    result = _result(out)
    assert result["resumed"] and result["global_steps"] == result["schedule_steps"] == one_process["global_steps"]
    assert result["ranks"]["world_size"] == then and result["ranks"]["agree"], result["ranks"]
    for k, v in one_process["metrics"].items():
        assert result["metrics"][k] == pytest.approx(v, rel=1e-3), k


def test_the_ranks_slices_make_up_the_one_process_batches_and_resume_on_another_world_size():
    windows = list(range(50))

    def batches(shard=None, resume=None):
        sampler = _EpochBatchSampler(RandomSampler(windows, generator=torch.Generator().manual_seed(3)), 8, True,
                                     shard=shard)
        if resume is not None:
            sampler.resume(resume)
        return list(sampler)

    one = batches()
    halves = [batches((r, 2)) for r in (0, 1)]
    assert [a + b for a, b in zip(*halves)] == one and all(len(b) == 4 for b in halves[0])
    # a position saved by one process (after 2 batches of epoch 0) resumes on two, each on its slice
    s = _EpochBatchSampler(RandomSampler(windows, generator=torch.Generator().manual_seed(3)), 8, True)
    it = iter(s)
    next(it), next(it)
    state = s.state(epoch=0, batches_done=2, epoch_complete=False)
    resumed = [batches((r, 2), resume=state) for r in (0, 1)]
    assert [a + b for a, b in zip(*resumed)] == one[2:]
    with pytest.raises(ValueError, match="multiple of the world size"):
        _EpochBatchSampler(RandomSampler(windows), 8, True, shard=(0, 3))
