"""Hop distances on the sensor graph (scipy.sparse.csgraph), with unreachable pairs reported."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from torch import Tensor

from ..nn.hops import hop_distances  # noqa: F401  (re-exported: stgnn_diag.sensitivity.hop_distances)


@dataclass
class HopSummary:
    """What a hop matrix says about reachability.

    Attributes:
        n_nodes: nodes.
        diameter: largest finite hop count.
        unreachable_pairs: ordered pairs ``(i, j)``, ``i != j``, with no path (``inf``).
        isolated_nodes: nodes with no path to or from any other node.
        components: weakly connected components.
    """

    n_nodes: int
    diameter: int
    unreachable_pairs: int
    isolated_nodes: list
    components: int

    def __str__(self) -> str:
        s = (f"{self.n_nodes} nodes, {self.components} connected component(s), hop diameter {self.diameter}, "
             f"{self.unreachable_pairs} ordered pairs unreachable")
        if self.isolated_nodes:
            s += f"; isolated nodes: {self.isolated_nodes}"
        return s


def summarize_hops(hops: Tensor, edge_index: Optional[Tensor] = None) -> HopSummary:
    """Diameter, unreachable pairs and isolated nodes of a hop matrix from :func:`hop_distances`."""
    d = hops.detach().cpu().numpy()
    n = d.shape[0]
    finite = np.isfinite(d)
    off = ~np.eye(n, dtype=bool)
    isolated = [i for i in range(n) if not (finite[i] & off[i]).any() and not (finite[:, i] & off[:, i]).any()]
    comps = connected_components(sp.csr_matrix(finite & off), directed=True, connection="weak")[0]
    return HopSummary(n, int(d[finite].max()) if finite.any() else 0, int((~finite & off).sum()), isolated,
                      int(comps))
