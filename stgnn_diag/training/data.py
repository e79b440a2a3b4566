"""Lightning data module over the windowed METR-LA splits (one gather per batch, DDP-aware)."""
from __future__ import annotations

import itertools
from typing import Any, Callable, Dict, Optional, Tuple

import lightning as L
import torch
from torch.utils.data import BatchSampler, DataLoader, DistributedSampler, RandomSampler, SequentialSampler

from ..datasets import WindowDataset


class _EpochBatchSampler(BatchSampler):
    """A ``BatchSampler`` that forwards ``set_epoch`` to its sampler (Lightning calls it on
    ``dataloader.batch_sampler``), so a ``DistributedSampler`` reshuffles every epoch, and that can
    start an epoch part-way (:meth:`resume`).

    It records the state of the sampler's generator at the start of each epoch: the order of that
    epoch's windows, which :meth:`state` hands to a checkpoint.
    """

    def __init__(self, sampler, batch_size: int, drop_last: bool):
        super().__init__(sampler, batch_size, drop_last)
        self._start_state: Optional[torch.Tensor] = None
        self._resume: Optional[Tuple[Optional[torch.Tensor], int]] = None
        self._started = False

    def set_epoch(self, epoch: int) -> None:
        if hasattr(self.sampler, "set_epoch"):
            self.sampler.set_epoch(epoch)

    def _generator(self) -> Optional[torch.Generator]:
        return getattr(self.sampler, "generator", None)

    def __iter__(self):
        self._started = True
        gen, skip = self._generator(), 0
        if self._resume is not None:
            state, skip = self._resume
            self._resume = None
            if gen is not None and state is not None:
                gen.set_state(state)
        self._start_state = None if gen is None else gen.get_state()
        batches = super().__iter__()
        for _ in itertools.islice(batches, skip):  # the batches this epoch trained on before the checkpoint
            pass
        yield from batches

    def state(self, epoch: int, batches_done: int, epoch_complete: bool) -> Dict[str, Any]:
        """Where training stands: after ``batches_done`` batches of ``epoch`` (all of them when
        ``epoch_complete``)."""
        gen = self._generator()
        if epoch_complete:  # the next epoch starts from the generator as it is now
            return {"epoch": epoch + 1, "batches_done": 0, "generator": None if gen is None else gen.get_state()}
        return {"epoch": epoch, "batches_done": batches_done, "generator": self._start_state}

    def resume(self, state: Dict[str, Any]) -> None:
        """Make the first ``iter()`` continue from ``state``: the same epoch order, the done batches skipped.

        Ignored once iteration has begun: a position belongs before the first batch of a run."""
        if self._started:
            return
        self.set_epoch(int(state["epoch"]))
        self._resume = (state.get("generator"), int(state["batches_done"]))


class ResumableLoader(DataLoader):
    """The training loader: a ``DataLoader`` whose place in the epoch is saved in every checkpoint.

    Without its position, a run resumed from a mid-epoch checkpoint would draw a new epoch order
    and train again on batches it had already seen, skipping others; with it, the resumed run sees
    exactly the batches the uninterrupted run would have.

    The position travels in :class:`WindowDataModule`'s ``state_dict``: Lightning restores a
    datamodule before ``configure_optimizers``, whose ``trainer.estimated_stepping_batches`` already
    builds and starts this loader, too early for Lightning's own restore of a loader's
    ``state_dict`` (Lightning 2.6). The loader keeps that ``_Stateful`` interface as well, so Lightning
    knows it is resumable (no "dataloader is not resumable" warning).

    Args:
        dataset: the training windows.
        batch_sampler: an :class:`_EpochBatchSampler` (passed as ``sampler``: it yields index lists).
        position: ``() -> (epoch, batches done in it, whether the epoch is complete)`` at the moment of
            a checkpoint, from the trainer's own progress (the sampler alone cannot tell: Lightning
            fetches one batch ahead).
    """

    def __init__(self, dataset, batch_sampler: _EpochBatchSampler, position: Callable[[], Tuple[int, int, bool]]):
        super().__init__(dataset, sampler=batch_sampler, batch_size=None)
        self._position = position

    def state_dict(self) -> Dict[str, Any]:
        return self.sampler.state(*self._position())

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        self.sampler.resume(state)


class WindowDataModule(L.LightningDataModule):
    """Train / val / test loaders over :class:`~stgnn_diag.datasets.WindowDataset` splits.

    Batches are gathered with one fancy-indexing call (a ``BatchSampler`` feeds whole index lists).
    Under DDP each rank takes its own shard through a ``DistributedSampler`` (seeded, reshuffled
    per epoch), so the Trainer must run with ``use_distributed_sampler=False``.

    Args:
        splits: the :class:`~stgnn_diag.datasets.Splits` of a protocol.
        batch_size: windows per batch.
        seed: seed of the shuffling.
    """

    def __init__(self, splits, batch_size: int = 64, seed: int = 0):
        super().__init__()
        self.splits, self.batch_size, self.seed = splits, batch_size, seed
        self._train_loader: Optional[ResumableLoader] = None
        self._train_resume: Optional[Dict[str, Any]] = None

    def state_dict(self) -> Dict[str, Any]:
        """The training loader's position (saved in every checkpoint of a fit)."""
        trainer = self.trainer
        if self._train_loader is None or trainer is None or trainer.state.fn != "fit":
            return {}
        return {"train_loader": self._train_loader.state_dict()}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        self._train_resume = state.get("train_loader")

    def _sampler(self, ds: WindowDataset, shuffle: bool):
        trainer = self.trainer
        if trainer is not None and trainer.world_size > 1:
            return DistributedSampler(ds, num_replicas=trainer.world_size, rank=trainer.global_rank,
                                      shuffle=shuffle, seed=self.seed, drop_last=shuffle)
        if shuffle:  # one seeded generator per loader: a new, reproducible order every epoch
            return RandomSampler(ds, generator=torch.Generator().manual_seed(self.seed))
        return SequentialSampler(ds)

    def _loader(self, ds: WindowDataset, shuffle: bool) -> DataLoader:
        sampler = _EpochBatchSampler(self._sampler(ds, shuffle), batch_size=self.batch_size, drop_last=shuffle)
        return DataLoader(ds, sampler=sampler, batch_size=None)

    def _train_position(self) -> Tuple[int, int, bool]:
        trainer = self.trainer
        done = trainer.fit_loop.epoch_loop.batch_progress.current.processed
        return trainer.current_epoch, done, done >= trainer.num_training_batches

    def train_dataloader(self) -> DataLoader:
        ds = self.splits.train
        sampler = _EpochBatchSampler(self._sampler(ds, True), batch_size=self.batch_size, drop_last=True)
        if self._train_resume is not None:
            sampler.resume(self._train_resume)
        self._train_loader = ResumableLoader(ds, sampler, self._train_position)
        return self._train_loader

    def val_dataloader(self) -> DataLoader:
        return self._loader(self.splits.val, shuffle=False)

    def test_dataloader(self) -> DataLoader:
        return self._loader(self.splits.test, shuffle=False)

    def predict_loader(self, split: str = "test", batch_size: Optional[int] = None) -> DataLoader:
        """Sequential loader over one split (single process), for evaluation."""
        ds = self.splits[split]
        return DataLoader(ds, sampler=BatchSampler(SequentialSampler(ds), batch_size or self.batch_size, False),
                          batch_size=None)
