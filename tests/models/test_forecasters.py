"""The forecaster family (``tas_attn_*`` / ``tts_attn_*``): embeddings, window read-out, arrangements, errors."""
import pytest
import torch

import stgnn_diag
from stgnn_diag.nn import TemporalAttention

N, T = 5, 12
EDGE_INDEX = torch.tensor([[0, 1, 2, 3, 4, 1], [1, 2, 3, 4, 0, 3]])
EDGE_WEIGHT = torch.rand(6, generator=torch.Generator().manual_seed(0)) + 0.1
SMALL = dict(n_nodes=N, hidden_size=8, heads=2, ffn_size=8, readout_size=16)


def model(name="tts_attn_none", **kw):
    torch.manual_seed(0)
    return stgnn_diag.create_model(name, **{**SMALL, **kw}).double().eval()


def calendar(b=2, first_slot=100, weekday=2):
    """u ``[b, T, N, 8]``: consecutive 5-minute slots from ``first_slot``, one weekday (Monday = 0)."""
    u = torch.zeros(b, T, N, 8, dtype=torch.float64)
    u[..., 0] = ((first_slot + torch.arange(T, dtype=torch.float64)) / 288.0).view(1, T, 1)
    u[..., 1 + weekday] = 1.0
    return u


def test_embedding_is_the_sum_of_its_parts_looked_up_by_hand():
    m = model()
    x, u = torch.randn(2, T, N, 1, dtype=torch.float64), calendar(first_slot=280, weekday=4)
    e = m.embedding
    slots = (280 + torch.arange(T)).clamp(max=287)  # 280 + 11 = 291 > 287: the fraction saturates at the day's end
    u[..., 0] = (slots.double() / 288.0).view(1, T, 1)
    expected = (x @ e.value.weight.T + e.value.bias + e.calendar.tod.weight[slots].view(1, T, 1, -1)
                + e.calendar.dow.weight[4] + e.calendar.node + e.adaptive)
    torch.testing.assert_close(m.encode(x, u), expected)


def test_window_summary_and_readout_embedding_by_hand():
    m = model(embedding_skip=True)
    h = torch.randn(2, T, N, 8, dtype=torch.float64)
    u = calendar(first_slot=10, weekday=6)
    w = m.summary.lin.weight.view(16, T, 8)  # flattened step-major: column t * d + c
    expected = torch.einsum("btnc,otc->bno", h, w) + m.summary.lin.bias
    torch.testing.assert_close(m.summary(h), expected)
    h0 = torch.randn(2, T, N, 8, dtype=torch.float64)
    w0 = m.skip.lin.weight.view(16, T, 8)
    skip = torch.einsum("btnc,otc->bno", h0, w0) + m.skip.lin.bias
    r = m.readout_embedding
    last = r.tod.weight[10 + T - 1] + r.dow.weight[6] + r.node
    torch.testing.assert_close(m.summarize(h, h0, u), expected + skip + last)


def test_head_maps_each_node_vector_to_all_horizon_steps():
    m = model()
    z = torch.randn(2, N, 16, dtype=torch.float64)
    y = m.head(z)
    assert y.shape == (2, 12, N, 1)
    with torch.no_grad():
        m.head.out.weight[4] += 1.0  # row 4 = step 5 of the single output channel
    y2 = m.head(z)
    changed = (y2 - y).abs().amax(dim=(0, 2, 3)) > 0
    assert changed.tolist() == [k == 4 for k in range(12)]


@pytest.mark.parametrize("name", ["tas_attn_none", "tts_attn_none"])
def test_forward_backward_shapes_and_every_parameter_learns(name):
    m = model(name).train()
    y = m(torch.randn(3, T, N, 1, dtype=torch.float64), EDGE_INDEX, EDGE_WEIGHT.double(), u=calendar(3))
    assert y.shape == (3, 12, N, 1) and torch.isfinite(y).all()
    y.square().mean().backward()
    for pname, p in m.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0, pname


def test_variants_reach_every_attention_layer():
    expect = {"noresid": ("none", False), "none": ("none", True), "mask": ("mask", True),
              "dropout": ("dropout", True), "penalty": ("penalty", True)}
    for arch, layers in (("tas_attn", 2), ("tts_attn", 1)):  # T&S: two blocks; TTS: one temporal block
        for variant, (diag, residual) in expect.items():
            att = [l for l in stgnn_diag.create_model(f"{arch}_{variant}", n_nodes=N).modules()
                   if isinstance(l, TemporalAttention)]
            assert len(att) == layers and all(a.diag == diag and a.residual == residual for a in att)


def _node_grad(m, out_node):
    x = torch.randn(1, T, N, 1, dtype=torch.float64, requires_grad=True)
    h = m.encode(x, calendar(1))
    for tb in m.temporal:
        h = tb(h)
    return torch.autograd.grad(h[0, :, out_node].sum(), x)[0][0, :, :, 0]  # [t, n]


