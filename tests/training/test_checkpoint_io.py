"""Checkpoints are written atomically beside their destination: an interrupted save leaves the previous
checkpoint intact and no temporary file, and training writes every checkpoint that way."""
from __future__ import annotations

import pytest
import torch

from stgnn_diag.training import train
from stgnn_diag.training import checkpoint_io
from stgnn_diag.training.checkpoint_io import AtomicCheckpointIO

from .test_engine import tiny_cfg


def test_an_interrupted_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "checkpoints" / "last.ckpt"
    io = AtomicCheckpointIO()
    io.save_checkpoint({"step": 1, "w": torch.ones(3)}, path)
    before = path.read_bytes()

    def killed_mid_write(obj, f):
        with open(f, "wb") as out:
            out.write(b"PK\x03\x04 half a zip")
        raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint_io.torch, "save", killed_mid_write)
    with pytest.raises(KeyboardInterrupt):
        io.save_checkpoint({"step": 2, "w": torch.zeros(3)}, path)
    assert path.read_bytes() == before and sorted(p.name for p in path.parent.iterdir()) == ["last.ckpt"]
    monkeypatch.undo()
    assert io.load_checkpoint(path, weights_only=True)["step"] == 1


def test_training_writes_its_checkpoints_through_it(tmp_path, metr_la_root, monkeypatch):
    written = []
    save = AtomicCheckpointIO.save_checkpoint

    def counting(self, checkpoint, path, storage_options=None):
        written.append(str(path))
        return save(self, checkpoint, path, storage_options)

    monkeypatch.setattr(AtomicCheckpointIO, "save_checkpoint", counting)
    train(tiny_cfg(tmp_path, metr_la_root, max_epochs=1, limit_train_batches=2))
    names = sorted({p.rsplit("/", 1)[-1] for p in written})
    assert names == ["epoch000.ckpt", "last.ckpt"]
    assert not [p for p in (tmp_path / "run" / "checkpoints").iterdir() if p.suffix == ".part"]
