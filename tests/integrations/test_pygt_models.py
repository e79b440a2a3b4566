"""PyG Temporal layouts, wrappers, edge direction and the bugs the wrappers route around."""
from __future__ import annotations

import pytest
import torch
import torch_geometric_temporal.nn as pygt
from torch_geometric.utils import sort_edge_index

import stgnn_diag
from stgnn_diag.integrations.calendar_codes import calendar_codes, extend_codes
from stgnn_diag.integrations.pygt_layouts import (disjoint_union, exog_as_features, from_layout, output_to_tsl,
                                                  snapshot_target_to_tsl, to_layout, tsl_to_snapshot_target)


# ----------------------------------------------------------------------------- layouts
#: where element x[b, t, n, f] of the tsl layout lands in each PyG Temporal layout (batch 3, 4 nodes)
INDEX = {"BTNF": lambda b, t, n, f: (b, t, n, f), "BNFT": lambda b, t, n, f: (b, n, f, t),
         "BFNT": lambda b, t, n, f: (b, f, n, t), "T(BN)F": lambda b, t, n, f: (t, b * 4 + n, f)}


@pytest.mark.parametrize("layout", sorted(INDEX))
def test_layouts_round_trip_and_index_map(layout):
    x = torch.randn(3, 5, 4, 2)  # [b, t, n, f]
    y = to_layout(x, layout)
    assert torch.equal(from_layout(y, layout, batch_size=3), x)
    for idx in [(0, 0, 0, 0), (1, 3, 2, 1), (2, 4, 3, 0)]:
        assert y[INDEX[layout](*idx)] == x[idx]


def test_single_feature_and_snapshot_layouts():
    x = torch.randn(2, 5, 4, 1)
    assert torch.equal(to_layout(x, "BTN")[1, 3, 2], x[1, 3, 2, 0])
    assert torch.equal(from_layout(to_layout(x, "BTN"), "BTN"), x)
    with pytest.raises(ValueError):
        to_layout(torch.randn(2, 5, 4, 2), "BTN")
    s = torch.randn(1, 5, 4, 3)
    nft = to_layout(s, "NFT")
    assert nft.shape == (4, 3, 5) and nft[2, 1, 4] == s[0, 4, 2, 1]
    assert torch.equal(from_layout(nft, "NFT"), s)
    with pytest.raises(ValueError):
        to_layout(x, "NFT")  # a batch of 2 is not a snapshot


def test_output_layouts_by_index():
    b, h, n, o = 2, 3, 4, 5
    ref = torch.randn(b, h, n, o)
    bnho = torch.empty(b, n, h * o)
    bhon1 = torch.empty(b, h * o, n, 1)
    for i in range(b):
        for k in range(h):
            for v in range(n):
                for c in range(o):
                    bnho[i, v, k * o + c] = ref[i, k, v, c]
                    bhon1[i, k * o + c, v, 0] = ref[i, k, v, c]
    assert torch.equal(output_to_tsl(bnho, "B N (H O)", h, o), ref)
    assert torch.equal(output_to_tsl(bhon1, "B (H O) N 1", h, o), ref)
    assert torch.equal(output_to_tsl(ref[..., 0], "B H N", h, 1), ref[..., :1])
    one = ref[:1, :, :, :1]
    snap = tsl_to_snapshot_target(one)  # [n, h], like METR-LA's snapshot.y
    assert snap.shape == (n, h) and snap[3, 2] == one[0, 2, 3, 0]
    assert torch.equal(snapshot_target_to_tsl(snap), one)
    assert torch.equal(output_to_tsl(snap, "N (H O)", h, 1), one)
    multi = tsl_to_snapshot_target(ref[:1])  # [n, o, h]
    assert torch.equal(snapshot_target_to_tsl(multi), ref[:1])
    assert torch.equal(output_to_tsl(multi, "N O H", h, o), ref[:1])


