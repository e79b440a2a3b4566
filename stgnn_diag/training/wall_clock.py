"""A wall-clock training budget that stays repeatable: the time limit is turned into a number of steps.

``--max-time 15m`` trains for (about) 15 minutes of this machine. At the end of the learning-rate
warm-up (at least 10 steps) the callback measures the time per step (validation and checkpoints
included, as they were spent), fixes the run's length ``S`` = the steps that fit into the time left,
and sets both the learning-rate schedule and the trainer's ``max_steps`` to ``S``. The run then ends
at step ``S`` (or earlier, at Lightning's own ``max_time``, if the machine slows down), and ``S``
goes into ``metrics.json``. The warm-up does not depend on the schedule's length, so when the
calibration ends within it (every preset budget: 25 or more warm-up steps) ``--max-steps S``
repeats the same training exactly, on any machine.
"""
from __future__ import annotations

import re
import time
from datetime import timedelta
from typing import Optional

import lightning as L

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> timedelta:
    """``"15m"``, ``"90s"``, ``"1.5h"``, ``"1h30m"`` or Lightning's ``"DD:HH:MM:SS"`` -> a timedelta.

    Raises ``ValueError`` naming the accepted forms for anything else (or a duration <= 0).
    """
    s = str(text).strip().lower()
    total: Optional[float] = None
    if re.fullmatch(r"\d+:\d{1,2}:\d{1,2}:\d{1,2}", s):
        d, h, m, sec = (int(v) for v in s.split(":"))
        total = d * 86400 + h * 3600 + m * 60 + sec
    elif re.fullmatch(r"(\d+(\.\d+)?[smhd])+", s):
        total = sum(float(v) * _UNITS[u] for v, u in re.findall(r"(\d+(?:\.\d+)?)([smhd])", s))
    if total is None or total <= 0:
        raise ValueError(f"--max-time {text!r}: give a positive duration such as 15m, 90s, 1.5h, 1h30m "
                         f"or DD:HH:MM:SS.")
    return timedelta(seconds=total)


class WallClockBudget(L.Callback):
    """Fix the run's number of steps from the measured time per step (see the module docstring).

    Args:
        max_time: the training time allowed (a ``timedelta``).
        calibrate_at: the step at which the length is fixed: the end of the warm-up, at least 10 (the
            first 5 steps are not timed: they include one-off work such as building graph supports).
        safety: fraction of the estimated steps kept, so that the last epoch's validation and the
            final checkpoint still fit.

    The module must expose ``schedule_steps`` (read by its learning-rate schedule at every step).
    """

    def __init__(self, max_time: timedelta, calibrate_at: Optional[int] = None, safety: float = 0.97):
        self.max_s = max_time.total_seconds()
        self.calibrate_at = None if calibrate_at is None else max(10, int(calibrate_at))
        self.safety = safety
        self.fixed_steps: Optional[int] = None
        self._t0: Optional[float] = None
        self._t5: Optional[float] = None

    def on_train_start(self, trainer, pl_module) -> None:
        self._t0 = time.perf_counter() - self._elapsed_before(trainer)
        if self.calibrate_at is None:  # the module's warm-up in this process's steps (set by configure_optimizers)
            self.calibrate_at = max(10, int(getattr(pl_module, "warmup_steps", 10)))
        if self.fixed_steps is not None:  # resumed after the length was fixed
            pl_module.schedule_steps = self.fixed_steps
            trainer.fit_loop.epoch_loop.max_steps = self.fixed_steps

    @staticmethod
    def _elapsed_before(trainer) -> float:
        """Training time of earlier attempts of a resumed run (Lightning's Timer keeps it)."""
        from lightning.pytorch.callbacks import Timer

        timers = [c for c in trainer.callbacks if isinstance(c, Timer)]
        return float(timers[0].time_elapsed("train")) if timers else 0.0

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if self.fixed_steps is not None or trainer.global_step < 5:
            return
        now = time.perf_counter()
        if self._t5 is None:
            self._t5 = now
            return
        done = trainer.global_step
        if done < self.calibrate_at:
            return
        per_step = (now - self._t5) / (done - 5)
        left = self.max_s - (now - self._t0)
        steps = done + max(0, int(self.safety * left / per_step))
        self.fixed_steps = max(done, steps)
        pl_module.schedule_steps = self.fixed_steps
        trainer.fit_loop.epoch_loop.max_steps = self.fixed_steps

    def state_dict(self):
        return {"fixed_steps": self.fixed_steps}

    def load_state_dict(self, state) -> None:
        self.fixed_steps = state.get("fixed_steps")


class ElapsedTime(L.Callback):
    """Logs ``train_seconds`` (training time so far, this attempt and earlier ones) at every validation,
    so ``metrics.csv`` gives validation error against time (the time-to-accuracy plot)."""

    def on_train_start(self, trainer, pl_module) -> None:
        self._t0 = time.perf_counter() - WallClockBudget._elapsed_before(trainer)

    def on_validation_epoch_end(self, trainer, pl_module) -> None:
        if trainer.sanity_checking or not hasattr(self, "_t0"):
            return
        pl_module.log("train_seconds", time.perf_counter() - self._t0, on_step=False, on_epoch=True)
