"""Our zoo inside ``tsl.engines.Predictor``, and checkpoint loading that works on torch >= 2.6.

* :func:`make_predictor` builds a tsl ``Predictor`` for any zoo name (ours, ``tsl:``, ``pygt:``)
  with tsl's masked metrics (``MaskedMAE`` loss; MAE / MAPE / MSE, and MAE at 15 / 30 / 60 min).
  The model is built by :func:`zoo_model` from the Predictor's ``model_kwargs``, so the
  checkpoint's hyper-parameters are enough to rebuild it.
* tsl 0.9.5's ``Predictor.load_model`` calls ``torch.load(filename)``, which on torch >= 2.6 means
  ``weights_only=True`` and fails on the pickled hyper-parameters (model class, metric objects).
  :func:`load_checkpoint` loads a checkpoint with ``weights_only=True`` while allow-listing only the
  globals of trusted packages (stgnn_diag, tsl, torch, torchmetrics, ...); anything else is refused
  unless ``trusted=True`` (then ``weights_only=False``: only for files you made yourself).
  :func:`load_predictor` rebuilds a Predictor from a checkpoint and :func:`load_model_weights`
  replaces ``Predictor.load_model``.

Train with ``pytorch_lightning.Trainer`` (tsl's Predictor is a ``pytorch_lightning`` module, not a
``lightning.pytorch`` one)::

    import pytorch_lightning as pl
    dm = tsl_datamodule(root, covariates=None)
    predictor = make_predictor("tas_attn_mask", dict(n_nodes=207, hidden_size=32), lr=1e-3)
    pl.Trainer(max_epochs=1).fit(predictor, datamodule=dm)
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, Iterable, Mapping, Optional, Union

import torch
from torch import nn

from ._require import require_tsl

require_tsl("stgnn_diag.integrations.tsl_engine")

from tsl.engines import Predictor  # noqa: E402
from tsl.metrics.torch import MaskedMAE, MaskedMAPE, MaskedMSE  # noqa: E402

from ..training.safe_load import TRUSTED_PREFIXES, load_file  # noqa: E402,F401  (re-exported)
from ..training.seasonal import fit_fallback_table  # noqa: E402
from ..zoo import create_model  # noqa: E402


#: ``edge_convention=`` choices: where the connectivity a tsl batch carries comes from.
EDGE_CONVENTIONS = ("ours", "tsl")


class FromTslEdges(nn.Module):
    """A model of ours fed connectivity in tsl's dense-adjacency convention (``adj_to_edge_index`` /
    ``dataset.get_connectivity(layout="edge_index")``: ``adj[i, j]`` becomes the edge ``j -> i``): the rows of
    ``edge_index`` are swapped before the call, so messages run ``i -> j`` as in
    :mod:`stgnn_diag.datasets.graph` (a SparseTensor ``adj_t`` is transposed the same way).

    Shapes: those of the wrapped model (``x [b, t, n, f]`` -> ``[b, horizon, n, out]``).
    """

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model
        if hasattr(model, "config"):
            self.config = model.config

    def forward(self, x, edge_index, edge_weight=None, u=None, **kwargs):
        flipped = edge_index.flip(0) if isinstance(edge_index, torch.Tensor) and not edge_index.is_sparse \
            else edge_index.t()
        return self.model(x, flipped, edge_weight, u=u, **kwargs)


def zoo_model(name: str, edge_convention: str = "ours", **kwargs) -> nn.Module:
    """``stgnn_diag.create_model(name, **kwargs)``, usable as a tsl ``Predictor(model_class=...)``.

    ``edge_convention``: ``"ours"`` for connectivity from :func:`~stgnn_diag.integrations.tsl_data.tsl_datamodule`
    (``edge_index[0]`` = source ``i`` for ``adj[i, j] != 0``); ``"tsl"`` for connectivity made by tsl's own
    helpers from a dense adjacency (``adj_to_edge_index``, ``get_connectivity``), which point every edge the
    other way: the model is wrapped in :class:`FromTslEdges`.
    """
    if edge_convention not in EDGE_CONVENTIONS:
        raise ValueError(f"edge_convention must be one of {EDGE_CONVENTIONS}, got {edge_convention!r}.")
    model = create_model(name, **kwargs)
    if kwargs.get("pretrained"):  # a tag with seasonal_fallback ships without its table: fit it from its data set
        fit_fallback_table(model)
    return FromTslEdges(model) if edge_convention == "tsl" else model


def masked_metrics(horizon: int = 12, steps_per_hour: int = 12) -> Dict[str, object]:
    """tsl metrics: ``mae``, ``mape``, ``mse`` over all steps, plus ``mae_15min`` / ``mae_30min`` /
    ``mae_60min`` (steps 3 / 6 / 12 at 5-minute sampling) where the horizon reaches them.
    Missing targets (mask False) are ignored."""
    out = {"mae": MaskedMAE(), "mape": MaskedMAPE(), "mse": MaskedMSE()}
    for minutes in (15, 30, 60):
        step = minutes * steps_per_hour // 60
        if step <= horizon:
            out[f"mae_{minutes}min"] = MaskedMAE(at=step - 1)
    return out


def make_predictor(model: Union[str, type], model_kwargs: Optional[Mapping] = None, *, lr: float = 1e-3,
                   weight_decay: float = 0.0, loss_fn=None, metrics: Optional[Mapping] = None,
                   optim_class=torch.optim.Adam, scheduler_class=None, scheduler_kwargs: Optional[Mapping] = None,
                   scale_target: bool = False, edge_convention: str = "ours") -> Predictor:
    """A ``tsl.engines.Predictor`` for a zoo model (or any ``nn.Module`` class).

    Args:
        model: a zoo name (``"tas_attn_mask"``, ``"tsl:DCRNNModel"``, ``"pygt:ASTGCN"``) or a class.
        model_kwargs: overrides for the zoo entry (``n_nodes``, ``hidden_size``, ``exog_size`` ...);
            for a class, its constructor arguments.
        lr, weight_decay: Adam (or ``optim_class``) settings.
        loss_fn: default ``MaskedMAE()`` (tsl 0.9.5 needs a metric object here, not a function).
        metrics: default :func:`masked_metrics`.
        scale_target: tsl's option: compute the loss on scaled targets.
        edge_convention: ``"ours"`` (connectivity from ``tsl_datamodule``) or ``"tsl"`` (from tsl's
            ``adj_to_edge_index`` / ``get_connectivity``: reversed edges, flipped back; see :func:`zoo_model`).
    """
    kwargs = dict(model_kwargs or {})
    if isinstance(model, str):
        model_class, kwargs = zoo_model, {"name": model, "edge_convention": edge_convention, **kwargs}
        horizon = int(kwargs.get("horizon", 12))
    else:
        model_class, horizon = model, int(kwargs.get("horizon", 12))
    return Predictor(model_class=model_class, model_kwargs=kwargs, loss_fn=loss_fn or MaskedMAE(),
                     metrics=masked_metrics(horizon) if metrics is None else metrics,
                     optim_class=optim_class, optim_kwargs={"lr": lr, "weight_decay": weight_decay},
                     scheduler_class=scheduler_class, scheduler_kwargs=dict(scheduler_kwargs or {}),
                     scale_target=scale_target)


def load_checkpoint(path: Union[str, Path], map_location="cpu", *, trusted: bool = False,
                    extra_prefixes: Iterable[str] = ()) -> dict:
    """``torch.load`` a Lightning / tsl checkpoint on torch >= 2.6, through the package's one safe reader
    (:func:`stgnn_diag.training.safe_load.load_file`: ``weights_only=True``, classes of trusted packages
    only; ``trusted=True`` skips the check for a file you made)."""
    return load_file(path, map_location, trusted=trusted, extra_prefixes=extra_prefixes)


def load_predictor(path: Union[str, Path], map_location="cpu", *, trusted: bool = False,
                   extra_prefixes: Iterable[str] = ()) -> Predictor:
    """Rebuild a tsl ``Predictor`` (model included) from a checkpoint saved by Lightning.

    The route around ``Predictor.load_model`` / ``load_from_checkpoint`` on torch >= 2.6: the
    checkpoint is read by :func:`load_checkpoint`, the Predictor rebuilt from its hyper-parameters
    (``model_class`` / ``model_kwargs`` / optimizer / metrics), then the weights loaded strictly.
    """
    ckpt = load_checkpoint(path, map_location, trusted=trusted, extra_prefixes=extra_prefixes)
    hp = dict(ckpt["hyper_parameters"])
    hp.pop("model", None)
    loss_fn = hp.pop("loss_fn", None) or MaskedMAE()
    predictor = Predictor(loss_fn=loss_fn, **hp)
    predictor.load_state_dict(ckpt["state_dict"])
    predictor.eval()
    return predictor


def load_model_weights(predictor: Predictor, path: Union[str, Path], map_location="cpu", *,
                       trusted: bool = False, extra_prefixes: Iterable[str] = ()) -> Predictor:
    """``predictor.load_model(path)`` that works on torch >= 2.6 (same checks as tsl's: the model
    class and kwargs must match the checkpoint's when the predictor built its own model)."""
    ckpt = load_checkpoint(path, map_location, trusted=trusted, extra_prefixes=extra_prefixes)
    hp = ckpt.get("hyper_parameters", {})
    if predictor.model_cls is not None:
        if hp.get("model_class") != predictor.model_cls:
            raise ValueError(f"checkpoint model_class {hp.get('model_class')} != predictor's {predictor.model_cls}")
        for k, v in (hp.get("model_kwargs") or {}).items():
            if predictor.model_kwargs.get(k) != v:
                raise ValueError(f"checkpoint model_kwargs[{k!r}] = {v!r} != predictor's "
                                 f"{predictor.model_kwargs.get(k)!r}")
    predictor.load_state_dict(ckpt["state_dict"])
    return predictor
