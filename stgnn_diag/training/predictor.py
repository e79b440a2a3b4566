"""What gets scored: a :class:`Predictor` (a baseline, a checkpoint or a zoo entry's shipped weights) and the splits
it must be scored on, with the checks that the data is the data its weights were trained on."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional, Union

import numpy as np

from ..baselines import BASELINES
from ..datasets import DEFAULT_DATASET, get_dataset, make_splits, recorded_dataset
from .malloc import keep_freed_memory
from .safe_load import CheckpointReadError, UnsafeCheckpointError, load_file
from .seasonal import scaler_differs


class CheckpointError(ValueError):
    """A checkpoint that cannot be used as asked (other model, other shape, other horizon ...)."""


def load_checkpoint(path: Union[str, Path], model: Optional[str] = None):
    """Rebuild the :class:`ForecastModule` stored in one of our checkpoints.

    Raises :class:`CheckpointError` when ``model`` names another model than the checkpoint's,
    or when the weights do not fit the model the checkpoint describes. The file is read by :func:`~stgnn_diag.training.safe_load.load_file` (``weights_only=True``,
    explicit allow-list): a file that would run code is refused with :class:`CheckpointError`.
    """
    from ..zoo.pretrained import check_finite_state
    from .module import ForecastModule, saved_hparams

    path = Path(path)
    try:
        ckpt = load_file(path)
    except (CheckpointReadError, UnsafeCheckpointError) as e:  # corrupt / truncated / would run code
        raise CheckpointError(str(e)) from e
    hp = ckpt.get("hyper_parameters", {}) if isinstance(ckpt, dict) else {}
    if "model_name" not in hp:
        raise CheckpointError(f"{path} is not a stgnn_diag training checkpoint (no model_name in it).")
    if model is not None and model != hp["model_name"]:
        raise CheckpointError(f"{path} holds a {hp['model_name']!r} model, not {model!r}.")
    check_run_folder(path, hp)
    state = ckpt["state_dict"]
    check_finite_state(state, path, CheckpointError)
    try:
        module = ForecastModule(**saved_hparams(hp))
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{path} describes a model that cannot be built: {e}") from e
    module.on_load_checkpoint(ckpt)
    try:
        module.load_state_dict(state)
    except RuntimeError as e:
        raise CheckpointError(f"The weights in {path} do not fit {hp['model_name']} with {hp['model_kwargs']}: "
                              f"{str(e).splitlines()[0]}") from e
    return module.eval()


def check_run_folder(path: Path, hp: Dict[str, Any]) -> None:
    """A checkpoint inside a run folder (``<run>/checkpoints/x.ckpt``) must be that run's: the same model,
    arguments and protocol as ``<run>/config.json`` (a file copied or relabelled into another run is refused)."""
    import json

    from .run_dir import CHECKPOINTS, CONFIG_JSON

    config_path = path.parent.parent / CONFIG_JSON
    if path.parent.name != CHECKPOINTS or not config_path.is_file():
        return
    try:
        config = json.loads(config_path.read_text())
    except ValueError:
        return
    run = {"model": config.get("model"), "protocol": config.get("protocol"), "horizon": config.get("horizon")}
    ckpt = {"model": hp.get("model_name"), "protocol": hp.get("protocol"), "horizon": hp.get("horizon")}
    diff = {k: (run[k], ckpt[k]) for k in run if run[k] is not None and run[k] != ckpt[k]}
    overrides = config.get("model_overrides") or {}
    diff.update({f"model_overrides.{k}": (v, hp["model_kwargs"].get(k)) for k, v in overrides.items()
                 if k in hp.get("model_kwargs", {}) and hp["model_kwargs"][k] != v})
    if diff:
        said = "; ".join(f"{k}: run {a!r}, checkpoint {b!r}" for k, (a, b) in diff.items())
        raise CheckpointError(f"{path} is not the checkpoint of the run in {path.parent.parent} ({said}): a file "
                              f"copied or renamed into another run's folder.")


def pretrained_module(name: str, tag: Union[bool, str] = True):
    """A :class:`ForecastModule` around the shipped weights of zoo entry ``name`` (see
    :mod:`stgnn_diag.zoo.pretrained`), with the scaler, graph convention and covariates they were trained with."""
    from ..zoo.pretrained import pretrained_cfg
    from .budgets import BUDGETS
    from .module import ForecastModule

    cfg = pretrained_cfg(name, tag)
    inp = cfg["inputs"]
    budget = BUDGETS.get(cfg["budget"], BUDGETS["cpu-15min"])  # only the optimiser settings: not used to score
    # the shipped weights carry no graph: evaluate() takes the data set's once the splits are loaded
    module = ForecastModule(name, cfg["model_kwargs"], inp["scaler_mean"], inp["scaler_std"], budget,
                            covariates=inp["covariates"], pretrained=cfg["tag"], protocol=cfg["protocol"],
                            dataset=recorded_dataset(cfg),
                            window=inp["window"], horizon=inp["horizon"], seed=cfg["seed"])
    return module.eval()


def check_scaler(module, splits) -> None:
    """Refuse data whose scaler is not the one the weights were trained with (another data set or protocol)."""
    if scaler_differs(module.scaler_mean.cpu(), module.scaler_std.cpu(), splits):
        raise CheckpointError("The data's scaler differs from the one the weights were trained with "
                              f"({[module.scaler_mean.flatten()[0].item(), module.scaler_std.flatten()[0].item()]} vs "
                              f"{[float(np.ravel(splits.scaler.mean)[0]), float(np.ravel(splits.scaler.std)[0])]}): "
                              f"another data set or protocol.")


@dataclass
class Predictor:
    """What makes forecasts to be scored, and the data it must be scored on.

    Attributes:
        name: the zoo entry or baseline name.
        module: the :class:`~stgnn_diag.training.module.ForecastModule` of trained weights, or None for a baseline.
        dataset, protocol, horizon, window, align_window: the data set and the splits: for trained weights the
            ones they were trained with (their scaler), for a baseline the ones asked.
        pretrained: the shipped weights' tag, or None; shipped: whether the weights are a zoo entry's shipped ones
            (they carry no graph: the data set's is used).
    """

    name: str
    module: Any
    dataset: str
    protocol: str
    horizon: int
    window: int
    align_window: Optional[int] = None
    pretrained: Optional[str] = None
    shipped: bool = False


def load_predictor(model: Optional[str] = None, checkpoint: Optional[Union[str, Path]] = None, *,
                   pretrained: Union[bool, str] = False, dataset: Optional[str] = None, protocol: Optional[str] = None,
                   horizon: Optional[int] = None, window: Optional[int] = None,
                   align_window: Optional[int] = None) -> Predictor:
    """The :class:`Predictor` of a baseline (``model`` in ``BASELINES``), a checkpoint, or a zoo entry's shipped
    weights (``pretrained``: ``True`` or a tag, with ``model`` its name).

    Trained weights fix the data set, protocol (scaler), horizon and window they were trained with: asking for
    others raises :class:`CheckpointError`; ``align_window`` defaults to theirs.
    """
    if checkpoint is None and model is None:
        raise ValueError("Give a baseline name (model) or a checkpoint.")
    module = None
    if pretrained:
        if checkpoint is not None:
            raise ValueError("Give --pretrained or --checkpoint, not both.")
        module = pretrained_module(model, pretrained)
    elif checkpoint is not None:
        module = load_checkpoint(checkpoint, model)
    if module is None:
        if model not in BASELINES:
            raise ValueError(f"{model!r} is not a baseline ({sorted(BASELINES)}); evaluate a trained model "
                             f"with --checkpoint PATH, or a zoo entry's shipped weights with --pretrained.")
        return Predictor(model, None, dataset or DEFAULT_DATASET, protocol or "dcrnn", horizon or 12, window or 12,
                         align_window)
    hp = module.hparams
    trained_on = recorded_dataset(hp)
    if dataset is not None and dataset != trained_on:
        raise CheckpointError(f"The weights were trained on data set {trained_on!r}; evaluate them there, "
                              f"not on {dataset!r} (another graph, another scaler).")
    if protocol is not None and protocol != hp["protocol"]:
        raise CheckpointError(f"The weights were trained under protocol {hp['protocol']!r} (its scaler); "
                              f"evaluate them there, not under {protocol!r}.")
    if horizon is not None and horizon != hp["horizon"]:
        raise CheckpointError(f"The model predicts {hp['horizon']} steps; it cannot be evaluated at "
                              f"horizon {horizon}.")
    if window is not None and window != hp["window"]:
        raise CheckpointError(f"The model reads {hp['window']} input steps; it cannot be evaluated on "
                              f"windows of {window}.")
    return Predictor(hp["model_name"], module, trained_on, hp["protocol"], hp["horizon"], hp["window"],
                     align_window if align_window is not None else hp.get("align_window"),
                     hp.get("pretrained") if pretrained else None, shipped=bool(pretrained))


def predictor_splits(predictor: Predictor, data_root=None, max_windows: Optional[int] = None,
                     progress: bool = True):
    """The :class:`~stgnn_diag.datasets.Splits` ``predictor`` is scored on."""
    keep_freed_memory()  # before the data set is read (its arrays are large)
    return make_splits(get_dataset(predictor.dataset, data_root, progress=progress), predictor.protocol,
                       window=predictor.window, horizon=predictor.horizon, max_windows=max_windows,
                       align_window=predictor.align_window)
