"""Sensitivity aggregated by hop distance x time lag: spatial over-squashing and temporal bias at once."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import torch
from torch import Tensor


@dataclass
class HopLagProfile:
    """Sensitivity by hop distance (rows) and time lag (columns).

    The lag of input step ``s`` in a window of ``T`` steps is ``T - 1 - s``: lag 0 is the most recent
    input, lag ``T - 1`` the oldest. Hop ``h`` collects the (input node u, output node v) pairs whose
    shortest path u -> v has ``h`` edges; pairs with no path at all form a last row with
    ``hop = inf`` (present only when such pairs exist).

    Attributes:
        hops: hop value of each row (``math.inf`` for the unreachable row).
        lags: ``[L]`` lags ``0 .. T - 1``.
        pairs: ``[n_hops]`` (v, u) pairs per row.
        mean: ``[n_hops, L]`` mean sensitivity of a pair (averaged over the output steps too).
        max: ``[n_hops, L]`` largest sensitivity of a pair at any output step.
        mass: ``[n_hops, L]`` summed sensitivity.
        share: ``[n_hops, L]`` ``mass / mass.sum()``.
        lag_share_per_hop: ``[n_hops, L]`` each row of ``mass`` normalised to sum 1 (NaN for empty rows).
        unreachable_pairs: pairs with no path (``inf`` hop distance).
        unreachable_share: their share of the total sensitivity (0 for a model that only passes
            messages along the graph; > 0 reveals mixing beyond the graph, e.g. a learned adjacency).
    """

    hops: List[float]
    lags: Tensor
    pairs: Tensor
    mean: Tensor
    max: Tensor
    mass: Tensor
    share: Tensor
    lag_share_per_hop: Tensor
    unreachable_pairs: int
    unreachable_share: float

    @property
    def hop_share(self) -> Tensor:
        """``[n_hops]``: share of the total sensitivity at each hop distance."""
        return self.share.sum(1)

    @property
    def lag_share(self) -> Tensor:
        """``[L]``: share of the total sensitivity at each lag."""
        return self.share.sum(0)

    def hop_ratio(self, k: int) -> float:
        """Mean sensitivity at hop 0 over the mean at hop ``k`` (how much stronger self-influence is)."""
        i = self.hops.index(k) if k in self.hops else None
        if i is None or self.pairs[i] == 0:
            return math.nan
        return float(self.mean[0].mean() / self.mean[i].mean())

    def to_rows(self) -> List[Dict[str, float]]:
        """One dict per (hop, lag) cell, for CSV."""
        rows = []
        for i, h in enumerate(self.hops):
            for j, lag in enumerate(self.lags.tolist()):
                rows.append(dict(hop=h, lag=lag, pairs=int(self.pairs[i]), mean=float(self.mean[i, j]),
                                 max=float(self.max[i, j]), mass=float(self.mass[i, j]),
                                 share=float(self.share[i, j]),
                                 lag_share_in_hop=float(self.lag_share_per_hop[i, j])))
        return rows

    def to_dict(self) -> Dict[str, object]:
        """JSON-ready summary (``inf`` written as the string ``"inf"``)."""
        return dict(hops=[h if math.isfinite(h) else "inf" for h in self.hops], lags=self.lags.tolist(),
                    pairs=self.pairs.tolist(), mean=self.mean.tolist(), max=self.max.tolist(),
                    share=self.share.tolist(), hop_share=self.hop_share.tolist(), lag_share=self.lag_share.tolist(),
                    unreachable_pairs=self.unreachable_pairs, unreachable_share=self.unreachable_share)


def hop_lag_profile(sensitivity: Tensor, hops: Tensor, *, out_nodes: Optional[Sequence[int]] = None,
                    in_nodes: Optional[Sequence[int]] = None) -> HopLagProfile:
    """Aggregate block-norm sensitivities by hop distance and time lag.

    Args:
        sensitivity: ``[t_out, n_out, t_in, n_in]`` block norms from
            :func:`~stgnn_diag.sensitivity.spatiotemporal_jacobian`.
        hops: ``[n, n]`` hop matrix from :func:`~stgnn_diag.sensitivity.hop_distances`,
            ``hops[u, v]`` = hops from input node ``u`` to output node ``v`` (``inf`` allowed).
        out_nodes: graph node of each output column (default ``0 .. n_out - 1``).
        in_nodes: graph node of each input column (default ``0 .. n_in - 1``).

    Returns:
        :class:`HopLagProfile`.

    Shapes:
        sensitivity ``[t_out, n_out, t_in, n_in]``, hops ``[n, n]`` -> ``mean [n_hops, t_in]``.
    """
    if sensitivity.dim() != 4:
        raise ValueError(f"sensitivity must be [t_out, n_out, t_in, n_in] block norms, got {tuple(sensitivity.shape)}; "
                         f"pass norm=... to spatiotemporal_jacobian (not the raw blocks).")
    t_out, n_out, t_in, n_in = sensitivity.shape
    hops = torch.as_tensor(hops, dtype=torch.float64)
    on = torch.arange(n_out) if out_nodes is None else torch.as_tensor(list(out_nodes), dtype=torch.long)
    inn = torch.arange(n_in) if in_nodes is None else torch.as_tensor(list(in_nodes), dtype=torch.long)
    if on.numel() != n_out or inn.numel() != n_in:
        raise ValueError("out_nodes / in_nodes must list one graph node per output / input column.")
    if int(max(on.max(), inn.max())) >= hops.shape[0]:
        raise ValueError(f"the hop matrix has {hops.shape[0]} nodes but the sensitivity refers to more.")
    d = hops[inn][:, on].T  # [n_out, n_in]: hops from input u to output v
    finite = torch.isfinite(d)
    max_hop = int(d[finite].max()) if finite.any() else 0
    n_unreach = int((~finite).sum())
    n_rows = max_hop + 1 + (1 if n_unreach else 0)
    bucket = torch.where(finite, d.nan_to_num(posinf=0).long(), torch.full_like(d, max_hop + 1, dtype=torch.long))
    s = sensitivity.detach().to(torch.float64).permute(1, 3, 0, 2).reshape(n_out * n_in, t_out, t_in)
    b = bucket.reshape(-1)
    mass = torch.zeros(n_rows, t_out, t_in, dtype=torch.float64).index_add_(0, b, s).sum(1)
    mx = torch.full((n_rows, t_out * t_in), -math.inf, dtype=torch.float64)
    mx = mx.scatter_reduce(0, b.view(-1, 1).expand(-1, t_out * t_in), s.reshape(-1, t_out * t_in), "amax")
    mx = mx.view(n_rows, t_out, t_in).amax(1)
    pairs = torch.bincount(b, minlength=n_rows)
    mean = mass / (pairs.clamp(min=1).to(torch.float64) * t_out).unsqueeze(1)
    mean[pairs == 0] = math.nan
    mx[pairs == 0] = math.nan
    # lag = t_in - 1 - s: flip the step axis
    mass, mean, mx = mass.flip(1), mean.flip(1), mx.flip(1)
    total = mass.sum()
    share = mass / total if total > 0 else torch.zeros_like(mass)
    row = mass.sum(1, keepdim=True)
    lag_share = torch.where(row > 0, mass / row.clamp(min=1e-300), torch.full_like(mass, math.nan))
    hop_vals = [float(h) for h in range(max_hop + 1)] + ([math.inf] if n_unreach else [])
    return HopLagProfile(hop_vals, torch.arange(t_in), pairs, mean, mx, mass, share, lag_share, n_unreach,
                         float(share[-1].sum()) if n_unreach else 0.0)
