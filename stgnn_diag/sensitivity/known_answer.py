"""Does a trained model's Jacobian sit where the true one does? Scoring on the lag-hop task.

On :class:`~stgnn_diag.datasets.LagHopTask` the true one-step forecast of node ``v`` depends on one input
cell only: node ``source[v]`` at lag ``task.lag`` (input step ``T - 1 - lag``), with slope ``task.alpha``.
:func:`lag_hop_recovery` computes the model's exact Jacobian of its first forecast step on a few windows
(:func:`~stgnn_diag.sensitivity.spatiotemporal_jacobian`) and reports how much of it is on that cell.
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
    """How well ``model``'s sensitivity of forecast step 1 recovers the task's true (source node, lag) cell.

    Args:
        model: a forecaster with the tsl contract, on scaled inputs (``module.model`` of a trained run).
        task: the :class:`~stgnn_diag.datasets.LagHopTask` the model was trained on.
        splits: its :class:`~stgnn_diag.datasets.Splits` (the windows and the scaler).
        windows: how many windows of ``split`` (evenly spaced) to average over.

    Returns:
        ``hit_rate``: share of (window, node) pairs whose largest Jacobian entry ``|dy_v / dx[s, u]|`` over all
        input cells is the true one; ``true_share``: the true cell's mean share of the node's total
        sensitivity (1 = all of it); ``gain``: the mean signed slope ``dy_v / dx_u`` at the true cell, in the
        data's units (``alpha`` for the true forecast; the scaler cancels); ``profile_argmax``: the
        (hop, lag) cell of the hop x lag profile (:func:`~stgnn_diag.sensitivity.hop_lag_profile`) whose
        largest pair sensitivity is the largest (``(task.hop, task.lag)`` for a model that found the
        source); ``reach_hops``: the farthest hop with any sensitivity (the model's receptive field);
        ``nodes``: the nodes scored (those with a source).

    Raises:
        ValueError: a window too short to see the task's lag.
    """
    ds = splits[split]
    t = ds.window
    if t <= task.lag:
        raise ValueError(f"windows of {t} steps do not see lag {task.lag}: train with a window > {task.lag}")
    scored = np.flatnonzero(task.source >= 0)
    step = t - 1 - task.lag
    positions = np.unique(np.linspace(0, len(ds) - 1, num=min(windows, len(ds))).round().astype(int))
    hops = hop_distances(splits.edge_index, splits.n_nodes)
    hits, shares, gains, profiles = [], [], [], []
    for k in positions:
        b = ds[int(k)]
        u = b["u"] if getattr(model, "exog_size", 1) else None
        jac = spatiotemporal_jacobian(model, b["x"], splits.edge_index, splits.edge_weight, u, out_steps=[0],
                                      norm=None)  # [1, n, 1, t, n, 1]: the signed entries
        j = jac.reshape(splits.n_nodes, t, splits.n_nodes).detach().double()  # [v, s, u]
        a = j.abs()
        flat = a.reshape(splits.n_nodes, -1).argmax(1)
        s_best, u_best = flat // splits.n_nodes, flat % splits.n_nodes
        src = torch.as_tensor(task.source[scored])
        sc = torch.as_tensor(scored)
        hits.append(((s_best[sc] == step) & (u_best[sc] == src)).double().mean().item())
        shares.append((a[sc, step, src] / a[sc].sum((1, 2)).clamp(min=1e-300)).mean().item())
        gains.append(j[sc, step, src].mean().item())
        profiles.append(hop_lag_profile(a.unsqueeze(0), hops, out_nodes=None))
    mx = torch.stack([p.max for p in profiles]).nan_to_num(nan=-math.inf).amax(0)  # [n_hops, t]
    finite = [i for i, h in enumerate(profiles[0].hops) if math.isfinite(h)]
    cell = int(mx[finite].argmax())
    hop_i, lag = divmod(cell, mx.shape[1])
    mass = torch.stack([p.mass for p in profiles]).sum(0)
    reach = max((profiles[0].hops[i] for i in finite if mass[i].sum() > 0), default=0.0)
    return {"hit_rate": float(np.mean(hits)), "true_share": float(np.mean(shares)), "gain": float(np.mean(gains)),
            "profile_argmax": (int(profiles[0].hops[finite[hop_i]]), int(lag)), "reach_hops": int(reach),
            "nodes": int(len(scored)), "windows": int(len(positions))}
