"""Lightning data module over the windowed METR-LA splits (one gather per batch, DDP-aware)."""
from __future__ import annotations

from typing import Optional

import lightning as L
import torch
from torch.utils.data import BatchSampler, DataLoader, DistributedSampler, RandomSampler, SequentialSampler

from ..datasets import WindowDataset


class _EpochBatchSampler(BatchSampler):
    """A ``BatchSampler`` that forwards ``set_epoch`` to its sampler (Lightning calls it on
    ``dataloader.batch_sampler``), so a ``DistributedSampler`` reshuffles every epoch."""

    def set_epoch(self, epoch: int) -> None:
        if hasattr(self.sampler, "set_epoch"):
            self.sampler.set_epoch(epoch)


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

    def train_dataloader(self) -> DataLoader:
        return self._loader(self.splits.train, shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return self._loader(self.splits.val, shuffle=False)

    def test_dataloader(self) -> DataLoader:
        return self._loader(self.splits.test, shuffle=False)

    def predict_loader(self, split: str = "test", batch_size: Optional[int] = None) -> DataLoader:
        """Sequential loader over one split (single process), for evaluation."""
        ds = self.splits[split]
        return DataLoader(ds, sampler=BatchSampler(SequentialSampler(ds), batch_size or self.batch_size, False),
                          batch_size=None)
