"""One test parametrised over every registered model (timm style), plus registry behaviour."""
import io

import pytest
import torch

import stgnn_diag
from stgnn_diag.zoo import UnknownModelError, get_entry
from tests.calendar import calendar_u

N = 5
EDGE_INDEX = torch.tensor([[0, 1, 2, 3, 4, 1], [1, 2, 3, 4, 0, 3]])
EDGE_WEIGHT = torch.rand(6) + 0.1
NAMES = stgnn_diag.list_models(native=True)


def small(name, **kw):
    """The entry at a small width (fast) on the 5-node test graph, keeping its arrangement and attention settings."""
    entry = get_entry(name)
    heads = entry.defaults.get("heads", 4)
    return stgnn_diag.create_model(name, **{"hidden_size": 4 * heads, "n_nodes": N, **kw})


def inputs(model, batch=2, dtype=torch.float32):
    x = torch.randn(batch, model.window, N, model.input_size, dtype=dtype)
    u = calendar_u(batch, model.window, c=model.exog_size, dtype=dtype) if model.exog_size else None
    return x, u


@pytest.mark.parametrize("name", NAMES)
def test_registered_model(name):
    torch.manual_seed(0)
    model = small(name)
    x, u = inputs(model)
    y = model(x, EDGE_INDEX, EDGE_WEIGHT, u=u)
    assert y.shape == (2, model.horizon, N, model.output_size)
    assert torch.isfinite(y).all()
    # backward reaches every parameter with a finite gradient
    y.square().mean().backward()
    for pname, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), pname
    # state_dict round trip into a freshly created model gives identical outputs (eval mode)
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    clone = small(name)
    clone.load_state_dict(torch.load(buf, weights_only=True))
    model.eval(), clone.eval()
    torch.testing.assert_close(clone(x, EDGE_INDEX, EDGE_WEIGHT, u=u), model(x, EDGE_INDEX, EDGE_WEIGHT, u=u))
    # float64
    model64 = small(name).double().eval()
    x64, u64 = inputs(model64, dtype=torch.float64)
    assert model64(x64, EDGE_INDEX, EDGE_WEIGHT.double(), u=u64).dtype == torch.float64
    # exogenous covariates, shared across nodes [b, t, e] or per node [b, t, n, e]
    exog = 8 if get_entry(name).defaults.get("dow_embedding") else 3  # the forecasters read the weekday from 8
    with_u = small(name, exog_size=exog).eval()
    u3 = calendar_u(2, with_u.window, c=exog)
    y_shared = with_u(x, EDGE_INDEX, EDGE_WEIGHT, u=u3)
    y_nodes = with_u(x, EDGE_INDEX, EDGE_WEIGHT, u=u3.unsqueeze(2).expand(-1, -1, N, -1))
    torch.testing.assert_close(y_shared, y_nodes)
    assert not torch.allclose(y_shared, with_u(x, EDGE_INDEX, EDGE_WEIGHT, u=calendar_u(2, with_u.window, c=exog)))


def test_paper_variants_are_registered_for_both_arrangements():
    for arch in ("tas_attn", "tts_attn", "tas_template", "tts_template"):
        assert stgnn_diag.list_models(f"{arch}_*") == sorted(
            f"{arch}_{v}" for v in ("noresid", "none", "mask", "dropout", "penalty"))
    assert "paper_tas" in stgnn_diag.list_models()


def test_variant_settings_reach_the_attention_layers():
    from stgnn_diag.nn import TemporalAttention
    expect = {"noresid": ("none", False), "none": ("none", True), "mask": ("mask", True),
              "dropout": ("dropout", True), "penalty": ("penalty", True)}
    for variant, (diag, residual) in expect.items():
        layers = [m for m in stgnn_diag.create_model(f"tts_template_{variant}").modules()
                  if isinstance(m, TemporalAttention)]
        assert len(layers) == 3 and all(m.diag == diag and m.residual == residual for m in layers)


def test_paper_tas_configuration():
    from stgnn_diag.nn import TemporalAttention
    m = stgnn_diag.create_model("paper_tas")
    attn = [l for l in m.modules() if isinstance(l, TemporalAttention)]
    assert len(attn) == 12 and all(a.heads == 8 and a.head_dim == 9 for a in attn)
    assert m.pos_encoding.kind == "tape" and m.exog_size == 1 and m.exog_mode == "blocks"


