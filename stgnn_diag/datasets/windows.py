"""Sliding windows over a series, gathered lazily (no window is materialised in advance)."""
from __future__ import annotations

import warnings
from typing import Dict, Optional, Sequence, Union

import numpy as np
import torch
from torch import Tensor
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler, SequentialSampler

Index = Union[int, slice, Sequence[int], np.ndarray, Tensor]


def window_starts(begin: int, end: int, window: int, horizon: int) -> np.ndarray:
    """Start indices of every ``window + horizon`` span inside the steps ``[begin, end)``.

    Returns:
        int64 ``[end - begin - window - horizon + 1]`` (empty if the span does not fit).
    """
    last = end - window - horizon  # inclusive
    return np.arange(begin, max(last + 1, begin), dtype=np.int64)


class WindowDataset(Dataset):
    r"""Input/target windows cut from a shared series on demand.

    Window ``k`` starts at step ``s = starts[k]``: the input covers steps ``[s, s + window)`` and
    the target ``[s + window, s + window + horizon)``. The arrays are shared (not copied) between
    the splits of a :class:`~stgnn_diag.datasets.protocols.Splits`.

    ``ds[k]`` returns one sample; ``ds[list_or_array_or_slice]`` returns a batch gathered with a
    single fancy-indexing call (precomputed offsets), which is what :meth:`loader` uses.

    Args:
        scaled: ``[time, nodes]`` float32 scaled speed (model input), or None: each batch is scaled as it is
            gathered, by ``scaler`` (a memory-mapped data set: no scaled copy of the series is made).
        speed: ``[time, nodes]`` float32 speed in mph, 0 = missing (targets).
        covariates: ``[time, exog]`` float32 calendar covariates (same for all nodes).
        starts: ``[windows]`` int64 start steps.
        window: input length; horizon: target length.

    Shapes:
        Item (one window), all torch tensors:

        * ``x``: ``[window, nodes, 1]`` float32, scaled speed (zeros of missing readings kept, scaled);
        * ``u``: ``[window, exog]`` float32, covariates of the input steps (exog = 8:
          time of day, one-hot day of week), shared by all nodes;
        * ``y``: ``[horizon, nodes, 1]`` float32, speed in mph (not scaled);
        * ``mask``: ``[horizon, nodes, 1]`` bool, ``y != 0``;
        * ``x_mask``: ``[window, nodes, 1]`` bool, the observed input readings (speed ``!= 0``), for the
          models built with ``input_mask=True``.

        A batch adds a leading ``[batch]`` dimension to each.
    """

    def __init__(
        self,
        scaled: np.ndarray,
        speed: np.ndarray,
        covariates: np.ndarray,
        starts: np.ndarray,
        window: int,
        horizon: int,
        name: str = "",
        scaler=None,
    ) -> None:
        if scaled is None and scaler is None:
            raise ValueError("WindowDataset needs the scaled series or the scaler that scales each batch")
        self.scaler = scaler
        self.scaled = None if scaled is None else torch.as_tensor(np.ascontiguousarray(scaled, dtype=np.float32))
        with warnings.catch_warnings():  # a read-only memory map: the windows are only ever read
            warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
            self.speed = torch.as_tensor(np.ascontiguousarray(speed, dtype=np.float32))
        self.cov = torch.as_tensor(np.ascontiguousarray(covariates, dtype=np.float32))
        self.starts = np.asarray(starts, dtype=np.int64)
        self.window, self.horizon, self.name = int(window), int(horizon), name
        if len(self.starts) and (self.starts.min() < 0 or self.starts.max() + window + horizon > len(self.speed)):
            raise ValueError("window starts fall outside the series")
        self._starts_t = torch.from_numpy(self.starts)
        self._x_off = torch.arange(self.window)
        self._y_off = torch.arange(self.window, self.window + self.horizon)

    # ------------------------------------------------------------------ sizes
    def __len__(self) -> int:
        return len(self.starts)

    @property
    def n_nodes(self) -> int:
        return self.speed.shape[1]

    @property
    def exog_size(self) -> int:
        return self.cov.shape[1]

    def __repr__(self) -> str:
        return (f"WindowDataset({self.name or 'split'}, windows={len(self)}, window={self.window}, "
                f"horizon={self.horizon}, nodes={self.n_nodes})")

    # ------------------------------------------------------------------ indexing
    def _positions(self, index: Index) -> Tensor:
        if isinstance(index, slice):
            return torch.arange(len(self))[index]
        pos = torch.as_tensor(np.asarray(index) if not isinstance(index, Tensor) else index).long()
        if pos.dim() != 1:
            raise IndexError(f"expected an int or a 1-D index, got shape {tuple(pos.shape)}")
        n = len(self)
        if len(pos) and (pos.min() < -n or pos.max() >= n):
            raise IndexError(f"window index out of range for {n} windows")
        return pos % n if n else pos

    def __getitem__(self, index: Index) -> Dict[str, Tensor]:
        if isinstance(index, (int, np.integer)) or (isinstance(index, Tensor) and index.dim() == 0):
            k = int(index)
            if not -len(self) <= k < len(self):
                raise IndexError(f"window {k} out of range for {len(self)} windows")
            batch = self.get_batch(torch.tensor([k % len(self)]))
            return {key: v[0] for key, v in batch.items()}
        return self.get_batch(self._positions(index))

    def time_index(self, positions: Tensor, part: str = "x") -> Tensor:
        """Absolute time steps of windows ``positions``.

        Shapes:
            ``[batch, window]`` for ``part="x"``, ``[batch, horizon]`` for ``part="y"``.
        """
        off = self._x_off if part == "x" else self._y_off
        return self._starts_t[positions][:, None] + off

    def get_batch(self, positions: Index) -> Dict[str, Tensor]:
        """Gather a batch of windows at once.

        Args:
            positions: window positions in this split (1-D ints, slice, or tensor).

        Returns:
            dict with ``x [B, window, nodes, 1]``, ``u [B, window, exog]``,
            ``y [B, horizon, nodes, 1]``, ``mask [B, horizon, nodes, 1]``, ``x_mask [B, window, nodes, 1]``
            (see the class doc).
        """
        if not isinstance(positions, Tensor) or positions.dtype != torch.long:
            positions = self._positions(positions)
        tx, ty = self.time_index(positions, "x"), self.time_index(positions, "y")
        b, n = tx.shape[0], self.n_nodes
        raw = self.speed.index_select(0, tx.reshape(-1)).view(b, self.window, n, 1)
        if self.scaled is not None:
            x = self.scaled.index_select(0, tx.reshape(-1)).view(b, self.window, n, 1)
        else:  # in float64, then rounded: the values the scaled copy of the series would hold
            x = self.scaler.transform(raw.double()).float()
        u = self.cov.index_select(0, tx.reshape(-1)).view(b, self.window, -1)
        y = self.speed.index_select(0, ty.reshape(-1)).view(b, self.horizon, n, 1)
        x_mask = raw != 0
        return {"x": x, "u": u, "y": y, "mask": y != 0, "x_mask": x_mask}

    # ------------------------------------------------------------------ numpy views for evaluation
    def targets(self) -> np.ndarray:
        """All targets in mph (0 = missing). Shapes: ``[windows, horizon, nodes]`` float32."""
        idx = self.starts[:, None] + np.arange(self.window, self.window + self.horizon)
        return self.speed.numpy()[idx]

    def raw_inputs(self) -> np.ndarray:
        """All inputs in mph, unscaled (0 = missing). Shapes: ``[windows, window, nodes]`` float32."""
        idx = self.starts[:, None] + np.arange(self.window)
        return self.speed.numpy()[idx]

    # ------------------------------------------------------------------ loading
    def loader(
        self,
        batch_size: int = 64,
        shuffle: bool = False,
        drop_last: bool = False,
        generator: Optional[torch.Generator] = None,
        **kwargs,
    ) -> DataLoader:
        """A ``DataLoader`` yielding batched dicts, each batch gathered in one call.

        Uses a ``BatchSampler`` as sampler and ``batch_size=None``, so the dataset receives whole
        lists of positions; extra ``kwargs`` (``num_workers``, ``pin_memory`` ...) go to ``DataLoader``.
        """
        base = RandomSampler(self, generator=generator) if shuffle else SequentialSampler(self)
        sampler = BatchSampler(base, batch_size=batch_size, drop_last=drop_last)
        return DataLoader(self, sampler=sampler, batch_size=None, **kwargs)
