"""Input checks shared by the models of the tsl contract (``x [b, t, n, f]``, graph, covariates ``u``)."""
from __future__ import annotations

from typing import Dict, Optional, Tuple

import torch
from torch import Tensor

from .._tensor_checks import cheap_to_check, check_finite
from ..nn import as_edge_index, check_edge_index
from .layout_hint import layout_hint


def check_inputs(model, x: Tensor, edge_index, edge_weight: Optional[Tensor], u: Optional[Tensor], *,
                 fixed_window: bool = True) -> Tuple[Tensor, Optional[Tensor], Optional[Tensor]]:
    """Validate a forward call against ``model``'s ``input_size``, ``window`` (unless ``fixed_window=False``: a
    model that reads any number of steps), ``n_nodes`` and ``exog_size``.

    Returns ``(edge_index [2, E], edge_weight [E] or None, u [b, t, n, exog] or None)``; raises
    ``TypeError`` / ``ValueError`` naming what to fix.
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}.")
    if x.dim() != 4:
        raise ValueError(f"x must have shape [batch, time, nodes, features], got {tuple(x.shape)}; "
                         f"for a single window use x.unsqueeze(0), for one feature x.unsqueeze(-1).")
    b, t, n, f = x.shape
    if f != model.input_size or (fixed_window and t != model.window):
        hint = layout_hint(tuple(x.shape), model)
        if f != model.input_size:
            raise ValueError(f"x has {f} features per node but the model was built with "
                             f"input_size={model.input_size}.{hint}")
        raise ValueError(f"x has {t} time steps but the model was built with window={model.window}.{hint}")
    if model.n_nodes is not None and n != model.n_nodes:
        raise ValueError(f"x has {n} nodes but the model was built with n_nodes={model.n_nodes}.")
    param = next(model.parameters(), None)
    if param is not None and x.dtype != param.dtype:
        raise TypeError(f"x is {x.dtype} but the model's weights are {param.dtype}: pass x.to({param.dtype}) or "
                        f"convert the model (model.to({x.dtype})).")
    check_finite(x, "x")
    edge_index, edge_weight = as_edge_index(edge_index, edge_weight)
    check_edge_index(edge_index, n, edge_weight)
    if edge_weight is not None:
        check_finite(edge_weight, "edge_weight", "every edge needs a finite weight (drop the edge, or give it "
                                                 "weight 0, where the adjacency it came from has none)")
    if model.exog_size == 0:
        if u is not None:
            raise ValueError("u was given but the model was built with exog_size=0; "
                             "build it with exog_size=u.shape[-1].")
        return edge_index, edge_weight, None
    if u is None:
        raise ValueError(f"The model was built with exog_size={model.exog_size}; pass u "
                         f"[batch, time, exog] or [batch, time, nodes, exog].")
    check_finite(u, "u")
    if u.dim() == 3:
        u = u.unsqueeze(2).expand(-1, -1, n, -1)
    if u.dim() != 4 or u.shape[:3] != (b, t, n) or u.size(-1) != model.exog_size:
        raise ValueError(f"u must have shape [{b}, {t}, {model.exog_size}] or [{b}, {t}, {n}, "
                         f"{model.exog_size}], got {tuple(u.shape)}.")
    return edge_index, edge_weight, u.to(x.dtype)


def mask_kwargs(model, x_mask: Optional[Tensor]) -> Dict[str, Tensor]:
    """The keyword a forward call passes ``model``: ``{"x_mask": x_mask}`` when it reads a mask of observed readings
    (built with ``input_mask=True``), ``{}`` otherwise (the other models take no ``x_mask``)."""
    return {"x_mask": x_mask} if getattr(model, "input_mask", False) else {}


def check_mask(model, x: Tensor, mask: Optional[Tensor]) -> Optional[Tensor]:
    """The mask of observed readings of a forward call: required (``[b, t, n, f]`` or ``[b, t, n, 1]``,
    bool or 0 / 1) when ``model.input_mask``, refused otherwise. Returns it as ``x``'s dtype, or None."""
    if not getattr(model, "input_mask", False):
        if mask is not None:
            raise ValueError(f"x_mask was given but {type(model).__name__} reads no mask of observed readings (built "
                             f"with input_mask=False: it reads x as given); build it with input_mask=True to mark "
                             f"missing readings.")
        return None
    if mask is None:
        raise ValueError("The model was built with input_mask=True; pass x_mask [batch, time, nodes, features] (True = "
                         "observed; METR-LA marks a missing reading with 0 mph), or torch.ones_like(x, dtype=torch.bool) "
                         "when nothing is missing.")
    if not isinstance(mask, Tensor):
        raise TypeError(f"x_mask must be a torch.Tensor, got {type(mask).__name__}.")
    if mask.dim() != 4 or mask.shape[:3] != x.shape[:3] or mask.size(-1) not in (1, x.size(-1)):
        raise ValueError(f"x_mask must have x's shape {tuple(x.shape)} (or one feature), got {tuple(mask.shape)}.")
    if mask.dtype != torch.bool and cheap_to_check(mask) and not bool(((mask == 0) | (mask == 1)).all()):
        raise ValueError("x_mask must be bool or hold only 0 and 1 (1 = observed).")
    return mask.to(x.dtype)
