import pytest
import torch
from torch_geometric.utils import to_dense_adj

from stgnn_diag.nn import DiffusionConv, random_walk_weights

# Asymmetric 3-node graph: 0 -> 1 (w 1), 1 -> 2 (w 2), 0 -> 2 (w 3), 2 -> 0 (w 0.5).
EDGE_INDEX = torch.tensor([[0, 1, 0, 2], [1, 2, 2, 0]])
EDGE_WEIGHT = torch.tensor([1.0, 2.0, 3.0, 0.5], dtype=torch.float64)


def dense_supports():
    A = torch.tensor([[0, 1, 3], [0, 0, 2], [0.5, 0, 0]], dtype=torch.float64)  # A[i, j]: edge i -> j
    pf = (torch.diag(1 / A.sum(1)) @ A).T      # DCRNN forward support (D_O^-1 A)^T
    pb = (torch.diag(1 / A.sum(0)) @ A.T).T    # DCRNN backward support (D_I^-1 A^T)^T
    return A, pf, pb


def test_dense_adjacency_convention():
    A, _, _ = dense_supports()
    torch.testing.assert_close(to_dense_adj(EDGE_INDEX, edge_attr=EDGE_WEIGHT)[0], A)


def test_one_forward_hop_moves_information_along_the_edges():
    conv = DiffusionConv(1, 1, k=1, root_weight=False, bidirectional=False, bias=False).double()
    torch.nn.init.ones_(conv.lin.weight)
    x = torch.zeros(1, 1, 3, 1, dtype=torch.float64)
    x[..., 0, 0] = 1.0  # a signal on node 0 only
    y = conv(x, EDGE_INDEX, EDGE_WEIGHT)[0, 0, :, 0]
    # node 0 sends to 1 (share 1/4) and 2 (share 3/4); node 0 itself receives nothing from itself
    torch.testing.assert_close(y, torch.tensor([0.0, 0.25, 0.75], dtype=torch.float64))


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("propagation", ["auto", "csr", "dense", "scatter"])
def test_matches_dense_dcrnn_closed_form(k, propagation):
    torch.manual_seed(0)
    conv = DiffusionConv(4, 5, k=k, propagation=propagation).double()
    x = torch.randn(2, 3, 3, 4, dtype=torch.float64)
    _, pf, pb = dense_supports()
    terms = [x]
    for p in (pf, pb):
        h = x
        for _ in range(k):
            h = torch.einsum("ij,btjf->btif", p, h)
            terms.append(h)
    expected = conv.lin(torch.cat(terms, -1))
    torch.testing.assert_close(conv(x, EDGE_INDEX, EDGE_WEIGHT), expected)


def test_cached_supports_follow_a_new_graph_and_in_place_edits():
    torch.manual_seed(0)
    conv = DiffusionConv(4, 4, k=2).double()
    x = torch.randn(2, 3, 3, 4, dtype=torch.float64)
    ref = DiffusionConv(4, 4, k=2, propagation="scatter").double()
    ref.load_state_dict(conv.state_dict())
    w = EDGE_WEIGHT.clone()
    torch.testing.assert_close(conv(x, EDGE_INDEX, w), ref(x, EDGE_INDEX, w))
    w.mul_(torch.tensor([1.0, 3.0, 0.5, 2.0], dtype=w.dtype))  # in place, changing each source's shares
    torch.testing.assert_close(conv(x, EDGE_INDEX, w), ref(x, EDGE_INDEX, w))
    flipped = EDGE_INDEX.flip(0)  # another graph
    torch.testing.assert_close(conv(x, flipped, w), ref(x, flipped, w))


def test_csr_gradient_matches_scatter_gradient():
    torch.manual_seed(0)
    a, b = DiffusionConv(4, 4, k=2, propagation="csr").double(), DiffusionConv(4, 4, k=2, propagation="scatter").double()
    b.load_state_dict(a.state_dict())
    x = torch.randn(2, 3, 3, 4, dtype=torch.float64, requires_grad=True)
    ga = torch.autograd.grad(a(x, EDGE_INDEX, EDGE_WEIGHT).square().sum(), x)[0]
    gb = torch.autograd.grad(b(x, EDGE_INDEX, EDGE_WEIGHT).square().sum(), x)[0]
    torch.testing.assert_close(ga, gb)


