"""Checkpoints written atomically, beside their destination.

Lightning 2.6 (``TorchCheckpointIO`` -> ``_atomic_save``) writes a local checkpoint through an fsspec
transaction: the bytes go to a temporary file made by ``tempfile.mkstemp()`` in the *system* temporary
folder, and the commit is ``shutil.move`` to the destination. When that folder is on another file system
than the run (a tmpfs ``/tmp``, a run folder on a network or scratch disk), the move is a copy into the
destination path: a process killed during it leaves a truncated ``last.ckpt`` where the previous good one
was, and ``--resume`` then fails. Nothing is fsync'ed either. :class:`AtomicCheckpointIO` writes local
checkpoints with :func:`stgnn_diag._io.atomic_write` (a temporary file in the destination folder, fsync,
``os.replace``); remote URLs (``s3://`` ...) keep Lightning's path.
"""
from __future__ import annotations

from typing import Any, Optional

import torch
from lightning.fabric.plugins.io.torch_io import TorchCheckpointIO

from .._io import atomic_write


class AtomicCheckpointIO(TorchCheckpointIO):
    """``TorchCheckpointIO`` whose local saves are atomic (the destination holds the old or the new file)."""

    def save_checkpoint(self, checkpoint: dict, path, storage_options: Optional[Any] = None) -> None:
        if "://" in str(path) and not str(path).startswith("file://"):
            return super().save_checkpoint(checkpoint, path, storage_options)
        if storage_options is not None:
            raise TypeError(f"{type(self).__name__}.save_checkpoint takes no storage_options.")
        target = str(path)[len("file://"):] if str(path).startswith("file://") else path
        atomic_write(target, lambda tmp: torch.save(checkpoint, tmp))
