"""Node and time-of-day embeddings of the attention models: what they add, and their errors."""
import pytest
import torch

import stgnn_diag
from tests.calendar import calendar_u

N, T = 5, 12
EDGE_INDEX = torch.tensor([[0, 1, 2, 3, 4], [1, 2, 3, 4, 0]])


def model(**kw):
    torch.manual_seed(0)
    return stgnn_diag.create_model("tas_template_none", hidden_size=8, heads=2, n_nodes=N, exog_size=8, **kw).eval()


def test_tod_embedding_adds_the_vector_of_each_five_minute_slot():
    m = model(tod_embedding=288)
    x = torch.randn(1, T, N, 1)
    u = torch.zeros(1, T, 8)
    slots = torch.arange(100, 100 + T)
    u[0, :, 0] = slots / 288.0
    u[0, :, 3] = 1.0  # a Wednesday
    m_off = model()
    m_off.load_state_dict(m.state_dict(), strict=False)
    # independent computation: the model without the table, plus the table's rows looked up by hand
    expected = m_off.encode(x, u.unsqueeze(2).expand(-1, -1, N, -1)) + m.tod_emb.weight[slots].view(1, T, 1, -1)
    got = m.encode(x, u.unsqueeze(2).expand(-1, -1, N, -1))
    torch.testing.assert_close(got, expected)


def test_tod_slot_rounding_is_robust_to_float_error_and_wraps_nothing():
    m = model(tod_embedding=288)
    u = torch.zeros(1, T, N, 8)
    u[..., 0] = torch.tensor([k / 288.0 for k in (0, 1, 287)] * 4).view(1, T, 1).float() - 1e-7
    x = torch.zeros(1, T, N, 1)
    h = m.encode(x, u) - model().encode(x, u)
    # slot 287 - 1e-7 stays 287 (not 286, not 288 out of range); slot 0 - 1e-7 stays 0
    torch.testing.assert_close(h[0, 2, 0], m.tod_emb.weight[287])
    torch.testing.assert_close(h[0, 0, 0], m.tod_emb.weight[0])


def test_node_embedding_gives_each_node_its_own_offset():
    m = model(node_embedding=True)
    x = torch.zeros(1, T, N, 1)
    u = torch.zeros(1, T, N, 8)
    diff = m.encode(x, u) - model().encode(x, u)
    torch.testing.assert_close(diff[0, 0], m.node_emb.detach())
    torch.testing.assert_close(diff[0, 5], m.node_emb.detach())
    y = m(torch.randn(2, T, N, 1), EDGE_INDEX, u=calendar_u(2, T))
    y.sum().backward()
    assert m.node_emb.grad is not None and m.node_emb.grad.abs().sum() > 0


def test_embedding_errors_say_what_is_missing():
    with pytest.raises(ValueError, match="n_nodes"):
        stgnn_diag.create_model("tts_template_none", node_embedding=True)
    with pytest.raises(ValueError, match="exog_size"):
        stgnn_diag.create_model("tts_template_none", tod_embedding=288)
    m = model(node_embedding=True)
    with pytest.raises(ValueError, match="nodes"):
        m(torch.randn(1, T, N + 1, 1), torch.tensor([[0], [1]]), u=calendar_u(1, T))


