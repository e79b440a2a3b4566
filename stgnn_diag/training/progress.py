"""The training progress bar: Lightning's TQDM bar, with its total and ETA kept after a mid-epoch resume."""
from __future__ import annotations

from lightning.pytorch.callbacks import TQDMProgressBar
from lightning.pytorch.callbacks.progress.tqdm_progress import convert_inf


class ProgressBar(TQDMProgressBar):
    """Lightning's :class:`TQDMProgressBar`, which sets the epoch's total and description in
    ``on_train_epoch_start``. Lightning (2.5 on) skips that hook when a run resumes from a checkpoint written
    mid-epoch, so its bar then reads ``Training: n/?`` with no total and no ETA for the whole resumed epoch
    (Lightning issue 20603, unfixed in 2.6.6): on a long epoch, the one place the ETA matters. Here the first
    batch of such an epoch sets them: the total, ``Epoch k``, and the batches already done as the bar's start,
    so the rate and the ETA count only the batches of this attempt."""

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx: int) -> None:
        bar = self.train_progress_bar
        if bar is None or bar.disable or bar.total is not None:
            return
        total = convert_inf(self.total_train_batches)
        if total is None:  # an endless loader: nothing to show but the count
            return
        bar.reset(total=total)
        bar.initial = bar.n = batch_idx
        bar.set_description(f"Epoch {trainer.current_epoch}")
        bar.refresh()