def test_disjoint_union_and_exog():
    ei = torch.tensor([[0, 1], [1, 2]])
    u_ei, u_w = disjoint_union(ei, None, batch_size=3, n_nodes=4)
    assert u_ei.tolist() == [[0, 1, 4, 5, 8, 9], [1, 2, 5, 6, 9, 10]]
    assert torch.equal(u_w, torch.ones(6))
    x, u = torch.randn(2, 3, 4, 1), torch.randn(2, 3, 2)
    xu = exog_as_features(x, u)
    assert xu.shape == (2, 3, 4, 3) and torch.equal(xu[1, 2, 3, 1:], u[1, 2])


def test_calendar_codes(metr_la):
    cov = torch.as_tensor(metr_la.covariates()[280:296]).unsqueeze(0)  # crosses midnight Thu -> Fri
    tod, dow = calendar_codes(cov)
    assert tod[0].tolist() == [280 + k - (288 if 280 + k >= 288 else 0) for k in range(16)]
    assert dow[0, 0] == 3 and dow[0, -1] == 4  # 2012-03-01 was a Thursday
    t2, d2 = extend_codes(tod[:, :4], dow[:, :4], horizon=12)
    assert torch.equal(t2, tod) and torch.equal(d2, dow)
    t1, none = calendar_codes(cov[..., :1])
    assert none is None and torch.equal(t1, tod)


# ----------------------------------------------------------------------------- edge direction
@pytest.mark.parametrize("name,kw", [("pygt:TGCN", dict(window=1)), ("pygt:TGCN2", dict(window=1)),
                                     ("pygt:A3TGCN2", dict()), ("pygt:GConvGRU", dict(window=1, k=2)),
                                     ("tsl:GRUGCNModel", dict(gcn_layers=1))])
def test_information_flows_source_to_target(name, kw, metr_la):
    """A one-hop model changes exactly the perturbed sensor and its successors adj[s, j] != 0,
    on the asymmetric METR-LA graph (its predecessors are a different set)."""
    adj = torch.as_tensor(metr_la.adj)
    s = 0
    succ = set((adj[s] != 0).nonzero().flatten().tolist())
    pred = set((adj[:, s] != 0).nonzero().flatten().tolist())
    assert succ != pred
    model = stgnn_diag.create_model(name, n_nodes=207, hidden_size=8, **kw).eval()
    x = torch.randn(1, kw.get("window", 12), 207, 1)
    x2 = x.clone()
    x2[0, :, s] += 1.0
    with torch.no_grad():
        diff = (model(x2, metr_la.edge_index, metr_la.edge_weight) - model(x, metr_la.edge_index, metr_la.edge_weight))
    changed = set((diff.abs().amax(dim=(0, 1, 3)) > 1e-7).nonzero().flatten().tolist())
    assert changed == succ


def test_recurrent_cell_union_equals_one_sample_at_a_time(metr_batch):
    model = stgnn_diag.create_model("pygt:GConvLSTM", n_nodes=207, hidden_size=8).eval()
    x, ei, ew = metr_batch["x"][:, :4], metr_batch["edge_index"], metr_batch["edge_weight"]
    with torch.no_grad():
        both = model(x, ei, ew)
        one = torch.cat([model(x[i:i + 1], ei, ew) for i in range(2)])
    assert torch.allclose(both, one, atol=1e-5)


# ----------------------------------------------------------------------------- PyG Temporal bugs
def test_pygt_mstgcn_mixes_samples_so_it_is_not_in_the_zoo():
    """PyG Temporal 0.56.2's MSTGCN: sample 0's output depends on sample 1 (layout bug)."""
    assert "pygt:MSTGCN" not in stgnn_diag.list_models()
    torch.manual_seed(0)
    net = pygt.MSTGCN(nb_block=2, in_channels=1, K=2, nb_chev_filter=4, nb_time_filter=4, time_strides=1,
                      num_for_predict=12, len_input=12).eval()
    ei = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4]])
    x = torch.randn(2, 5, 1, 12)
    x2 = x.clone()
    x2[1] = torch.randn(5, 1, 12)
    with torch.no_grad():
        assert not torch.allclose(net(x, ei)[0], net(x2, ei)[0], atol=1e-4)


