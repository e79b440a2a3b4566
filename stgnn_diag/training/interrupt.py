"""Ctrl-C during training: finish the step, save ``last.ckpt`` at it, then stop.

Lightning stops at once on SIGINT, so an interrupted run keeps only its last periodic checkpoint (every 25
steps by default): on 2 CPU cores and the authors' budget, minutes of training; on a GPU lease that the
deadline interrupts, steps paid for and lost. Saving at the moment of the signal instead would catch the
optimizer half-way through a step. :class:`CheckpointOnInterrupt` therefore lets the training step in
progress finish, saves there (the same point where the periodic checkpoint saves) and then raises
``KeyboardInterrupt``, which Lightning handles as before (the attempt is recorded, ``--resume`` continues).
A signal during the validation pass of training (at an epoch's end) is deferred to the end of that pass, where
Lightning's own checkpoints save too.
"""
from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from typing import Any, Union

import lightning as L
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.trainer.states import TrainerFn


class CheckpointOnInterrupt(Callback):
    """Defer the first SIGINT of a training phase to the end of the current training step, saving ``path``.

    A SIGINT during the validation pass of training is deferred to the end of that pass. A second SIGINT, or one
    outside training (the sanity check, the test pass), interrupts at once, as Lightning does without this
    callback. Inactive under multi-process strategies (each rank would see the
    signal at a different step; the save is a collective) and off the main thread (no signal handlers there).

    Args:
        path: the checkpoint to write, e.g. ``run/checkpoints/last.ckpt`` (what ``--resume`` reads).
    """

    def __init__(self, path: Union[str, Path]):
        self.path = str(path)
        self.requested = False
        self._trainer = None
        self._previous: Any = None

    def on_train_start(self, trainer: "L.Trainer", pl_module: "L.LightningModule") -> None:
        if trainer.world_size > 1 or threading.current_thread() is not threading.main_thread():
            return
        self._trainer, self.requested = trainer, False
        self._previous = signal.signal(signal.SIGINT, self._on_sigint)

    def _deferrable(self) -> bool:
        """In a training step, or in the validation pass of training (not its sanity check)."""
        t = self._trainer
        return t is not None and (t.training or (t.validating and not t.sanity_checking
                                                  and t.state.fn == TrainerFn.FITTING))

    def _on_sigint(self, signum, frame) -> None:
        if self.requested or not self._deferrable():
            self._restore()
            raise KeyboardInterrupt
        self.requested = True
        print("\nInterrupt: finishing this training step and saving its checkpoint (Ctrl-C again to stop now).",
              file=sys.stderr, flush=True)

    def on_train_batch_end(self, trainer: "L.Trainer", *args: Any, **kwargs: Any) -> None:
        self._save_if_requested(trainer)

    def on_validation_end(self, trainer: "L.Trainer", pl_module: "L.LightningModule") -> None:
        if not trainer.sanity_checking and trainer.state.fn == TrainerFn.FITTING:
            self._save_if_requested(trainer)

    def _save_if_requested(self, trainer: "L.Trainer") -> None:
        if self.requested:
            trainer.save_checkpoint(self.path, weights_only=False)  # full state: what --resume needs
            self._restore()
            raise KeyboardInterrupt

    def _restore(self) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None
        self._trainer = None

    def on_train_end(self, trainer: "L.Trainer", pl_module: "L.LightningModule") -> None:
        self._restore()

    def on_exception(self, trainer: "L.Trainer", pl_module: "L.LightningModule", exception: BaseException) -> None:
        self._restore()
