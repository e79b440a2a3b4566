"""PyG conventions of our graph layer and models: MessagePassing, SparseTensor, Data / Batch of sensor subsets."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch_geometric.transforms as T
from torch_geometric.data import Batch, Data
from torch_geometric.nn import MessagePassing
from torch_sparse import SparseTensor

import stgnn_diag
from stgnn_diag.datasets import dense_to_edge_index
from stgnn_diag.integrations.pyg_batch import forward_batch, forward_per_graph, window_to_data
from stgnn_diag.nn import DiffusionConv

SUBSETS = ([5, 0, 13, 37, 42, 54, 111, 116] + list(range(60, 92)), list(range(100, 165)))  # 40 and 65 sensors


def _edges(ei, ew):
    return {(int(s), int(d)): float(w) for (s, d), w in zip(ei.t(), ew)}


def test_diffusion_conv_follows_pyg_conventions(metr_la):
    conv = DiffusionConv(4, 8, k=2)
    assert isinstance(conv, MessagePassing)
    assert repr(conv) == "DiffusionConv(4, 8, k=2)"
    assert "Shapes" in (DiffusionConv.__doc__ or "")
    before = conv.lin.weight.detach().clone()
    conv.reset_parameters()
    assert not torch.equal(before, conv.lin.weight)
    ei, ew = metr_la.edge_index, metr_la.edge_weight
    x = torch.randn(207, 4)  # a plain PyG node-feature matrix
    out = conv(x, ei, ew)
    assert out.shape == (207, 8)
    adj_t = SparseTensor(row=ei[1], col=ei[0], value=ew, sparse_sizes=(207, 207))  # PyG's adj.t()
    assert torch.allclose(conv(x, adj_t), out, atol=1e-5)
    coo_t = torch.sparse_coo_tensor(torch.stack([ei[1], ei[0]]), ew, (207, 207), check_invariants=True)
    assert torch.allclose(conv(x, coo_t), out, atol=1e-5)  # a torch.sparse adj_t too
    seq = torch.randn(3, 12, 207, 4)  # [b, t, n, f]: nodes on dim -2 (node_dim=-2)
    assert torch.allclose(conv(seq, ei, ew)[1, 5], conv(seq[1, 5], ei, ew), atol=1e-6)


def test_diffusion_conv_on_a_batch_of_graphs(metr_la):
    conv = DiffusionConv(3, 5, k=2)
    graphs = [window_to_data(torch.randn(1, 207, 3), metr_la.edge_index, metr_la.edge_weight, nodes=nodes)
              for nodes in SUBSETS]
    batch = Batch.from_data_list(graphs)
    joint = conv(batch.x[:, 0], batch.edge_index, batch.edge_weight)
    single = torch.cat([conv(g.x[:, 0], g.edge_index, g.edge_weight) for g in graphs])
    assert torch.allclose(joint, single, atol=1e-6)


def test_window_to_data_takes_a_sensor_subset(metr_batch, metr_la):
    nodes = SUBSETS[0]
    data = window_to_data(metr_batch["x"][0], metr_la.edge_index, metr_la.edge_weight, u=metr_batch["u"][0],
                          y=metr_batch["y"][0], mask=metr_batch["mask"][0], nodes=nodes)
    assert data.num_nodes == 40
    assert torch.equal(data.x, metr_batch["x"][0][:, nodes].transpose(0, 1))  # [n, window, f]
    assert torch.equal(data.y, metr_batch["y"][0][:, nodes].transpose(0, 1))
    assert torch.equal(data.u[7], metr_batch["u"][0])  # shared covariates, one copy per node
    sub = metr_la.adj[np.ix_(nodes, nodes)]  # independent: the dense sub-adjacency, in the given order
    assert _edges(data.edge_index, data.edge_weight) == _edges(*dense_to_edge_index(sub))


@pytest.mark.parametrize("name", ["tas_attn_mask", "tts_attn_penalty", "paper_tas"])
def test_models_on_a_batch_of_sensor_subsets(name, metr_batch, metr_la):
    kw = dict(hidden_size=8, heads=2)
    kw.update(n_layers=1) if name.startswith(("tas", "paper")) else kw.update(temporal_layers=1, spatial_layers=1)
    if name != "paper_tas":  # subsets of sensors: no per-node tables (a node's index differs between graphs)
        kw.update(node_embedding=False, adaptive_embedding=False)
    if name.startswith("tas_attn"):
        kw.update(adaptive=False)  # the learned adjacency is a per-node table too
    model = stgnn_diag.create_model(name, **kw).eval()
    u = metr_batch["u"][:, :, :1] if name == "paper_tas" else metr_batch["u"]
    graphs = [window_to_data(metr_batch["x"][i], metr_la.edge_index, metr_la.edge_weight,
                             u=None if u is None else u[i], y=metr_batch["y"][i], nodes=nodes)
              for i, nodes in enumerate(SUBSETS)]
    batch = Batch.from_data_list(graphs)
    with torch.no_grad():
        joint = forward_batch(model, batch)
        assert joint.shape == batch.y.shape == (105, 12, 1)
        assert torch.allclose(joint, forward_per_graph(model, batch), atol=1e-5)
        # the union is not a trivial split: graph 0 alone, through the plain tsl-layout call
        g = graphs[0]
        direct = model(g.x.transpose(0, 1)[None], g.edge_index, g.edge_weight,
                       None if u is None else g.u.transpose(0, 1)[None])
        assert torch.allclose(joint[:40], direct[0].transpose(0, 1), atol=1e-5)
        # PyG's ToSparseTensor transform with its defaults (adj_t, weights inside) gives the same result
        sparse = Batch.from_data_list([T.ToSparseTensor()(Data(**g.to_dict())) for g in graphs])
        assert sparse.adj_t.storage.value() is not None and getattr(sparse, "edge_weight", None) is None
        assert torch.allclose(forward_batch(model, sparse), joint, atol=1e-5)
        unweighted = forward_batch(model, Batch.from_data_list([Data(**{**g.to_dict(), "edge_weight": None})
                                                                for g in graphs]))
        assert not torch.allclose(unweighted, joint, atol=1e-3)  # the weights matter: the check above can fail
