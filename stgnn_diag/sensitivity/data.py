"""One window of a data set for the sensitivity tools, and the covariates a model expects."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from torch import Tensor, nn

from ..datasets import DEFAULT_DATASET, get_dataset, make_splits


@dataclass
class Window:
    """One window of a data set split.

    Attributes:
        x: ``[T, N, 1]`` scaled speed; u: ``[T, 8]`` time of day + one-hot weekday.
        edge_index: ``[2, E]`` (source, target); edge_weight: ``[E]``.
        index, split, protocol: which window; n_windows: windows in the split; dataset: the data set's name.
        x_mask: ``[T, N, 1]`` bool, the observed readings of ``x`` (a reading of 0 mph is missing), for a
            model built with ``input_mask=True``.
    """

    x: Tensor
    u: Tensor
    edge_index: Tensor
    edge_weight: Tensor
    index: int
    split: str
    protocol: str
    n_windows: int
    dataset: str = DEFAULT_DATASET
    x_mask: Optional[Tensor] = None

    @property
    def n_nodes(self) -> int:
        return self.x.shape[1]


def check_window_index(index: int, n_windows: int, split: str = "test") -> int:
    """Return ``index`` (negative counts from the end) or raise ``IndexError`` naming the valid range."""
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError(f"window index must be an integer, got {index!r}.")
    if not -n_windows <= index < n_windows:
        raise IndexError(f"window {index} is out of range: the {split} split has {n_windows} windows "
                         f"(valid indices 0 .. {n_windows - 1}, or negative from the end).")
    return index % n_windows


def load_dataset(name: str = DEFAULT_DATASET, root=None):
    """The data set ``name`` from ``root`` (no download, no progress bar): what the sensitivity tools read."""
    return get_dataset(name, root, download=False, progress=False)


def dataset_window(index: int = 0, split: str = "test", root=None, protocol: str = "dcrnn",
                   dataset=DEFAULT_DATASET, window: int = 12, align_window: Optional[int] = None) -> Window:
    """Window ``index`` of a data set split (``window`` steps in, 12 out).

    Args:
        index: window position in the split (negative counts from the end).
        split: ``"train"``, ``"val"`` or ``"test"``.
        root: data root (default ``$STGNN_DIAG_DATA``, then the repository's ``datasets/``).
        protocol: ``"dcrnn"`` (canonical) or ``"paper"``.
        dataset: a registered data set name, or an already loaded
            :class:`~stgnn_diag.datasets.SensorDataset` (skips loading).
        window: input steps; align_window: cut the split as for inputs of this length
            (:func:`~stgnn_diag.datasets.make_splits`), so windows of any length end at the same steps.

    Raises:
        IndexError: ``index`` is outside the split.
    """
    ds = dataset if hasattr(dataset, "speed") else get_dataset(dataset, root, download=False, progress=False)
    splits = make_splits(ds, protocol, window=window, align_window=align_window)
    part = splits[split]
    i = check_window_index(index, len(part), split)
    w = part[i]
    return Window(w["x"], w["u"], ds.edge_index, ds.edge_weight, i, split, protocol, len(part),
                  getattr(ds, "key", DEFAULT_DATASET), w["x_mask"])


def exog_for(model: nn.Module, u: Optional[Tensor]) -> Optional[Tensor]:
    """The covariates ``model`` takes: the first ``model.exog_size`` channels of ``u`` (time of day
    first, then the weekday one-hot), or None for a model without covariates."""
    k = int(getattr(model, "exog_size", 0) or 0)
    if k == 0 or u is None:
        return None
    if u.shape[-1] < k:
        raise ValueError(f"the model takes {k} covariate channels but the window has {u.shape[-1]}.")
    return u[..., :k]
