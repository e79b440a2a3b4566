"""A forecasting task whose true sensitivity is known: each node repeats one node ``hop`` edges away, ``lag`` steps late.

The series of node ``v`` is an autoregression on one *source* node ``u = source[v]`` whose shortest path
``u -> v`` along the graph's edges has exactly ``hop`` edges::

    s_v(t + 1) = mean + alpha * (s_u(t - lag) - mean) + sigma * eps_v(t + 1),    eps ~ N(0, 1) i.i.d.

So for an input window ending at step ``t`` (lag 0 = its last step), the best one-step forecast of node
``v`` is ``mean + alpha * (x_u(t - lag) - mean)``: its Jacobian is ``alpha`` at (input node ``u``, lag
``lag``) and 0 everywhere else, and its error is the noise alone, a mean absolute error of
``sigma * sqrt(2 / pi)`` (:attr:`LagHopTask.noise_floor_mae`). A forecaster that solves the task must route
the reading of a node ``hop`` edges away across ``lag`` steps: space and time together.

With several lags (``lag=[1, 95]``) each node has one source per lag, each ``hop`` edges away and drawn
independently, and the coefficient ``alpha`` is shared out equally::

    s_v(t + 1) = mean + (alpha / K) * sum_k (s_{u_k}(t - lag_k) - mean) + sigma * eps_v(t + 1)

so the true Jacobian has ``K`` entries of ``alpha / K`` and the noise floor is the same. That asks an attention
layer to weight ``K`` input steps at once, far apart in the window if the lags are. The single-lag series starts
in its stationary distribution; the several-lag one (whose stationary law has no closed form) is run in from
the level for as many steps as it takes ``alpha`` to decay below ``1e-6`` once per longest delay, and those
steps are dropped.

A node with no node at exactly ``hop`` edges (on the METR-LA graph, a few) has no source; its readings are
0 (missing) at every step, so none of its targets is scored and none of its inputs informs another node.

The series is generated from ``seed`` alone (the same arrays every time) on one of three graphs: ``"ring"``
(``n_nodes`` nodes, each linked both ways to its two neighbours), ``"grid"`` (a ``side x side`` lattice,
``side = round(sqrt(n_nodes))``, 4-neighbour links both ways) or ``"metr_la"`` (METR-LA's directed sensor
graph, read from the data root). Steps are 5 minutes apart from 2012-03-01 (calendar covariates as for the
real data sets); values are in the data sets' units (``mean`` 50, like a speed in mph).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Optional, Sequence, Union

import numpy as np

from .base import SensorDataset
from ..nn.hops import hop_distances
from .graph import dense_to_edge_index
from .registration import register_dataset

__all__ = ["LagHopTask", "ring_adjacency", "grid_adjacency"]

GRAPHS = ("ring", "grid", "metr_la")


def ring_adjacency(n: int) -> np.ndarray:
    """``[n, n]`` float32: each node linked both ways to its two ring neighbours, self-loops 1."""
    adj = np.eye(n, dtype=np.float32)
    i = np.arange(n)
    adj[i, (i + 1) % n] = adj[(i + 1) % n, i] = 1.0
    return adj


def grid_adjacency(side: int) -> np.ndarray:
    """``[side^2, side^2]`` float32: a lattice, 4-neighbour links both ways (no wrap), self-loops 1."""
    n = side * side
    adj = np.eye(n, dtype=np.float32)
    r, c = np.divmod(np.arange(n), side)
    for dr, dc in ((0, 1), (1, 0)):
        ok = (r + dr < side) & (c + dc < side)
        a, b = np.flatnonzero(ok), (r[ok] + dr) * side + c[ok] + dc
        adj[a, b] = adj[b, a] = 1.0
    return adj


@register_dataset
class LagHopTask(SensorDataset):
    """The lag-hop task (see the module docstring): ``get_dataset("lag_hop", hop=3, lag=5, graph="ring")``.

    Args:
        root: data root; read only for ``graph="metr_la"`` (METR-LA's sensor graph).
        hop: edges between a node and its source (``>= 1``).
        lag: steps between the source's reading and the target, counted back from the window's last
            input step (``>= 0``; a window of ``T`` steps sees lags ``0 .. T - 1``); a list of distinct lags for
            one source per lag (see the module docstring).
        graph: ``"ring"``, ``"grid"`` or ``"metr_la"``.
        n_nodes: nodes of the ring / grid (the grid rounds to a square); ignored for ``"metr_la"``.
        steps: length of the series.
        alpha, sigma, mean: the autoregression's coefficient (the sum over the sources), noise and level.
        seed: everything random (sources, noise) comes from it.
        download, progress: for reading METR-LA's graph.

    Attributes (beyond :class:`SensorDataset`'s):
        lags: the lags, a tuple of ``K`` ints (``(lag,)`` for one).
        sources: ``[K, nodes]`` int64, each node's source per lag (``-1``: none, the node is missing throughout).
        coefficient: each source's coefficient, ``alpha / K``.
        lag, source: the lag and ``[nodes]`` sources of a one-lag task (a ``ValueError`` for several).
        hops: ``[nodes, nodes]`` float64, the graph's hop counts (:func:`~stgnn_diag.nn.hops.hop_distances`).
        noise_floor_mae: the expected MAE of the true conditional mean, ``sigma * sqrt(2 / pi)``.
    """

    key, name = "lag_hop", "Lag-hop task"
    layout = None  # generated, not read

    def __init__(self, root=None, *, hop: int = 2, lag: Union[int, Sequence[int]] = 3, graph: str = "ring",
                 n_nodes: int = 64, steps: int = 8640, alpha: float = 0.9, sigma: float = 4.0, mean: float = 50.0,
                 seed: int = 0, download: bool = True, progress: bool = True) -> None:
        lags = tuple(lag) if isinstance(lag, (list, tuple)) else (lag,)
        if not lags:
            raise ValueError("lag_hop: lag must be an integer >= 0 or a list of them, got []")
        for label, value, low in (("hop", hop, 1), *(("lag", v, 0) for v in lags), ("n_nodes", n_nodes, 4),
                                  ("steps", steps, 2)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ValueError(f"lag_hop: {label} must be an integer >= {low}, got {value!r}")
        if len(set(lags)) < len(lags):
            raise ValueError(f"lag_hop: the lags must be distinct, got {list(lags)}")
        if graph not in GRAPHS:
            raise ValueError(f"lag_hop: graph must be one of {GRAPHS}, got {graph!r}")
        if not 0 <= alpha < 1 or sigma <= 0:
            raise ValueError(f"lag_hop: need 0 <= alpha < 1 and sigma > 0 (a stationary series), got alpha={alpha}, "
                             f"sigma={sigma}")
        if steps <= max(lags) + 1:
            raise ValueError(f"lag_hop: steps={steps} leaves no step after the first source reading "
                             f"(lag={max(lags)})")
        self.hop, self.lags, self.graph, self.seed = int(hop), tuple(int(v) for v in lags), graph, seed
        self.alpha, self.sigma, self.level = float(alpha), float(sigma), float(mean)
        self.coefficient = self.alpha / len(self.lags)
        self.root = Path(root) if root is not None else None
        if graph == "metr_la":
            from .metr_la import MetrLA

            real = MetrLA(root, download=download, progress=progress)
            adj, ids, self.locations = real.adj.copy(), list(real.sensor_ids), real.locations
        else:
            adj = ring_adjacency(n_nodes) if graph == "ring" else grid_adjacency(max(2, round(math.sqrt(n_nodes))))
            ids, self.locations = [f"node{i}" for i in range(len(adj))], np.zeros((len(adj), 2))
        self.adj, self.sensor_ids = adj, ids
        self.hops = hop_distances(np.stack(np.nonzero(adj)), len(adj)).numpy()
        rng = np.random.default_rng(seed)
        self.sources = np.full((len(self.lags), len(adj)), -1, dtype=np.int64)
        for k in range(len(self.lags)):
            for v in range(len(adj)):
                at_hop = np.flatnonzero(self.hops[:, v] == hop)
                if len(at_hop):
                    self.sources[k, v] = rng.choice(at_hop)
        self.speed64 = self._generate(rng, steps)
        self.speed = self.speed64.astype(np.float32)
        self.mask = self.speed64 != 0
        self.timestamps = np.datetime64("2012-03-01T00:00") + np.arange(steps) * np.timedelta64(5, "m")
        self.timestamps = self.timestamps.astype("datetime64[ns]")
        self.edge_index, self.edge_weight = dense_to_edge_index(self.adj)
        self.folder = self.speed_path = None

    def _generate(self, rng: np.random.Generator, steps: int) -> np.ndarray:
        """``[steps, nodes]`` float64: the autoregression, started from its stationary distribution (one lag) or
        run in from the level (several; see the module docstring)."""
        has = self.sources[0] >= 0
        src = np.where(has, self.sources, 0)  # [K, n]
        delays = [v + 1 for v in self.lags]
        mean, n = self.level, src.shape[1]
        if len(self.lags) == 1:
            std, delay, warm = self.sigma / math.sqrt(1 - self.alpha ** 2), delays[0], 0
            s = np.empty((steps, n))
            s[:delay] = mean + std * rng.standard_normal((delay, n))
        else:
            delay = max(delays)
            warm = delay * math.ceil(math.log(1e-6) / math.log(self.alpha)) if self.alpha > 0 else 0
            s = np.empty((warm + steps, n))
            s[:delay] = mean
        noise = self.sigma * rng.standard_normal((len(s), n))
        if len(self.lags) > 1:
            s[:delay] += noise[:delay]
        for t in range(delay, len(s)):
            s[t] = mean + self.coefficient * sum(s[t - d, u] - mean for d, u in zip(delays, src)) + noise[t]
        s = s[warm:]
        s[:, ~has] = 0.0
        return s

    @property
    def noise_floor_mae(self) -> float:
        """``sigma * sqrt(2 / pi)``: the MAE of the true one-step forecast (the noise is all that is left)."""
        return self.sigma * math.sqrt(2 / math.pi)

    @classmethod
    def resolve_root(cls, root=None, **_) -> Optional[Path]:
        return Path(root) if root is not None else None

    @property
    def lag(self) -> int:
        """The lag of a one-lag task."""
        return self._single("lag", self.lags[0])

    @property
    def source(self) -> np.ndarray:
        """``[nodes]`` int64: the sources of a one-lag task (``-1``: none)."""
        return self._single("source", self.sources[0])

    def _single(self, what: str, value):
        if len(self.lags) > 1:
            raise ValueError(f"this lag-hop task has {len(self.lags)} lags {list(self.lags)}: read .lags and "
                             f".sources, not .{what}")
        return value

    def oracle(self, x_mph: np.ndarray) -> np.ndarray:
        """The true one-step forecast from input windows ``x_mph [windows, T, nodes]`` (mph, ``T > max(lags)``):
        ``mean + (alpha / K) * sum_k (x[:, T - 1 - lag_k, sources[k]] - mean)``, 0 for nodes without a source.
        ``[windows, nodes]``."""
        t, far = x_mph.shape[1], max(self.lags)
        if t <= far:
            raise ValueError(f"a window of {t} steps does not see lag {far}: use a window > {far}")
        has = self.sources[0] >= 0
        src = np.where(has, self.sources, 0)
        out = self.level + self.coefficient * sum(x_mph[:, t - 1 - lag, u] - self.level
                                                  for lag, u in zip(self.lags, src))
        return np.where(has, out, 0.0)

    def __repr__(self) -> str:
        lag = self.lags[0] if len(self.lags) == 1 else list(self.lags)
        return (f"LagHopTask(graph={self.graph!r}, hop={self.hop}, lag={lag}, nodes={self.n_nodes}, "
                f"steps={self.n_steps}, alpha={self.alpha}, sigma={self.sigma}, seed={self.seed})")