def test_pygt_dconv_depends_on_edge_order_and_wrapper_fixes_it(metr_la):
    """PyG Temporal 0.56.2's DCRNN cell gives different outputs for the same graph in another edge
    order; the wrapper feeds it target-major edges, so its output no longer depends on the order."""
    ei, ew = metr_la.edge_index, metr_la.edge_weight
    perm = torch.randperm(ei.size(1), generator=torch.Generator().manual_seed(1))
    cell = pygt.DCRNN(1, 4, K=2)
    x = torch.randn(207, 1)
    with torch.no_grad():
        assert not torch.allclose(cell(x, ei, ew), cell(x, ei[:, perm], ew[perm]), atol=1e-4)
        a, b = sort_edge_index(ei, ew, sort_by_row=False), sort_edge_index(ei[:, perm], ew[perm], sort_by_row=False)
        assert torch.allclose(cell(x, *a), cell(x, *b))
    for name in ("pygt:DCRNN", "pygt:BatchedDCRNN"):
        model = stgnn_diag.create_model(name, n_nodes=207, hidden_size=4).eval()
        xb = torch.randn(2, 3, 207, 1)
        with torch.no_grad():
            assert torch.allclose(model(xb, ei, ew), model(xb, ei[:, perm], ew[perm]), atol=1e-5)


def test_a3tgcn2_attention_follows_the_module_device():
    model = stgnn_diag.create_model("pygt:A3TGCN2", hidden_size=4)
    assert model.net._attention.device == torch.device("cpu")
    assert any(p is model.net._attention for p in model.parameters())
    before = model.net._attention.detach().clone()
    model.reset_parameters()
    assert not torch.equal(before, model.net._attention)


def test_gman_temporal_embedding_comes_from_calendar(metr_batch):
    model = stgnn_diag.create_model("pygt:GMAN", n_nodes=207, hidden_size=8, exog_size=8)
    te = model.temporal_embedding(metr_batch["x"], metr_batch["u"])
    tod, dow = calendar_codes(metr_batch["u"])
    assert te.shape == (2, 24, 2)
    assert torch.equal(te[:, :12, 1].long(), tod) and torch.equal(te[:, :12, 0].long(), dow)
    assert torch.equal(te[:, 12:, 1].long(), (tod[:, -1:] + torch.arange(1, 13)) % 288)
    with pytest.raises(ValueError, match="univariate"):
        stgnn_diag.create_model("pygt:GMAN", n_nodes=207, input_size=2)


def test_models_with_node_parameters_need_n_nodes():
    for name in ("pygt:ASTGCN", "pygt:STConv", "pygt:GMAN", "pygt:MTGNN", "pygt:AGCRN", "tsl:AGCRNModel"):
        with pytest.raises(ValueError, match="n_nodes"):
            stgnn_diag.create_model(name, hidden_size=8)


def test_a_pygt_layout_given_to_a_wrapper_is_named():
    """The pygt: wrappers take our layout; PyG Temporal's own [B, N, F, T] is refused with the conversion."""
    from stgnn_diag.integrations.pygt_layouts import to_layout

    model = stgnn_diag.create_model("pygt:A3TGCN2", n_nodes=4, hidden_size=8)
    x = torch.randn(2, 12, 4, 1)
    ei = torch.tensor([[0, 1, 2], [1, 2, 3]])
    with pytest.raises(ValueError, match=r"PyG Temporal's BNFT layout.*from_layout\(x, 'BNFT'\)"):
        model(to_layout(x, "BNFT"), ei)
    assert model(x, ei).shape == (2, 12, 4, 1)
