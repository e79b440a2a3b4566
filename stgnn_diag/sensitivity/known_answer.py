"""Does a trained model's Jacobian sit where the true one does? Scoring on the lag-hop task.

On :class:`~stgnn_diag.datasets.LagHopTask` the true one-step forecast of node ``v`` depends on one input
cell per lag only: node ``sources[k, v]`` at lag ``task.lags[k]`` (input step ``T - 1 - lag``), with slope
``task.coefficient``. :func:`lag_hop_recovery` computes the model's exact Jacobian of its first forecast step on
a few windows (:func:`~stgnn_diag.sensitivity.spatiotemporal_jacobian`) and reports how much of it is on those
cells.
"""
from __future__ import annotations

import math
from typing import Any, Dict

import numpy as np
import torch
from torch import nn

from .graph import hop_distances
from .jacobian import spatiotemporal_jacobian
from .profile import hop_lag_profile

__all__ = ["lag_hop_recovery"]


def lag_hop_recovery(model: nn.Module, task, splits, *, windows: int = 4, split: str = "test") -> Dict[str, Any]:
    """How well ``model``'s sensitivity of forecast step 1 recovers the task's true (source node, lag) cells.

    Args:
        model: a forecaster with the tsl contract, on scaled inputs (``module.model`` of a trained run).
        task: the :class:`~stgnn_diag.datasets.LagHopTask` the model was trained on (``K`` lags: ``K`` true
            cells per node).
        splits: its :class:`~stgnn_diag.datasets.Splits` (the windows and the scaler).
        windows: how many windows of ``split`` (evenly spaced) to average over.

    Returns:
        ``hit_rate``: share of (window, node, source) triples whose true cell is among the node's ``K`` largest
        Jacobian entries ``|dy_v / dx[s, u]|`` over all input cells (for one lag: the largest entry is the true
        one); ``source_hit_rates``: the same per lag, in the order of ``task.lags``; ``true_share``: the true
        cells' mean share of the node's total sensitivity (1 = all of it); ``gain``: the mean signed slope
        ``dy_v / dx_u`` at a true cell, in the data's units (``task.coefficient`` for the true forecast; the
        scaler cancels); ``profile_argmax``: the (hop, lag) cell of the hop x lag profile
        (:func:`~stgnn_diag.sensitivity.hop_lag_profile`) whose largest pair sensitivity is the largest;
        ``profile_top``: the profile's ``K`` largest cells, by lag (``((task.hop, lag_k), ...)`` for a model
        that found every source); ``reach_hops``: the farthest hop with any sensitivity (the model's receptive
        field); ``nodes``: the nodes scored (those with a source).

    Raises:
        ValueError: a window too short to see the task's farthest lag.
    """
    ds = splits[split]
    t, lags = ds.window, tuple(task.lags)
    if t <= max(lags):
        raise ValueError(f"windows of {t} steps do not see lag {max(lags)}: train with a window > {max(lags)}")
    k_true, n = len(lags), splits.n_nodes
    scored = np.flatnonzero(task.sources[0] >= 0)
    sc = torch.as_tensor(scored)
    true_flat = torch.stack([torch.as_tensor((t - 1 - lag) * n + task.sources[k, scored])
                             for k, lag in enumerate(lags)])  # [K, scored]: the true cells as s * n + u
    positions = np.unique(np.linspace(0, len(ds) - 1, num=min(windows, len(ds))).round().astype(int))
    hops = hop_distances(splits.edge_index, n)
    hits, shares, gains, profiles = [], [], [], []
    for k in positions:
        b = ds[int(k)]
        u = b["u"] if getattr(model, "exog_size", 1) else None
        jac = spatiotemporal_jacobian(model, b["x"], splits.edge_index, splits.edge_weight, u, out_steps=[0],
                                      norm=None)  # [1, n, 1, t, n, 1]: the signed entries
        j = jac.reshape(n, t * n).detach().double()[sc]  # [scored, s * n + u]
        a = j.abs()
        top = a.topk(k_true, dim=1).indices  # [scored, K]
        hits.append((top.unsqueeze(0) == true_flat.unsqueeze(2)).any(2).double().mean(1))  # [K]
        true_a = a.gather(1, true_flat.T)  # [scored, K]
        shares.append((true_a.sum(1) / a.sum(1).clamp(min=1e-300)).mean().item())
        gains.append(j.gather(1, true_flat.T).mean().item())
        profiles.append(hop_lag_profile(jac.reshape(1, n, t, n).detach().double().abs(), hops, out_nodes=None))
    mx = torch.stack([p.max for p in profiles]).nan_to_num(nan=-math.inf).amax(0)  # [n_hops, t]
    finite = [i for i, h in enumerate(profiles[0].hops) if math.isfinite(h)]
    order = mx[finite].flatten().sort(descending=True, stable=True).indices[:k_true].tolist()  # ties: first cell
    cells = [(int(profiles[0].hops[finite[c // mx.shape[1]]]), int(c % mx.shape[1])) for c in order]
    mass = torch.stack([p.mass for p in profiles]).sum(0)
    reach = max((profiles[0].hops[i] for i in finite if mass[i].sum() > 0), default=0.0)
    per_source = torch.stack(hits).mean(0)
    return {"hit_rate": float(per_source.mean()), "source_hit_rates": tuple(float(h) for h in per_source),
            "true_share": float(np.mean(shares)), "gain": float(np.mean(gains)), "profile_argmax": cells[0],
            "profile_top": tuple(sorted(cells, key=lambda c: c[1])), "reach_hops": int(reach),
            "nodes": int(len(scored)), "windows": int(len(positions))}
