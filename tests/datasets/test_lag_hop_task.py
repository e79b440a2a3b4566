"""The synthetic lag-hop task: sources at exactly the asked hop, the series obeys its recursion, the oracle
reaches the noise floor, and the task is reachable by name from every command."""
import math
from collections import deque

import numpy as np
import pytest

from stgnn_diag.datasets import LagHopTask, get_dataset, list_datasets, make_splits
from stgnn_diag.datasets.registry import check_dataset_name, dataset_slug, display_name, split_name


def bfs_hops(adj, start):
    """Edges on a shortest path from ``start`` to every node along ``adj[i, j] != 0`` (i -> j); -1 if none."""
    n = len(adj)
    dist = [-1] * n
    dist[start] = 0
    queue = deque([start])
    while queue:
        i = queue.popleft()
        for j in np.flatnonzero(adj[i]):
            if dist[j] < 0:
                dist[j] = dist[i] + 1
                queue.append(j)
    return dist


@pytest.mark.parametrize("graph,hop", [("ring", 1), ("ring", 5), ("grid", 3)])
def test_every_source_is_exactly_hop_edges_away(graph, hop):
    task = LagHopTask(hop=hop, lag=2, graph=graph, n_nodes=36, steps=200)
    assert (task.source >= 0).all()
    for v, u in enumerate(task.source):
        assert bfs_hops(task.adj, int(u))[v] == hop


def test_the_series_obeys_its_recursion_and_the_oracle_reaches_the_noise_floor():
    task = LagHopTask(hop=2, lag=4, graph="ring", n_nodes=32, steps=6000, alpha=0.8, sigma=3.0, seed=1)
    s, u, d = task.speed64, task.source, task.lag + 1
    residual = s[d:] - 50.0 - 0.8 * (s[:-d, u] - 50.0)
    assert residual.std() == pytest.approx(3.0, rel=0.03)
    assert s.std() == pytest.approx(3.0 / math.sqrt(1 - 0.8 ** 2), rel=0.1)  # stationary from the start
    splits = make_splits(task, window=12, horizon=1)
    x, y = splits.test.raw_inputs(), splits.test.targets()[:, 0]
    oracle = np.abs(task.oracle(x) - y).mean()
    assert oracle == pytest.approx(task.noise_floor_mae, rel=0.05)
    assert np.abs(x[:, -1] - y).mean() > 2 * task.noise_floor_mae  # the last value does not solve it
    with pytest.raises(ValueError, match="does not see lag 4"):
        task.oracle(x[:, -4:])


def test_the_same_seed_gives_the_same_task_and_another_seed_another():
    a, b = LagHopTask(seed=3, steps=300), LagHopTask(seed=3, steps=300)
    np.testing.assert_array_equal(a.speed64, b.speed64)
    np.testing.assert_array_equal(a.source, b.source)
    assert not np.array_equal(a.speed64, LagHopTask(seed=4, steps=300).speed64)


def test_on_metr_la_nodes_without_a_source_are_missing(metr_la_root):
    task = LagHopTask(metr_la_root, hop=6, lag=1, graph="metr_la", steps=300)
    assert task.n_nodes == 207
    lonely = task.source < 0
    assert lonely.any() and (task.speed[:, lonely] == 0).all() and (task.speed[:, ~lonely] != 0).all()
    for v in np.flatnonzero(~lonely)[:20]:
        assert bfs_hops(task.adj, int(task.source[v]))[v] == 6


def test_a_configured_task_by_name():
    assert "lag_hop" in list_datasets()
    assert split_name("lag_hop[hop=3,lag=5,graph=grid,alpha=0.5]") == (
        "lag_hop", {"hop": 3, "lag": 5, "graph": "grid", "alpha": 0.5})
    task = get_dataset("lag_hop[hop=3,lag=5,steps=100]")
    assert (task.hop, task.lag, task.n_steps) == (3, 5, 100)
    assert check_dataset_name("lag_hop[hop=3]") == "lag_hop[hop=3]"
    assert dataset_slug("lag_hop[hop=3,lag=5]") == "lag_hop-hop3-lag5"
    assert display_name("lag_hop[hop=3]") == "Lag-hop task (hop=3)"
    with pytest.raises(ValueError, match="arguments go in brackets"):
        split_name("lag_hop[hop=3")
    with pytest.raises(ValueError, match="Expected KEY=VALUE, got 'hop3'"):
        split_name("lag_hop[hop3]")
    with pytest.raises(ValueError, match="Unknown data set 'lag_hops'"):
        check_dataset_name("lag_hops[hop=3]")


@pytest.mark.parametrize("kwargs,match", [
    (dict(hop=0), "hop must be an integer >= 1"), (dict(lag=-1), "lag must be an integer >= 0"),
    (dict(graph="torus"), "graph must be one of"), (dict(alpha=1.0), "stationary"),
    (dict(lag=10, steps=11), "leaves no step"),
])
def test_bad_arguments_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        LagHopTask(**{"steps": 100, **kwargs})


def test_several_lags_one_source_each_sharing_alpha():
    task = LagHopTask(hop=2, lag=[1, 9], graph="grid", n_nodes=36, steps=6000, alpha=0.8, sigma=3.0, seed=2)
    assert task.lags == (1, 9) and task.sources.shape == (2, 36) and task.coefficient == pytest.approx(0.4)
    for k in range(2):
        for v, u in enumerate(task.sources[k]):
            assert bfs_hops(task.adj, int(u))[v] == 2
    assert (task.sources[0] != task.sources[1]).any()  # drawn independently
    s = task.speed64
    residual = s[10:] - 50.0 - 0.4 * (s[8:-2, task.sources[0]] - 50.0) - 0.4 * (s[:-10, task.sources[1]] - 50.0)
    assert residual.std() == pytest.approx(3.0, rel=0.03)
    assert abs(s[:500].mean() - 50.0) < 1.0 and s[:500].std() == pytest.approx(s[-500:].std(), rel=0.15)  # run in
    splits = make_splits(task, window=12, horizon=1)
    x, y = splits.test.raw_inputs(), splits.test.targets()[:, 0]
    assert np.abs(task.oracle(x) - y).mean() == pytest.approx(task.noise_floor_mae, rel=0.05)
    one = LagHopTask(hop=2, lag=1, graph="grid", n_nodes=36, steps=6000, alpha=0.8, sigma=3.0, seed=2)
    assert np.abs(one.oracle(x) - y).mean() > 1.1 * task.noise_floor_mae  # one source is not the answer
    for what in ("lag", "source"):
        with pytest.raises(ValueError, match=f"2 lags \\[1, 9\\]: read .lags and .sources, not .{what}"):
            getattr(task, what)
    with pytest.raises(ValueError, match="does not see lag 9"):
        task.oracle(x[:, -9:])


def test_several_lags_by_name_and_refused_when_repeated():
    task = get_dataset("lag_hop[hop=1,lag=[2,5],steps=200]")
    assert task.lags == (2, 5) and dataset_slug("lag_hop[hop=1,lag=[2,5]]") == "lag_hop-hop1-lag2+5"
    with pytest.raises(ValueError, match="the lags must be distinct"):
        LagHopTask(lag=[3, 3], steps=100)
    with pytest.raises(ValueError, match="lag must be an integer >= 0, got -1"):
        LagHopTask(lag=[1, -1], steps=100)
    with pytest.raises(ValueError, match="leaves no step"):
        LagHopTask(lag=[1, 99], steps=100)