def test_unknown_name_suggests_close_matches():
    with pytest.raises(UnknownModelError, match="tas_attn_mask"):
        stgnn_diag.create_model("tas_attn_masked")
    with pytest.raises(ValueError, match="Unknown model"):
        stgnn_diag.create_model("nope:Model")


def test_register_model_decorator():
    from stgnn_diag.models import TTSAttentionModel
    from stgnn_diag.zoo import registry

    @stgnn_diag.register_model(name="test_tiny_tts")
    def tiny(input_size=1, temporal_layers=1, spatial_layers=1, hidden_size=8, heads=2, **kw):
        """A tiny TTS model for tests."""
        return TTSAttentionModel(input_size, temporal_layers=temporal_layers, spatial_layers=spatial_layers,
                                 hidden_size=hidden_size, heads=heads, **kw)
    try:
        assert "test_tiny_tts" in stgnn_diag.list_models("test_*")
        assert get_entry("test_tiny_tts").defaults["hidden_size"] == 8
        assert stgnn_diag.create_model("test_tiny_tts", hidden_size=16).hidden_size == 16
        with pytest.raises(ValueError, match="already registered"):
            stgnn_diag.register_model(tiny, name="test_tiny_tts")
    finally:
        registry._ENTRIES.pop("test_tiny_tts")


@pytest.mark.parametrize("arch", ["tas_template_none", "tts_template_none"])
def test_bad_input_errors(arch):
    model = small(arch, n_nodes=N)
    x, _ = inputs(model)
    with pytest.raises(ValueError, match=r"\[batch, time, nodes, features\]"):
        model(x[0], EDGE_INDEX)
    with pytest.raises(ValueError, match="n_nodes=5"):
        model(torch.randn(2, 12, N + 1, 1), EDGE_INDEX)
    with pytest.raises(ValueError, match="refers to node 7"):
        small(arch, n_nodes=None)(x, torch.tensor([[0, 7], [1, 2]]))
    with pytest.raises(ValueError, match="window=12"):
        model(torch.randn(2, 13, N, 1), EDGE_INDEX)
    with pytest.raises(ValueError, match="input_size=1"):
        model(torch.randn(2, 12, N, 2), EDGE_INDEX)
    with pytest.raises(ValueError, match="exog_size=0"):
        model(x, EDGE_INDEX, u=torch.rand(2, 12, 2))
    with pytest.raises(ValueError, match="pass u"):
        small(arch, exog_size=2)(x, EDGE_INDEX)
    with pytest.raises(ValueError, match="Unknown graph_conv"):
        small(arch, graph_conv="cheb")


def test_gcn_and_adaptive_options():
    x = torch.randn(2, 12, N, 1)
    for kw in (dict(graph_conv="gcn"), dict(adaptive=True, n_nodes=N), dict(adaptive="lowrank", n_nodes=N)):
        y = small("tas_template_none", **kw)(x, EDGE_INDEX, EDGE_WEIGHT)
        assert y.shape == (2, 12, N, 1) and torch.isfinite(y).all()
    with pytest.raises(ValueError, match="needs n_nodes"):
        small("tas_template_none", adaptive=True, n_nodes=None)
    with pytest.raises(ValueError, match="adaptive must be one of"):
        small("tas_template_none", adaptive="dense", n_nodes=N)
    with pytest.raises(ValueError, match="graph_conv='diffusion' only"):
        small("tas_template_none", adaptive="lowrank", n_nodes=N, graph_conv="gcn")


def test_arrangements_differ_in_where_nodes_mix():
    """TTS: the temporal stage sees each node's own series only; T&S mixes nodes after block 1."""
    torch.manual_seed(0)
    x = torch.randn(1, 12, N, 1, requires_grad=True)
    tts = small("tts_template_none")
    h = tts.encode(x)
    for ta in tts.temporal:
        h = ta(h)
    grad = torch.autograd.grad(h[0, :, 1].sum(), x)[0][0, :, :, 0]  # [t, n]
    assert grad[:, 0].abs().sum() == 0 and grad[:, 1].abs().sum() > 0
    tas = small("tas_template_none")
    h = tas.spatial[0](tas.temporal[0](tas.encode(x)), EDGE_INDEX, EDGE_WEIGHT)
    grad = torch.autograd.grad(h[0, :, 1].sum(), x)[0][0, :, :, 0]
    assert grad[:, 0].abs().sum() > 0  # edge 0 -> 1
