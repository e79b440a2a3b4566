"""tsl's forecasting models behind our contract (the zoo's ``tsl:`` namespace).

``TSLModel("DCRNNModel", input_size=1, horizon=12, n_nodes=207, hidden_size=32, exog_size=0,
window=12, **extra)`` builds ``tsl.nn.models.DCRNNModel`` with our constructor names mapped to
its own (``window`` -> ``input_window_size`` / ``temporal_order``; ``n_nodes`` only where the model
has per-node parameters; ``hidden_size`` dropped by the linear AR / VAR models) and is called as
``model(x [b, t, n, f], edge_index, edge_weight=None, u=None) -> [b, horizon, n, out]``. Models
without a graph input ignore ``edge_index``; a SparseTensor ``adj_t`` is converted to
``(edge_index, edge_weight)`` with :func:`stgnn_diag.nn.as_edge_index` before it reaches tsl.

Checked with tsl 0.9.5 (see ``docs/ecosystem.md``): all 15 forecasting models of
``tsl.nn.models`` work here. ``STIDModel`` needs a work-around (it crashes in ``reset_parameters``
without exogenous embeddings); its covariates must be our calendar covariates (exog 1 or 8),
turned into STID's embedding indices. The imputation models (GRIN, SPIN, SPIN-H, (Bi)RNN imputer)
have no forecasting horizon and are not wrapped.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Optional

import torch
from torch import Tensor, nn

from ._require import require_tsl

require_tsl("stgnn_diag.integrations.tsl_models")

import tsl.nn.models as tsl_models  # noqa: E402

from ..nn import as_edge_index, check_edge_index  # noqa: E402
from .calendar_codes import CALENDAR_EXOG_SIZES, calendar_codes  # noqa: E402


@dataclass(frozen=True)
class TSLSpec:
    """How to build and call one tsl model.

    Attributes:
        kwargs: ``fn(input_size, output_size, horizon, n_nodes, hidden_size, exog_size, window)`` ->
            the tsl constructor's keyword arguments (before the user's extras).
        graph: whether the model reads ``edge_index`` (``"weighted"``: and ``edge_weight``).
        needs_n_nodes: the model has per-node parameters.
        fixed_window: the model is built for one input length.
        summary: one line for the zoo.
    """

    kwargs: Callable[..., dict]
    graph: str = "none"
    needs_n_nodes: bool = False
    fixed_window: bool = False
    summary: str = ""


def _common(i, o, h, n, d, e, w):
    return dict(input_size=i, output_size=o, horizon=h, exog_size=e, hidden_size=d)


TSL_SPECS: Dict[str, TSLSpec] = {
    "DCRNNModel": TSLSpec(lambda i, o, h, n, d, e, w: dict(_common(i, o, h, n, d, e, w), ff_size=2 * d),
                          "weighted", summary="DCRNN (Li et al., ICLR 2018): diffusion-conv GRU encoder + MLP."),
    "GraphWaveNetModel": TSLSpec(lambda i, o, h, n, d, e, w: dict(_common(i, o, h, n, d, e, w), ff_size=2 * d,
                                                                   n_nodes=n, learned_adjacency=n is not None),
                                 "weighted", summary="Graph WaveNet (Wu et al., IJCAI 2019); learned adjacency "
                                                     "when n_nodes is given."),
    "GatedGraphNetworkModel": TSLSpec(lambda i, o, h, n, d, e, w: dict(input_size=i, input_window_size=w, horizon=h,
                                                                        n_nodes=n, hidden_size=d, output_size=o,
                                                                        exog_size=e),
                                      "unweighted", needs_n_nodes=True, fixed_window=True,
                                      summary="Gated graph network (Satorras et al., 2022); tsl's default "
                                              "full_graph=True ignores the given graph."),
    "RNNEncGCNDecModel": TSLSpec(lambda i, o, h, n, d, e, w: dict(input_size=i, hidden_size=d, output_size=o,
                                                                   exog_size=e, rnn_layers=1, gcn_layers=2,
                                                                   rnn_dropout=0.0, gcn_dropout=0.0, horizon=h),
                                 "weighted", summary="RNN encoder + GCN decoder."),
    "STCNModel": TSLSpec(lambda i, o, h, n, d, e, w: dict(input_size=i, exog_size=e, hidden_size=d, ff_size=2 * d,
                                                          output_size=o, n_layers=2, horizon=h,
                                                          temporal_kernel_size=2, spatial_kernel_size=2),
                         "weighted", summary="Spatio-temporal convolutional network (TCN + diffusion conv)."),
    "EvolveGCNModel": TSLSpec(lambda i, o, h, n, d, e, w: dict(input_size=i, hidden_size=d, output_size=o, horizon=h,
                                                               exog_size=e, n_layers=1, norm="mean",
                                                               root_weight=True, cached=False),
                              "weighted", summary="EvolveGCN (Pareja et al., AAAI 2020)."),
    "GRUGCNModel": TSLSpec(lambda i, o, h, n, d, e, w: dict(input_size=i, hidden_size=d, output_size=o, horizon=h,
                                                            exog_size=e, enc_layers=1, gcn_layers=2),
                           "weighted", summary="GRU encoder + GCN (time-then-space)."),
    "AGCRNModel": TSLSpec(lambda i, o, h, n, d, e, w: dict(input_size=i, output_size=o, horizon=h, n_nodes=n,
                                                           hidden_size=d, exog_size=e),
                          needs_n_nodes=True, summary="AGCRN (Bai et al., NeurIPS 2020); learned graph only."),
    "RNNModel": TSLSpec(lambda i, o, h, n, d, e, w: dict(_common(i, o, h, n, d, e, w), ff_size=2 * d),
                        summary="Univariate GRU shared by all nodes (no graph)."),
    "FCRNNModel": TSLSpec(lambda i, o, h, n, d, e, w: dict(_common(i, o, h, n, d, e, w), ff_size=2 * d, n_nodes=n),
                          needs_n_nodes=True, summary="Fully connected GRU over all nodes' channels (no graph)."),
    "TCNModel": TSLSpec(lambda i, o, h, n, d, e, w: dict(_common(i, o, h, n, d, e, w), ff_size=2 * d),
                        summary="Temporal convolutional network per node (no graph)."),
    "TransformerModel": TSLSpec(lambda i, o, h, n, d, e, w: dict(_common(i, o, h, n, d, e, w), ff_size=2 * d),
                                summary="Transformer along time per node (no graph)."),
    "ARModel": TSLSpec(lambda i, o, h, n, d, e, w: dict(input_size=i, temporal_order=w, output_size=o, horizon=h,
                                                        exog_size=e),
                       fixed_window=True, summary="Linear autoregression of order `window` (hidden_size unused)."),
    "VARModel": TSLSpec(lambda i, o, h, n, d, e, w: dict(input_size=i, temporal_order=w, output_size=o, horizon=h,
                                                         n_nodes=n, exog_size=e),
                        needs_n_nodes=True, fixed_window=True,
                        summary="Vector autoregression of order `window` (hidden_size unused)."),
    "STIDModel": TSLSpec(lambda i, o, h, n, d, e, w: dict(input_size=i, n_nodes=n, window=w, horizon=h, output_size=o,
                                                          hidden_size=d),
                         needs_n_nodes=True, fixed_window=True,
                         summary="STID (Shao et al., CIKM 2022); exog must be our calendar covariates (1 or 8)."),
}

#: tsl models that are not wrapped, and why (tsl 0.9.5).
NOT_WRAPPED: Dict[str, str] = {
    "GRINModel": "imputation model: forward(x, edge_index, edge_weight, mask, u) returns imputations of the "
                 "input window, no forecasting horizon",
    "SPINModel": "imputation model (needs mask; returns imputations of the window)",
    "SPINHierarchicalModel": "imputation model (needs mask; returns imputations of the window)",
    "RNNImputerModel": "imputation model (needs mask)",
    "BiRNNImputerModel": "imputation model (needs mask)",
}


class TSLModel(nn.Module):
    """A ``tsl.nn.models`` forecaster behind the stgnn_diag / tsl forward contract.

    Args:
        model: name of the class in ``tsl.nn.models`` (a key of :data:`TSL_SPECS`).
        input_size, output_size, horizon, n_nodes, hidden_size, exog_size, window: our
            constructor arguments, mapped to the model's own (see the module docstring).
        steps_per_day: STID only: steps per day of the time-of-day code (288 = 5 minutes).
        **extra: passed to the tsl constructor as is (overrides the mapped arguments).

    Shapes:
        - x: ``[batch, window, nodes, input_size]``
        - edge_index: ``[2, E]`` (source, target) or SparseTensor ``adj_t``; edge_weight ``[E]``
        - u: ``[batch, window, exog_size]`` or ``[batch, window, nodes, exog_size]``
        - output: ``[batch, horizon, nodes, output_size]``
    """

    def __init__(self, model: str, input_size: int = 1, output_size: Optional[int] = None, horizon: int = 12,
                 n_nodes: Optional[int] = None, hidden_size: int = 32, exog_size: int = 0, window: int = 12,
                 steps_per_day: int = 288, **extra):
        super().__init__()
        if model not in TSL_SPECS:
            why = f" ({NOT_WRAPPED[model]})" if model in NOT_WRAPPED else ""
            raise ValueError(f"tsl model {model!r} is not wrapped{why}; available: {sorted(TSL_SPECS)}")
        spec = TSL_SPECS[model]
        if spec.needs_n_nodes and not n_nodes:
            raise ValueError(f"tsl's {model} has per-node parameters: pass n_nodes.")
        self.model_name, self.spec = model, spec
        self.input_size, self.output_size = input_size, output_size or input_size
        self.horizon, self.n_nodes, self.hidden_size = horizon, n_nodes, hidden_size
        self.exog_size, self.window, self.steps_per_day = exog_size, window, steps_per_day
        kwargs = spec.kwargs(input_size, self.output_size, horizon, n_nodes, hidden_size, exog_size, window)
        if model == "STIDModel":
            kwargs["n_exog_emb"] = self._stid_embeddings(exog_size, steps_per_day)
        kwargs.update(extra)
        self.model = getattr(tsl_models, model)(**kwargs)

    @staticmethod
    def _stid_embeddings(exog_size: int, steps_per_day: int) -> list:
        # tsl 0.9.5: n_exog_emb=None crashes in reset_parameters (self.exog_embs unset); [] works.
        if exog_size == 0:
            return []
        if exog_size not in CALENDAR_EXOG_SIZES:
            raise ValueError(f"STIDModel embeds calendar codes: exog_size must be 0, 1 (time of day) or "
                             f"8 (time of day + one-hot weekday), got {exog_size}.")
        return [steps_per_day] if exog_size == 1 else [steps_per_day, 7]

    def forward(self, x: Tensor, edge_index=None, edge_weight: Optional[Tensor] = None,
                u: Optional[Tensor] = None) -> Tensor:
        if not isinstance(x, Tensor) or x.dim() != 4:
            raise ValueError(f"x must be [batch, time, nodes, features], got "
                             f"{tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__}.")
        b, t, n, f = x.shape
        if f != self.input_size:
            raise ValueError(f"x has {f} features but the model was built with input_size={self.input_size}.")
        if self.spec.fixed_window and t != self.window:
            raise ValueError(f"x has {t} steps but tsl's {self.model_name} was built with window={self.window}.")
        if self.n_nodes is not None and n != self.n_nodes:
            raise ValueError(f"x has {n} nodes but the model was built with n_nodes={self.n_nodes}.")
        if (u is None) != (self.exog_size == 0):
            raise ValueError(f"the model was built with exog_size={self.exog_size} but u is "
                             f"{'missing' if u is None else tuple(u.shape)}.")
        args = {"x": x}
        if self.spec.graph != "none":
            if edge_index is None:
                raise ValueError(f"tsl's {self.model_name} needs edge_index.")
            edge_index, edge_weight = as_edge_index(edge_index, edge_weight)
            check_edge_index(edge_index, n, edge_weight)
            args["edge_index"] = edge_index
            if self.spec.graph == "weighted":
                args["edge_weight"] = edge_weight
        if u is not None:
            if self.model_name == "STIDModel":
                tod, dow = calendar_codes(u, self.steps_per_day)
                u = torch.stack([tod] if dow is None else [tod, dow], dim=-1)
            args["u"] = u
        return self.model(**args)

    def reset_parameters(self) -> None:
        for m in self.model.modules():
            if hasattr(m, "reset_parameters") and m is not self.model:
                m.reset_parameters()

    def __repr__(self) -> str:
        return (f"TSLModel({self.model_name}, input_size={self.input_size}, output_size={self.output_size}, "
                f"horizon={self.horizon}, hidden_size={self.hidden_size}, exog_size={self.exog_size})")


def build_tsl_model(name: str, **kwargs) -> TSLModel:
    """``TSLModel(name, **kwargs)``; ``name`` is a class of ``tsl.nn.models`` (see :data:`TSL_SPECS`)."""
    return TSLModel(name, **kwargs)
