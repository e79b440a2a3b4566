"""The table of ``seasonal_fallback=True`` (:class:`~stgnn_diag.models.seasonal_fallback.SeasonalFallback`),
fitted on a protocol's training split; fitted at load for weights that leave it out; and the fallback switched
on for a model trained without it."""
from __future__ import annotations

import numpy as np

from ..baselines import fit_historical_median
from ..datasets import get_dataset, make_splits, recorded_dataset
from ..zoo import create_model


def seasonal_table(splits) -> np.ndarray:
    """The historical median of the training readings (weekday x slot x node median of the non-zero readings of
    steps ``[0, splits.fit_stop)``, pooled over ``baselines.MEDIAN_POOL`` slots either side:
    :func:`~stgnn_diag.baselines.fit_historical_median`), scaled like the model's inputs.

    Shapes: ``[7, slots_per_day, nodes]``."""
    data = splits.dataset
    table = fit_historical_median(data.speed64[:splits.fit_stop], data.timestamps[:splits.fit_stop])
    return splits.scaler.transform(table).astype(np.float32)


def scaler_differs(mean, std, splits) -> bool:
    """Whether ``splits``' scaler is not ``(mean, std)`` (numbers, arrays or tensors; relative tolerance 1e-5)."""
    got = np.asarray([splits.scaler.mean, splits.scaler.std], dtype=np.float64).reshape(2, -1)
    want = np.stack([np.asarray(v, dtype=np.float64).reshape(-1) for v in (mean, std)])
    return got.shape != want.shape or not np.allclose(got, want, rtol=1e-5)


def fit_fallback_table(model, splits=None, data_root=None):
    """Fit the seasonal table of ``model`` when its weights came without it (the shipped tags leave it out:
    their JSON lists it under ``fitted_at_load``); nothing to do for a model without the option or whose table
    is set. Returns ``model``.

    Args:
        model: a zoo model (``nn.Module``).
        splits: the splits of the data set and protocol the weights were trained under (their scaler must be
            the weights'); default: built from ``model.pretrained_cfg`` (data set, protocol, window, horizon)
            with the data found through ``data_root`` (then ``$STGNN_DIAG_DATA``, then ``datasets/``).
    """
    fallback = getattr(model, "fallback", None)
    if fallback is None or bool(fallback.fitted):
        return model
    cfg = getattr(model, "pretrained_cfg", None)
    if splits is None:
        if cfg is None:
            raise ValueError("The model carries no pretrained_cfg: give the splits of the data set and protocol its "
                             "weights were trained under (stgnn_diag.datasets.make_splits).")
        splits = make_splits(get_dataset(recorded_dataset(cfg), data_root, progress=False), cfg["protocol"],
                             window=cfg["inputs"]["window"], horizon=cfg["inputs"]["horizon"], max_windows=1)
    if cfg is not None and scaler_differs(cfg["inputs"]["scaler_mean"], cfg["inputs"]["scaler_std"], splits):
        raise ValueError(f"The data's scaler is not the one of {cfg['name']}.{cfg['tag']}: other data or another "
                         f"protocol than the weights were trained on (the table is in the weights' input units).")
    fallback.set_table(seasonal_table(splits))
    return model


def add_seasonal_fallback(module, splits):
    """Rebuild ``module.model`` (a :class:`~stgnn_diag.training.module.ForecastModule`'s, trained without the
    option) with ``seasonal_fallback=True``: the same weights, and the table fitted on ``splits``' training part.

    The fallback acts in evaluation mode only, so the weights are those that training with the option gives
    (validation does not steer training unless early stopping is on): the result is the model trained with it.
    Returns ``module``, changed in place."""
    model = module.model
    kwargs = dict(model.config["model_kwargs"])
    if kwargs.get("seasonal_fallback"):
        raise ValueError("The model already has its seasonal fallback.")
    new = create_model(model.config["name"], **{**kwargs, "seasonal_fallback": True})
    missing, unexpected = new.load_state_dict(model.state_dict(), strict=False)
    if unexpected or set(missing) != {"fallback.table", "fallback.fitted"}:
        raise ValueError(f"The weights do not fit the model with the fallback (missing {missing}, "
                         f"unexpected {unexpected}).")
    new.fallback.set_table(seasonal_table(splits))
    module.model = new.to(module.scaler_mean.device).train(module.training)
    module.hparams["model_kwargs"] = dict(new.config["model_kwargs"])  # a checkpoint saved now rebuilds this model
    return module
