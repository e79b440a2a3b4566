"""Scoring: test-set metrics of a :class:`~stgnn_diag.training.predictor.Predictor` under the canonical protocol,
and :func:`evaluate`, which loads one and scores it."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
from tqdm.auto import tqdm

from ..baselines import baseline_predict
from ..datasets import WindowDataset
from ..metrics import default_steps, horizon_metrics, horizon_sums, metrics_from_sums
from .malloc import keep_freed_memory
from .predictor import CheckpointError, Predictor, check_scaler, load_predictor, predictor_splits  # noqa: F401
from .seasonal import fit_fallback_table


def scoring_batch_size(device: Union[str, torch.device]) -> int:
    """Windows per forward pass when scoring a split: 32 on the CPU, 128 on an accelerator.

    On the CPU the forward pass is compute-bound once its activations stay below glibc's 32 MiB mmap
    threshold (see :mod:`~stgnn_diag.training.malloc`); at batch 64 the T&S forecaster's feed-forward
    activations ``[64, 12, 207, 64]`` are 40 MiB and are mapped and faulted in again on every batch, so
    larger CPU batches score fewer windows per second.
    """
    return 32 if torch.device(device).type == "cpu" else 128


@torch.no_grad()
def predict_split(module, splits, split: str = "test", batch_size: Optional[int] = None,
                  progress: bool = True) -> np.ndarray:
    """Predictions in mph of a :class:`ForecastModule` on one split, ``batch_size`` windows at a time
    (default: :func:`scoring_batch_size` of the module's device).

    Shapes:
        returns ``[windows, horizon, nodes]`` float32.
    """
    return np.concatenate([pred for pred, _ in _forecasts(module, splits[split], batch_size, progress,
                                                          f"predict {split}")])


def _forecasts(module, ds: WindowDataset, batch_size: Optional[int], progress: bool, desc: str,
               part: Tuple[int, int] = (0, 1)):
    """``(prediction [b, horizon, nodes] float32 numpy, batch)`` for the windows of ``ds`` in order, ``batch_size``
    at a time (default: :func:`scoring_batch_size`), on the ``part[0]``-th of ``part[1]`` contiguous parts; the
    module in evaluation mode meanwhile."""
    keep_freed_memory()
    dev = module.scaler_mean.device
    batch_size = scoring_batch_size(dev) if batch_size is None else batch_size
    rank, world = part
    lo, hi = len(ds) * rank // world, len(ds) * (rank + 1) // world
    was_training = module.training
    module.eval()
    try:
        for s in tqdm(range(lo, hi, batch_size), desc=desc, disable=not progress, leave=False):
            batch = ds[slice(s, min(s + batch_size, hi))]
            x_mask = batch.get("x_mask")
            pred = module(batch["x"].to(dev), batch["u"].to(dev), None if x_mask is None else x_mask.to(dev))
            yield pred[..., 0].float().cpu().numpy(), batch
    finally:
        module.train(was_training)


@torch.no_grad()
def score_split(module, splits, split: str = "test", steps: Optional[Sequence[int]] = None,
                batch_size: Optional[int] = None, progress: bool = True,
                shard: Optional[Tuple[int, int]] = None) -> Dict[str, float]:
    """:func:`score` of :func:`predict_split`, a batch at a time: the predictions and targets of the split are never
    held whole (a year of a LargeST-size graph would not fit in memory), only their per-step sums
    (:func:`~stgnn_diag.metrics.horizon_sums`). The same metrics up to float64 summation order.

    ``shard=(rank, world_size)``: score the ``rank``-th of ``world_size`` contiguous parts of the split and add the
    sums up across the processes of the initialised ``torch.distributed`` group (every rank gets the metrics of
    the whole split): a large test split scored in parallel."""
    ds: WindowDataset = splits[split]
    rank, world = shard or (0, 1)
    sums = np.zeros((4, ds.horizon))
    for pred, batch in _forecasts(module, ds, batch_size, progress, f"score {split}", (rank, world)):
        sums += horizon_sums(pred, batch["y"][..., 0].numpy())
    if world > 1:
        total = torch.from_numpy(sums).to(module.scaler_mean.device)  # float64, where the group's backend serves
        torch.distributed.all_reduce(total)
        sums = total.cpu().numpy()
    return metrics_from_sums(sums, tuple(default_steps(ds.horizon) if steps is None else steps))


def score(pred: np.ndarray, ds: WindowDataset, horizon: int, steps: Optional[Sequence[int]] = None
          ) -> Dict[str, float]:
    """Masked MAE / RMSE / MAPE at ``steps`` (default: the protocol's) and pooled (``mae@3`` ... ``mae@avg``)."""
    return horizon_metrics(pred, ds.targets(), steps=default_steps(horizon) if steps is None else steps)


#: A predicted step whose standard deviation over windows and nodes is below this (mph) is constant.
CONSTANT_STD = 1e-4


def constant_steps(pred: np.ndarray) -> List[int]:
    """1-based steps at which ``pred [windows, horizon, nodes]`` is one constant for every window and node.

    A trained model that does this has stopped using its input for that step, e.g. a read-out whose ReLU
    units are all inactive for it (no gradient reaches them, so training cannot bring the step back). The
    fixed steps of a metric table (3 / 6 / 12) can hide such a step; the pooled ``@avg`` column shows it.
    """
    # per step, over windows and nodes; accumulated in float64 (a float32 std of 10^5-10^6 equal values is ~0.04)
    std = np.moveaxis(pred, 1, 0).reshape(pred.shape[1], -1).std(axis=1, dtype=np.float64)
    return [int(i) + 1 for i in np.flatnonzero(std < CONSTANT_STD)]


def score_predictor(predictor: Predictor, splits, split: str = "test", *, batch_size: Optional[int] = None,
                    progress: bool = True, steps: Optional[Union[Sequence[int], str]] = None,
                    save_predictions: Optional[Union[str, Path]] = None) -> Dict[str, Any]:
    """Metrics of ``predictor`` on ``split`` of ``splits`` (see :func:`evaluate` for the result)."""
    module = predictor.module
    if module is not None:
        check_scaler(module, splits)
        fit_fallback_table(module.model, splits)  # shipped weights leave the seasonal table out
    if predictor.shipped:  # the shipped weights carry no graph: the data set's
        module.edge_index = splits.edge_index.clone()
        module.edge_weight = None if splits.edge_weight is None else splits.edge_weight.clone().float()
    if module is not None:
        pred = predict_split(module, splits, split, batch_size=batch_size, progress=progress)
    else:
        pred = baseline_predict(predictor.name, splits, split)
    if save_predictions is not None:
        np.savez_compressed(save_predictions, predictions=pred, window_starts=splits[split].starts,
                            model=predictor.name, split=split, protocol=predictor.protocol, dataset=predictor.dataset)
    horizon = predictor.horizon
    return {"model": predictor.name, "pretrained": predictor.pretrained, "dataset": predictor.dataset,
            "protocol": predictor.protocol, "horizon": horizon, "window": predictor.window,
            "align_window": predictor.align_window, "split": split, "windows": int(len(splits[split])),
            "metrics": score(pred, splits[split], horizon, range(1, horizon + 1) if steps == "all" else steps),
            "constant_steps": constant_steps(pred) if module is not None else []}


def evaluate(model: Optional[str] = None, checkpoint: Optional[Union[str, Path]] = None, *,
             data_root=None, dataset: Optional[str] = None, protocol: Optional[str] = None, horizon: Optional[int] = None,
             window: Optional[int] = None, split: str = "test", max_windows: Optional[int] = None,
             align_window: Optional[int] = None,
             batch_size: Optional[int] = None, progress: bool = True, splits=None,
             steps: Optional[Union[Sequence[int], str]] = None, pretrained: Union[bool, str] = False,
             save_predictions: Optional[Union[str, Path]] = None) -> Dict[str, Any]:
    """Metrics of a baseline (``model`` in ``BASELINES``), a checkpoint or a zoo entry's shipped weights on
    ``split``: :func:`load_predictor`, then :func:`score_predictor` on the splits it needs (or ``splits``).

    For trained weights the data set, protocol, window, horizon and ``align_window`` default to the ones they were
    trained with; asking for another horizon or window raises :class:`CheckpointError`. A baseline reads
    ``window`` steps (12 by default); ``align_window``: score on the target windows of that input length
    (:func:`~stgnn_diag.datasets.make_splits`), the same at every window. ``steps``: 1-based steps to score
    (default: the protocol's 3 / 6 / 12 [/ 24 / 36]; ``"all"``: every step); the result's ``constant_steps``
    lists the steps whose prediction is one constant (see :func:`constant_steps`). ``save_predictions``: write
    ``predictions [windows, horizon, nodes]`` (mph) and ``window_starts`` (index of each window's first input
    step in the data set) to an ``.npz`` file.
    """
    predictor = load_predictor(model, checkpoint, pretrained=pretrained, dataset=dataset, protocol=protocol,
                               horizon=horizon, window=window, align_window=align_window)
    if splits is None:
        splits = predictor_splits(predictor, data_root, max_windows, progress)
    result = score_predictor(predictor, splits, split, batch_size=batch_size, progress=progress, steps=steps,
                             save_predictions=save_predictions)
    result["checkpoint"] = str(checkpoint) if checkpoint else None
    return result
