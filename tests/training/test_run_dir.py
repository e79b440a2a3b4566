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
