"""Run-folder rules without training: overwrite removes the old run's outputs, and only those."""
import pytest

from stgnn_diag.training.run_dir import RunDirError, prepare_run_dir


def old_run(path):
    (path / "checkpoints").mkdir(parents=True)
    for name in ("last.ckpt", "epoch000.ckpt", "epoch007.ckpt"):
        (path / "checkpoints" / name).write_text("old")
    (path / "logs" / "attempt0").mkdir(parents=True)
    (path / "metrics.json").write_text("{}")
    (path / "config.json").write_text("{}")
    (path / "notes.txt").write_text("mine")


def test_overwrite_starts_from_an_empty_run_but_keeps_foreign_files(tmp_path):
    old_run(tmp_path)
    with pytest.raises(RunDirError, match="--overwrite"):
        prepare_run_dir(tmp_path, resume=False, overwrite=False)
    assert prepare_run_dir(tmp_path, resume=False, overwrite=True) is None
    # an old epoch007.ckpt would otherwise sit next to a new 3-epoch run's checkpoints
    assert not (tmp_path / "checkpoints").exists() and not (tmp_path / "logs").exists()
    assert not (tmp_path / "metrics.json").exists() and not (tmp_path / "config.json").exists()
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_resume_returns_the_last_checkpoint_and_touches_nothing(tmp_path):
    old_run(tmp_path)
    assert prepare_run_dir(tmp_path, resume=True, overwrite=False) == tmp_path / "checkpoints" / "last.ckpt"
    assert (tmp_path / "checkpoints" / "epoch007.ckpt").exists()


def test_one_process_per_run_folder_and_stale_locks(tmp_path):
    import subprocess
    import sys

    from stgnn_diag.training.run_dir import RunLock

    with RunLock(tmp_path / "run") as lock:
        assert lock.path.is_file()
        with pytest.raises(RunDirError, match=r"in use by another training process \(pid"):
            RunLock(tmp_path / "run").acquire()
    assert not (tmp_path / "run" / ".lock").exists()  # released
    # a lock left by a process that is gone (kill -9, a crash) is stale and taken over
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    import json
    import socket
    (tmp_path / "run" / ".lock").write_text(json.dumps({"pid": int(dead.stdout), "host": socket.gethostname()}))
    with RunLock(tmp_path / "run"):
        pass


def test_resume_must_continue_the_same_run(tmp_path):
    import json

    from stgnn_diag.training.run_dir import check_same_run

    (tmp_path / "config.json").write_text(json.dumps({"model": "tts_attn_penalty", "seed": 0, "out": "a",
                                                      "model_overrides": {"hidden_size": 8}}))
    check_same_run(tmp_path, {"model": "tts_attn_penalty", "seed": 0, "out": "b", "model_overrides": {"hidden_size": 8}})
    with pytest.raises(RunDirError, match=r"model: the run has 'tts_attn_penalty', asked 'tas_attn_mask'"):
        check_same_run(tmp_path, {"model": "tas_attn_mask", "seed": 0, "model_overrides": {"hidden_size": 8}})
    with pytest.raises(RunDirError, match="model_overrides"):
        check_same_run(tmp_path, {"model": "tts_attn_penalty", "seed": 0, "model_overrides": {"hidden_size": 16}})


def test_a_run_recorded_before_the_data_set_axis_resumes_as_metr_la(tmp_path):
    """config.json of older runs has no "dataset": it is the default data set's run, and only that one's."""
    import json

    from stgnn_diag.training.run_dir import RunDirError, check_same_run

    (tmp_path / "config.json").write_text(json.dumps({"model": "tts_attn_none", "seed": 0}))
    check_same_run(tmp_path, {"model": "tts_attn_none", "seed": 0, "dataset": "metr_la"},
                   absent_means={"dataset": "metr_la"})
    with pytest.raises(RunDirError, match="dataset: the run has 'metr_la', asked 'pems_bay'"):
        check_same_run(tmp_path, {"model": "tts_attn_none", "seed": 0, "dataset": "pems_bay"},
                       absent_means={"dataset": "metr_la"})
