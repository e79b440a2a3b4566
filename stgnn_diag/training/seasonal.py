"""The table of ``seasonal_fallback=True`` (:class:`~stgnn_diag.models.seasonal_fallback.SeasonalFallback`),
fitted on a protocol's training split, and the fallback switched on for a model trained without it."""
from __future__ import annotations

import numpy as np

from ..baselines import fit_historical_average
from ..zoo import create_model


def seasonal_table(splits) -> np.ndarray:
    """The historical average of the training readings (weekday x slot x node mean of the non-zero readings of
    steps ``[0, splits.fit_stop)``, :func:`~stgnn_diag.baselines.fit_historical_average`), scaled like the
    model's inputs.

    Shapes: ``[7, slots_per_day, nodes]``."""
    data = splits.dataset
    table = fit_historical_average(data.speed64[:splits.fit_stop], data.timestamps[:splits.fit_stop])
    return splits.scaler.transform(table).astype(np.float32)


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