def test_tts_temporal_stage_keeps_nodes_apart_and_its_graph_stage_mixes_them():
    m = model("tts_attn_none")
    g = _node_grad(m, 1)
    assert g[:, 0].abs().sum() == 0 and g[:, 1].abs().sum() > 0
    x = torch.randn(1, T, N, 1, dtype=torch.float64, requires_grad=True)
    y = m(x, EDGE_INDEX, EDGE_WEIGHT.double(), u=calendar(1))
    g = torch.autograd.grad(y[0, :, 1].sum(), x)[0][0, :, :, 0]
    assert g[:, 0].abs().sum() > 0  # edge 0 -> 1 after the summary
    assert g[:, 4].abs().sum() > 0  # two hops: 4 -> 0 -> 1


def test_tas_mixes_nodes_at_every_step_inside_the_first_block():
    m = model("tas_attn_none", k=1, adaptive=False)  # the sensor graph alone (the learned one reaches every node)
    x = torch.randn(1, T, N, 1, dtype=torch.float64, requires_grad=True)
    h = m.spatial[0].conv(m.temporal[0](m.encode(x, calendar(1))), EDGE_INDEX, EDGE_WEIGHT.double())
    g = torch.autograd.grad(h[0, 3, 1].sum(), x)[0][0, :, :, 0].abs().sum(0)  # [n]
    # one hop both ways: node 1 hears itself, 0 (0 -> 1) and 2, 3 (1 -> 2, 1 -> 3 backwards), not 4
    assert (g[[0, 1, 2, 3]] > 0).all() and g[4] == 0


def test_spatial_on_steps_puts_the_tts_graph_layers_before_the_summary():
    m = model("tts_attn_none", spatial_on="steps")
    assert m.spatial[0].conv.in_channels == 8
    y = m(torch.randn(2, T, N, 1, dtype=torch.float64), EDGE_INDEX, EDGE_WEIGHT.double(), u=calendar())
    assert y.shape == (2, 12, N, 1)
    with pytest.raises(ValueError, match="spatial_on"):
        model("tts_attn_none", spatial_on="nodes")


def test_errors_name_what_is_missing():
    with pytest.raises(ValueError, match="n_nodes"):
        stgnn_diag.create_model("tts_attn_none")
    with pytest.raises(ValueError, match="exog_size >= 8"):
        stgnn_diag.create_model("tts_attn_none", n_nodes=N, exog_size=1)
    # exog_size=0 is "no calendar": the calendar embeddings are switched off, not an error
    assert stgnn_diag.create_model("tas_attn_none", n_nodes=N, exog_size=0).config["model_kwargs"]["tod_embedding"] == 0
    with pytest.raises(ValueError, match="no part of the model reads u"):
        stgnn_diag.create_model("tts_attn_none", n_nodes=N, tod_embedding=0, dow_embedding=False)
    m = model()
    with pytest.raises(ValueError, match="pass u"):
        m(torch.randn(1, T, N, 1, dtype=torch.float64), EDGE_INDEX)
    # without covariates and node tables: a model of the values alone
    bare = model(exog_size=0, tod_embedding=0, dow_embedding=False, node_embedding=False, adaptive_embedding=False,
                 n_nodes=None)
    assert bare(torch.randn(1, T, 7, 1, dtype=torch.float64), EDGE_INDEX).shape == (1, 12, 7, 1)


@pytest.mark.parametrize("name", ["tas_attn_penalty", "tts_attn_none", "tas_template_none"])
def test_reset_parameters_restores_a_fresh_models_initialisation(name):
    """Fresh vs scrambled-then-reset: each weight's spread matches (TemporalAttention keeps its Xavier init,
    which nn.Linear's default would halve for the 3d x d projection), biases of the attention are zero again."""
    torch.manual_seed(0)
    fresh = stgnn_diag.create_model(name, n_nodes=50, hidden_size=32)
    model = stgnn_diag.create_model(name, n_nodes=50, hidden_size=32)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(7.0).add_(3.0)
    model.reset_parameters()
    ref = dict(fresh.named_parameters())
    for pname, p in model.named_parameters():
        if p.numel() >= 256:
            ratio = float(p.detach().std() / ref[pname].detach().std())
            assert 0.85 < ratio < 1.15, (pname, ratio)
        if "attention.qkv.bias" in pname or "attention.out.bias" in pname:
            assert torch.count_nonzero(p) == 0, pname


def test_the_learned_adjacency_of_tas_reaches_beyond_the_sensor_graph():
    """The T&S entries' default learned adjacency: node 1 hears node 4 (no edge path of one hop) after one layer."""
    m = model("tas_attn_none", k=1)
    assert m.spatial[0].conv.adaptive is not None
    x = torch.randn(1, T, N, 1, dtype=torch.float64, requires_grad=True)
    h = m.spatial[0].conv(m.temporal[0](m.encode(x, calendar(1))), EDGE_INDEX, EDGE_WEIGHT.double())
    g = torch.autograd.grad(h[0, 3, 1].sum(), x)[0][0, :, :, 0].abs().sum(0)
    assert (g > 0).all()
