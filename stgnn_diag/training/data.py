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
    ``dataloader.batch_sampler``), and that can start an epoch part-way (:meth:`resume`).

    It records the state of the sampler's generator at the start of each epoch: the order of that
    epoch's windows, which :meth:`state` hands to a checkpoint.

    With ``shard=(rank, world_size)`` it yields rank ``rank``'s slice of each batch: every process draws the same
    order and the same batches of ``batch_size`` windows (the global batch, as one process would), and takes
    ``batch_size / world_size`` of them. The batches, the position in the epoch and the schedule are then the
    same at any world size, so a checkpoint resumes on another one.
    """

    def __init__(self, sampler, batch_size: int, drop_last: bool, shard: Optional[Tuple[int, int]] = None):
        super().__init__(sampler, batch_size, drop_last)
        if shard is not None and batch_size % shard[1]:
            raise ValueError(f"the batch of {batch_size} windows cannot be shared by {shard[1]} processes: use a "
                             f"batch size that is a multiple of the world size (--batch-size is the global batch).")
        self._shard = shard
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
        if self._shard is None:
            yield from batches
            return
        rank, world = self._shard
        per_rank = self.batch_size // world
        for batch in batches:
            yield batch[rank * per_rank:(rank + 1) * per_rank]

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
    ``batch_size`` is the global batch: under DDP every rank draws the same seeded order and takes its slice of
    each batch (:class:`_EpochBatchSampler`), so ``W`` processes train on the batches one process would, with
    the same number of steps; the validation and test splits are sharded by a ``DistributedSampler``. The
    Trainer must run with ``use_distributed_sampler=False``.

    Args:
        splits: the :class:`~stgnn_diag.datasets.Splits` of a protocol.
        batch_size: windows per optimizer step, over all processes.
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

    def _world(self) -> Tuple[int, int]:
        trainer = self.trainer
        return (0, 1) if trainer is None else (trainer.global_rank, trainer.world_size)

    def _loader(self, ds: WindowDataset) -> DataLoader:
        """An evaluation loader: in order, each rank its ``DistributedSampler`` shard under DDP."""
        rank, world = self._world()
        base = (DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=False) if world > 1
                else SequentialSampler(ds))
        return DataLoader(ds, sampler=_EpochBatchSampler(base, batch_size=self.batch_size, drop_last=False),
                          batch_size=None)

    def _train_position(self) -> Tuple[int, int, bool]:
        trainer = self.trainer
        done = trainer.fit_loop.epoch_loop.batch_progress.current.processed
        return trainer.current_epoch, done, done >= trainer.num_training_batches

    def train_dataloader(self) -> DataLoader:
        ds = self.splits.train
        rank, world = self._world()
        # one seeded generator per loader, the same on every rank: a new, reproducible order every epoch
        order = RandomSampler(ds, generator=torch.Generator().manual_seed(self.seed))
        sampler = _EpochBatchSampler(order, batch_size=self.batch_size, drop_last=True,
                                     shard=(rank, world) if world > 1 else None)
        if self._train_resume is not None:
            sampler.resume(self._train_resume)
        self._train_loader = ResumableLoader(ds, sampler, self._train_position)
        return self._train_loader

    def val_dataloader(self) -> DataLoader:
        return self._loader(self.splits.val)

    def test_dataloader(self) -> DataLoader:
        return self._loader(self.splits.test)

    def predict_loader(self, split: str = "test", batch_size: Optional[int] = None) -> DataLoader:
        """Sequential loader over one split (single process), for evaluation."""
        ds = self.splits[split]
        return DataLoader(ds, sampler=BatchSampler(SequentialSampler(ds), batch_size or self.batch_size, False),
                          batch_size=None)
