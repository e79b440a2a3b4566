import math

import pytest
import torch

from stgnn_diag.sensitivity import hop_distances, summarize_hops

INF = math.inf


def test_path_graph_directed_and_undirected():
    ei = torch.tensor([[0, 1, 2], [1, 2, 3]])  # 0 -> 1 -> 2 -> 3
    d = hop_distances(ei, 4, directed=True)
    expect = torch.tensor([[0, 1, 2, 3], [INF, 0, 1, 2], [INF, INF, 0, 1], [INF, INF, INF, 0]], dtype=torch.float64)
    assert torch.equal(d, expect)
    u = hop_distances(ei, 4, directed=False)
    i = torch.arange(4)
    assert torch.equal(u, (i.view(-1, 1) - i.view(1, -1)).abs().double())


def test_ring():
    n = 6
    src = torch.arange(n)
    ei = torch.stack([src, (src + 1) % n])
    d = hop_distances(ei, n, directed=True)
    i, j = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
    assert torch.equal(d, ((j - i) % n).double())
    u = hop_distances(ei, n, directed=False)
    assert torch.equal(u, torch.minimum((j - i) % n, (i - j) % n).double())


def test_disconnected_graph_self_loops_and_duplicates():
    # component {0, 1, 2} (0 <-> 1, 1 -> 2, duplicates and a self-loop), component {3, 4}, isolated node 5
    ei = torch.tensor([[0, 1, 1, 1, 2, 3, 0], [1, 0, 2, 2, 2, 4, 1]])
    d = hop_distances(ei, 6, directed=False)
    assert d[0, 2] == 2 and d[3, 4] == 1 and d[4, 3] == 1
    assert torch.isinf(d[0, 3]) and torch.isinf(d[5, :5]).all() and torch.isinf(d[:5, 5]).all()
    assert (d.diagonal() == 0).all()
    s = summarize_hops(d)
    assert s.components == 3 and s.isolated_nodes == [5] and s.diameter == 2
    assert s.unreachable_pairs == 6 * 5 - (3 * 2 + 2 * 1)
    assert "isolated nodes: [5]" in str(s)
    dd = hop_distances(ei, 6, directed=True)
    assert dd[2, 0] == INF and dd[0, 2] == 2 and dd[4, 3] == INF


def test_numpy_input_and_errors():
    import numpy as np

    assert hop_distances(np.array([[0], [1]]), 2)[0, 1] == 1
    with pytest.raises(ValueError, match="num_nodes"):
        hop_distances(torch.tensor([[0], [3]]), 2)
    with pytest.raises(ValueError, match="shape"):
        hop_distances(torch.tensor([0, 1, 2]), 3)


def test_metr_la_graph(metr_la):
    d = hop_distances(metr_la.edge_index, metr_la.adj.shape[0], directed=False)
    s = summarize_hops(d)
    # one sensor (index 26) has no edge to any other sensor in the DCRNN adjacency
    assert s.isolated_nodes == [26] and s.components == 2
    assert s.unreachable_pairs == 2 * 206
    assert s.diameter == 13
