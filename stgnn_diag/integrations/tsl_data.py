"""Our data sets as a tsl ``SpatioTemporalDataset`` / ``SpatioTemporalDataModule``, without tsl's download.

tsl's own ``tsl.datasets.MetrLA`` needs ``metr_la_dist.npy`` (DCRNN's raw road distances), which we
do not have; here the data come from :func:`stgnn_diag.datasets.get_dataset` and the graph is passed
to tsl as an explicit ``(edge_index, edge_weight)`` pair, so it keeps our convention
(``edge_index[0]`` = source ``i``, ``edge_index[1]`` = target ``j`` for ``adj[i, j] != 0``). Never
hand tsl the dense ``adj``: tsl's ``adj_to_edge_index`` transposes it (edge ``j -> i``), which on the
asymmetric DCRNN graphs reverses every directed edge. Use :func:`tsl_edge_index_to_ours` to
convert connectivity that came out of tsl's dense-adjacency helpers.

Example::

    from stgnn_diag.integrations.tsl_data import tsl_datamodule
    dm = tsl_datamodule("/path/to/data", protocol="dcrnn", batch_size=64)
    dm.setup()
    batch = next(iter(dm.train_dataloader()))   # batch.x [64, 12, 207, 1] scaled, batch.y in mph
"""
from __future__ import annotations

from typing import Optional, Union

import numpy as np
import torch
from torch import Tensor

from ._require import require_tsl

require_tsl("stgnn_diag.integrations.tsl_data")

from tsl.data import SpatioTemporalDataModule, SpatioTemporalDataset  # noqa: E402
from tsl.data.batch_map import BatchMapItem  # noqa: E402
from tsl.data.synch_mode import WINDOW  # noqa: E402
from tsl.data.datamodule.splitters import FixedIndicesSplitter  # noqa: E402
from tsl.data.preprocessing import StandardScaler as TSLStandardScaler  # noqa: E402

from ..datasets import DEFAULT_DATASET, SensorDataset, Splits, get_dataset, make_splits  # noqa: E402
from ..datasets.scaler import StandardScaler  # noqa: E402

#: ``covariates=`` choices: name -> number of channels of ``u``.
COVARIATES = {"calendar": 8, "tod": 1, None: 0}


class ProtocolScaler(TSLStandardScaler):
    """A tsl ``StandardScaler`` holding fixed statistics (fitting it again is a no-op).

    Lets a ``SpatioTemporalDataModule`` use our protocol's scaler (DCRNN: one global mean / std of
    the training inputs, zeros included; paper: per node) instead of refitting tsl's own.

    Shapes:
        bias / scale: ``[1, 1, 1]`` (global) or ``[1, nodes, 1]`` (per node), for data ``[t, n, f]``.
    """

    def __init__(self, mean, std):
        super().__init__(axis=(0, 1))
        mean, std = np.asarray(mean, dtype=np.float32), np.asarray(std, dtype=np.float32)
        shape = (1, 1, 1) if mean.ndim == 0 else (1, mean.shape[0], 1)
        self.bias = torch.from_numpy(mean.reshape(shape).copy())
        self.scale = torch.from_numpy(std.reshape(shape).copy())

    @classmethod
    def from_ours(cls, scaler: StandardScaler) -> "ProtocolScaler":
        """From a :class:`stgnn_diag.datasets.StandardScaler` (global or per node)."""
        return cls(scaler.mean, scaler.std)

    def fit(self, x, *args, **kwargs) -> "ProtocolScaler":
        return self


def _covariates(dataset, covariates: Optional[str]) -> Optional[np.ndarray]:
    if covariates not in COVARIATES:
        raise ValueError(f"covariates must be one of {list(COVARIATES)}, got {covariates!r}")
    if covariates is None:
        return None
    cov = np.asarray(dataset.covariates(), dtype=np.float32)  # [t, 8]: tod, one-hot weekday
    return cov if covariates == "calendar" else cov[:, :1]


def tsl_edge_index_to_ours(edge_index: Tensor) -> Tensor:
    """Connectivity from tsl's ``adj_to_edge_index(adj)`` (edge ``j -> i`` for ``adj[i, j]``) -> ours
    (``i -> j``): the rows swapped. ``edge_weight`` keeps its order."""
    return torch.as_tensor(edge_index).flip(0)


