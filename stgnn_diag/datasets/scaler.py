"""A z-score scaler that works on numpy arrays and torch tensors."""
from __future__ import annotations

from typing import Optional, Union

import numpy as np
import torch
from torch import Tensor

Array = Union[np.ndarray, Tensor]


class StandardScaler:
    r"""``(x - mean) / std`` with a global (scalar) or per-node mean / std.

    Statistics are float64. A zero std (constant node) is replaced by 1, as scikit-learn does.

    Args:
        mean: scalar or ``[nodes]``.
        std: scalar or ``[nodes]``.

    Shapes:
        x: ``[..., nodes]`` or ``[..., nodes, 1]`` (per-node statistics are aligned on the node
        axis; scalar statistics broadcast to anything). Output has the shape of ``x``.
    """

    def __init__(self, mean, std) -> None:
        self.mean = np.asarray(mean, dtype=np.float64)
        std = np.asarray(std, dtype=np.float64)
        self.std = np.where(std == 0, 1.0, std)
        if self.mean.shape != self.std.shape or self.mean.ndim > 1:
            raise ValueError(f"mean {self.mean.shape} and std {self.std.shape} must be scalars or equal [nodes]")

    @classmethod
    def fit(cls, x: np.ndarray, axis=None, weights: Optional[np.ndarray] = None) -> "StandardScaler":
        """Fit on ``x`` (population std, ``ddof=0``), optionally with a weight per time step.

        Args:
            x: ``[time, nodes]`` values (float64 recommended).
            axis: ``None`` for one global mean / std, ``0`` for one per node.
            weights: ``[time]`` non-negative multiplicities (a value counted ``w`` times).
        """
        if isinstance(x, np.memmap):  # a file larger than memory: never a float64 copy of it
            return cls._fit_blocks(x, axis, weights)
        x = np.asarray(x, dtype=np.float64)
        if weights is None:
            return cls(x.mean(axis=axis), x.std(axis=axis))
        w = np.broadcast_to(np.asarray(weights, dtype=np.float64)[:, None], x.shape)
        mean = (w * x).sum(axis=axis) / w.sum(axis=axis)
        var = (w * np.square(x - mean)).sum(axis=axis) / w.sum(axis=axis)
        return cls(mean, np.sqrt(var))

    @classmethod
    def _fit_blocks(cls, x: np.ndarray, axis, weights: Optional[np.ndarray], rows: int = 4096) -> "StandardScaler":
        """:meth:`fit` over blocks of ``rows`` time steps (two passes: the mean, then the squared deviations), in
        float64; equal to the one-pass fit up to summation order."""
        t = x.shape[0]
        w = np.ones(t) if weights is None else np.asarray(weights, dtype=np.float64)
        total = w.sum() * (x.shape[1] if axis is None else 1)
        blocks = [(a, min(a + rows, t)) for a in range(0, t, rows)]
        mean = sum((w[a:b, None] * np.asarray(x[a:b], dtype=np.float64)).sum(axis=axis) for a, b in blocks) / total
        var = sum((w[a:b, None] * np.square(np.asarray(x[a:b], dtype=np.float64) - mean)).sum(axis=axis)
                  for a, b in blocks) / total
        return cls(mean, np.sqrt(var))

    @property
    def per_node(self) -> bool:
        """Whether the statistics are per node (``[nodes]``) rather than global."""
        return self.mean.ndim == 1

    def _stats(self, x: Array):
        mean, std = self.mean, self.std
        if self.per_node and x.ndim >= 2 and x.shape[-1] == 1 and x.shape[-2] == mean.shape[0] != 1:
            mean, std = mean[:, None], std[:, None]
        if isinstance(x, Tensor):
            dtype = x.dtype if x.is_floating_point() else torch.float32
            return (torch.as_tensor(mean, dtype=dtype, device=x.device),
                    torch.as_tensor(std, dtype=dtype, device=x.device))
        dtype = x.dtype if np.issubdtype(np.asarray(x).dtype, np.floating) else np.float64
        return mean.astype(dtype), std.astype(dtype)

    def transform(self, x: Array) -> Array:
        """Scale ``x`` (numpy or torch, dtype and device kept)."""
        mean, std = self._stats(x)
        return (x - mean) / std

    def inverse_transform(self, x: Array) -> Array:
        """Undo :meth:`transform`: ``x * std + mean``."""
        mean, std = self._stats(x)
        return x * std + mean

    def __repr__(self) -> str:
        if self.per_node:
            return f"StandardScaler(per_node, nodes={self.mean.shape[0]})"
        return f"StandardScaler(mean={float(self.mean):.6f}, std={float(self.std):.6f})"