def test_covariates_shared_by_all_nodes_are_looked_up_once_with_the_same_result():
    from stgnn_diag import create_model
    from stgnn_diag.models.embeddings import STEmbedding, unbroadcast

    torch.manual_seed(0)
    b, t, n = 3, 12, 7
    u = torch.zeros(b, t, 8, dtype=torch.float64)
    u[..., 0] = torch.rand(b, t)
    u[torch.arange(b), :, 1 + torch.arange(b) % 7] = 1.0  # a weekday per window
    shared = u.unsqueeze(2).expand(-1, -1, n, -1)  # what the input checks make of u [b, t, c]
    per_node = shared.contiguous()  # the same values, one row per node
    assert unbroadcast(shared).shape == (b, t, 1, 8) and unbroadcast(per_node).shape == (b, t, n, 8)
    emb = STEmbedding(1, 4, t, n, tod_embedding=288, dow_embedding=True, node_embedding=True,
                      adaptive_embedding=True).double()
    x = torch.randn(b, t, n, 1, dtype=torch.float64)
    # against a hand-written sum of the four lookups per (window, step, node)
    slot = (u[..., 0] * 288).round().long()
    by_hand = (emb.value(x) + emb.calendar.tod.weight[slot][:, :, None] + emb.calendar.dow.weight[u[..., 1:].argmax(-1)][:, :, None]
               + emb.calendar.node + emb.adaptive)
    for cov in (shared, per_node):
        torch.testing.assert_close(emb(x, cov), by_hand)
    model = create_model("tts_attn_penalty", n_nodes=n).double()  # and the read-out embedding, with gradients
    ei = torch.tensor([[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 6]])
    outs = [model(x, ei, u=cov) for cov in (u, per_node)]
    torch.testing.assert_close(outs[0], outs[1])
    grads = [torch.autograd.grad(o.square().sum(), list(model.parameters())) for o in outs]
    for a, c in zip(*grads):
        torch.testing.assert_close(a, c)


@pytest.mark.parametrize("p", [2, 3])
def test_patch_tokens_embed_their_steps_side_by_side_and_the_last_steps_calendar(p):
    from stgnn_diag.models.embeddings import STEmbedding

    torch.manual_seed(0)
    b, t, n, c = 2, 12, 5, 2
    u = torch.zeros(b, t, n, 8, dtype=torch.float64)
    u[..., 0] = torch.rand(b, t, 1)
    u[..., 1 + torch.randint(7, (1,))] = 1.0
    emb = STEmbedding(c, 4, t, n, tod_embedding=288, dow_embedding=True, node_embedding=True,
                      adaptive_embedding=True, patch_size=p).double()
    x = torch.randn(b, t, n, c, dtype=torch.float64)
    w = emb.value.weight  # [dim, p * c]: step i of a token reads columns i * c .. (i + 1) * c
    slot = (u[..., 0] * 288).round().long()
    for j in range(t // p):  # token j: steps j * p .. j * p + p - 1, by hand
        steps = range(j * p, (j + 1) * p)
        value = sum(x[:, s] @ w[:, i * c:(i + 1) * c].T for i, s in enumerate(steps)) + emb.value.bias
        last = steps[-1]
        expected = (value + emb.calendar.tod.weight[slot[:, last]] + emb.calendar.dow.weight[u[:, last, :, 1:].argmax(-1)]
                    + emb.calendar.node + emb.adaptive[j])
        torch.testing.assert_close(emb(x, u)[:, j], expected)
    assert emb(x, u).shape == (b, t // p, n, 4)


def test_patched_forecaster_runs_on_window_over_patch_tokens_and_rejects_a_patch_that_does_not_divide():
    torch.manual_seed(0)
    m = stgnn_diag.create_model("tas_attn_none", n_nodes=N, hidden_size=8, heads=2, patch_size=3)
    x, u = torch.randn(2, T, N, 1), calendar_u(2, T)
    assert m.encode(x, u.unsqueeze(2).expand(-1, -1, N, -1)).shape == (2, T // 3, N, 8)
    assert m(x, EDGE_INDEX, u=u).shape == (2, 12, N, 1)
    # every input step reaches the forecast (the patches cover the window)
    x.requires_grad_(True)
    m(x, EDGE_INDEX, u=u).sum().backward()
    assert (x.grad.abs().sum((0, 2, 3)) > 0).all()
    with pytest.raises(ValueError, match="patch_size"):
        stgnn_diag.create_model("tas_attn_none", n_nodes=N, patch_size=5)