@pytest.mark.parametrize("root_weight", [True, False])
@pytest.mark.parametrize("adaptive", [None, "softmax", "lowrank"])
@pytest.mark.parametrize("k", [1, 3])
def test_fused_products_equal_the_concatenated_hops_with_gradients(root_weight, adaptive, k):
    # the CSR path sums the hops weights first with fused addmm products (a low-rank adjacency applies its
    # factors); the scatter path concatenates [X, S X, S^2 X, ...] with the dense adjacency and applies one
    # linear map: the same function and the same gradients
    torch.manual_seed(0)
    kw = dict(k=k, root_weight=root_weight, adaptive_nodes=3 if adaptive else None, emb_size=2,
              adaptive_kind=adaptive or "softmax")
    a, b = DiffusionConv(4, 5, propagation="csr", **kw).double(), DiffusionConv(4, 5, propagation="scatter", **kw).double()
    b.load_state_dict(a.state_dict())
    x = torch.randn(2, 3, 3, 4, dtype=torch.float64, requires_grad=True)
    ya, yb = a(x, EDGE_INDEX, EDGE_WEIGHT), b(x, EDGE_INDEX, EDGE_WEIGHT)
    torch.testing.assert_close(ya, yb)
    ga = torch.autograd.grad(ya.square().sum(), [x, *a.parameters()])
    gb = torch.autograd.grad(yb.square().sum(), [x, *b.parameters()])
    for u, v in zip(ga, gb):
        torch.testing.assert_close(u, v)


def test_random_walk_weights_sum_to_one_per_source():
    w = random_walk_weights(EDGE_INDEX, EDGE_WEIGHT, 3)
    torch.testing.assert_close(torch.zeros(3, dtype=w.dtype).index_add_(0, EDGE_INDEX[0], w),
                               torch.ones(3, dtype=w.dtype))


def test_sparse_tensor_input_equals_edge_index():
    torch_sparse = pytest.importorskip("torch_sparse")  # installed in CI through the [all] extra
    conv = DiffusionConv(4, 4, k=2)
    x = torch.randn(2, 3, 3, 4)
    adj = torch_sparse.SparseTensor(row=EDGE_INDEX[0], col=EDGE_INDEX[1], value=EDGE_WEIGHT.float(),
                                    sparse_sizes=(3, 3))
    torch.testing.assert_close(conv(x, adj.t()), conv(x, EDGE_INDEX, EDGE_WEIGHT.float()))


def test_adaptive_adjacency_really_propagates():
    torch.manual_seed(1)
    conv = DiffusionConv(2, 2, k=1, adaptive_nodes=3, root_weight=False, bidirectional=False).double()
    x = torch.randn(1, 2, 3, 2, dtype=torch.float64)
    a = torch.softmax(torch.relu(conv.adaptive.source @ conv.adaptive.target.T), dim=1)
    assert (a - torch.diag(torch.diagonal(a))).abs().sum() > 0  # off-diagonal mass: nodes do mix
    fw = torch.einsum("ij,btjf->btif", dense_supports()[1], x)
    ad = torch.einsum("vw,btvf->btwf", a, x)
    torch.testing.assert_close(conv(x, EDGE_INDEX, EDGE_WEIGHT), conv.lin(torch.cat([fw, ad], -1)))
    with pytest.raises(ValueError, match="built for 3 nodes"):
        conv(torch.randn(1, 2, 4, 2, dtype=torch.float64), EDGE_INDEX)


def test_bad_graph_input():
    conv = DiffusionConv(2, 2)
    x = torch.randn(1, 2, 3, 2)
    with pytest.raises(ValueError, match="refers to node 5"):
        conv(x, torch.tensor([[0, 5], [1, 2]]))
    with pytest.raises(ValueError, match="negative"):
        conv(x, torch.tensor([[0, -1], [1, 2]]))
    with pytest.raises(ValueError, match=r"\[2, num_edges\]"):
        conv(x, torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="edge_weight"):
        conv(x, EDGE_INDEX, torch.ones(3))
    with pytest.raises(ValueError, match=">= 1"):
        DiffusionConv(2, 2, k=0)
    assert repr(DiffusionConv(2, 3, k=2)) == "DiffusionConv(2, 3, k=2)"


def test_low_rank_adjacency_is_row_stochastic_of_low_rank_and_propagates_its_transpose():
    from stgnn_diag.nn import LowRankAdjacency

    torch.manual_seed(0)
    adj = LowRankAdjacency(9, emb_size=3).double()
    a = adj(9)
    e1, e2 = torch.nn.functional.softplus(adj.source), torch.nn.functional.softplus(adj.target)
    by_hand = (e1 @ e2.T) / (e1 @ e2.T).sum(1, keepdim=True)  # the definition, formed densely
    torch.testing.assert_close(a, by_hand)
    assert (a > 0).all() and torch.linalg.matrix_rank(a) <= 3
    torch.testing.assert_close(a.sum(1), torch.ones(9, dtype=torch.float64))
    x, y = torch.randn(9, 4, dtype=torch.float64), torch.randn(9, 4, dtype=torch.float64)
    torch.testing.assert_close(adj.propagate(x), a.T @ x)
    torch.testing.assert_close(adj.propagate(x, add=y), y + a.T @ x)
    with pytest.raises(ValueError, match="built for 9 nodes"):
        adj(10)
    with pytest.raises(ValueError, match="adaptive_kind"):
        DiffusionConv(4, 4, adaptive_nodes=3, adaptive_kind="dense")