def to_tsl_dataset(dataset, *, window: int = 12, horizon: int = 12, covariates: Optional[str] = "calendar",
                   precision: int = 32, name: Optional[str] = None, input_mask: bool = False) -> SpatioTemporalDataset:
    """A ``tsl.data.SpatioTemporalDataset`` of our data: target, mask, connectivity and covariates.

    Args:
        dataset: a :class:`~stgnn_diag.datasets.SensorDataset` (or any object with ``speed [t, n]``,
            ``mask [t, n]``, ``edge_index``, ``edge_weight`` and ``covariates() [t, 8]``).
        window, horizon: input / predicted steps.
        covariates: ``"calendar"`` (``u [b, t, 8]``: time of day + one-hot weekday),
            ``"tod"`` (``u [b, t, 1]``, what ``paper_tas`` reads) or None (no ``u``).
        input_mask: also hand the model the mask of its inputs, ``x_mask [window, n, 1]`` (for a zoo
            forecaster built with ``input_mask=True``); tsl's ``mask`` stays the targets' mask.

    Returns:
        sample ``k`` has inputs at steps ``[k, k + window)`` and targets at
        ``[k + window, k + window + horizon)``: ``x [window, n, 1]`` (speed, mph until a scaler is
        set), ``y [horizon, n, 1]`` (mph), ``mask`` (``y != 0``), ``u``, ``edge_index [2, E]``
        (our direction), ``edge_weight [E]``.
    """
    speed = np.asarray(dataset.speed, dtype=np.float32)
    mask = np.asarray(dataset.mask, dtype=bool)
    cov = _covariates(dataset, covariates)
    edge_index = torch.as_tensor(dataset.edge_index).long()
    edge_weight = torch.as_tensor(dataset.edge_weight).float()
    ds = SpatioTemporalDataset(
        target=speed[..., None], mask=mask[..., None], connectivity=(edge_index, edge_weight),
        covariates=None if cov is None else {"u": (cov, "t f")}, window=window, horizon=horizon,
        precision=precision, name=name or getattr(dataset, "name", None))
    if input_mask:  # the window's slice of the same mask, under a name of its own
        ds.update_input_map(x_mask=BatchMapItem("mask", synch_mode=WINDOW, preprocess=False, cat_dim=None,
                                                pattern="t n f"))
    return ds


def protocol_splitter(splits: Splits) -> FixedIndicesSplitter:
    """A tsl splitter with exactly the windows of one of our :class:`~stgnn_diag.datasets.Splits`
    (tsl sample ``k`` is the window starting at step ``k``, so window starts are sample indices)."""
    return FixedIndicesSplitter(*(np.asarray(splits[s].starts, dtype=np.int64) for s in ("train", "val", "test")))


def tsl_datamodule(data: Union[SensorDataset, str, None] = None, *, dataset: str = DEFAULT_DATASET,
                   protocol: str = "dcrnn", window: int = 12,
                       horizon: int = 12, covariates: Optional[str] = "calendar", batch_size: int = 64,
                       scaler: str = "protocol", stride: int = 1, max_windows: Optional[int] = None,
                       workers: int = 0, pin_memory: bool = False, download: bool = False,
                       input_mask: bool = False) -> SpatioTemporalDataModule:
    """One of our data sets as a tsl ``SpatioTemporalDataModule`` in one call (no tsl download).

    Args:
        data: a loaded :class:`~stgnn_diag.datasets.SensorDataset` (``MetrLA``, ``PemsBay`` ...), or a data
            root for ``dataset`` (None: the default root, see :func:`~stgnn_diag.datasets.resolve_data_root`).
        dataset: the registered data set to load when ``data`` is a root (ignored for a loaded one).
        protocol: ``"dcrnn"`` or ``"paper"``: which windows go to train / val / test
            (:func:`~stgnn_diag.datasets.make_splits`).
        covariates: ``"calendar"``, ``"tod"`` or None (see :func:`to_tsl_dataset`).
        scaler: ``"protocol"``: the protocol's own scaler, so inputs equal those of
            ``make_splits`` (DCRNN: global statistics of the training inputs, zeros included);
            ``"tsl"``: tsl's ``StandardScaler(axis=(0, 1))`` fit by the datamodule on the training
            steps with missing values masked out.
        stride, max_windows: thin the windows of every split (quick runs); with
            ``scaler="protocol"`` the statistics are those of the full protocol.
        workers, pin_memory: DataLoader options.
        download: let the data set download missing files (when ``data`` is a root).
        input_mask: batches also carry ``x_mask`` (see :func:`to_tsl_dataset`).

    Returns:
        the datamodule; call ``setup()`` (Lightning's ``Trainer`` does) before using the loaders.
        ``dm.splits`` holds the :class:`~stgnn_diag.datasets.Splits` it was made from.
    """
    dataset = data if hasattr(data, "speed") else get_dataset(dataset, data, download=download)
    splits = make_splits(dataset, protocol, window, horizon, stride=stride, max_windows=max_windows)
    tsl_ds = to_tsl_dataset(dataset, window=window, horizon=horizon, covariates=covariates, input_mask=input_mask)
    if scaler == "protocol":
        scalers = {"target": ProtocolScaler.from_ours(splits.scaler)}
    elif scaler == "tsl":
        scalers = {"target": TSLStandardScaler(axis=(0, 1))}
    else:
        raise ValueError(f"scaler must be 'protocol' or 'tsl', got {scaler!r}")
    dm = SpatioTemporalDataModule(tsl_ds, scalers=scalers, mask_scaling=True, splitter=protocol_splitter(splits),
                                  batch_size=batch_size, workers=workers, pin_memory=pin_memory)
    dm.splits = splits
    return dm

