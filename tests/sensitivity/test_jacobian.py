import warnings

import numpy as np
import pytest
import torch
from torch import nn

from stgnn_diag.sensitivity import TrainingModeWarning, spatiotemporal_jacobian
from stgnn_diag.nn import DiffusionConv

from .conftest import EDGE_INDEX, H, N, T, autograd_raw, tiny, window

MODELS = [
    ("tas_template_none", {}),
    ("tts_template_mask", {}),
    ("tas_template_penalty", dict(exog_size=2, exog_mode="blocks", learn_penalty=True)),
    ("tts_template_noresid", dict(graph_conv="gcn", input_size=2, output_size=3)),
    ("tas_template_dropout", dict(adaptive=True, n_nodes=N, causal=True, activation="gelu")),
    ("tts_template_none", dict(n_nodes=N, exog_size=8, node_embedding=True, tod_embedding=288)),
]
METHODS = ["structured", "reverse", "forward", "autograd"]


@pytest.mark.parametrize("name,kw", MODELS)
def test_every_engine_equals_autograd(name, kw, edge_weight):
    model = tiny(name, **kw)
    x, u = window(model)
    ref = autograd_raw(model, x, u, edge_weight)
    assert ref.abs().max() > 1e-3  # a non-trivial Jacobian
    for method in METHODS:
        got, info = spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, u, norm=None, method=method,
                                            return_info=True)
        assert info["method"] == method
        assert got.shape == ref.shape
        torch.testing.assert_close(got, ref, rtol=1e-9, atol=1e-11, msg=f"{method}")


FORECASTERS = [
    ("tas_attn_none", {}),
    ("tts_attn_mask", {}),
    ("tts_attn_penalty", dict(learn_penalty=True, spatial_on="steps")),
    ("tas_attn_dropout", dict(adaptive=True, causal=True)),
    ("tas_attn_none", dict(adaptive="lowrank", k=1, ffn_size=0, heads=1)),
    ("tas_attn_penalty", dict(patch_size=2, heads=1)),
    ("tts_attn_none", dict(level_skip=True)),
]


@pytest.mark.parametrize("name,kw", FORECASTERS)
def test_forecaster_family_every_dense_engine_equals_autograd(name, kw, edge_weight):
    """The zoo's forecasters go through the torch.func engines (auto falls back from the structured one)."""
    kw = {"n_nodes": N, "ffn_size": 8, "readout_size": 8, "readout_layers": 1, **kw}
    model = tiny(name, **kw)
    x, _ = window(model)
    u = torch.zeros(T, N, 8, dtype=torch.float64)
    u[:, :, 0] = (200 + torch.arange(T, dtype=torch.float64)).view(T, 1) / 288.0
    u[:, :, 3] = 1.0
    ref = autograd_raw(model, x, u, edge_weight)
    assert ref.abs().max() > 1e-3
    for method in ("auto", "reverse", "forward", "autograd"):
        got, info = spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, u, norm=None, method=method,
                                            return_info=True)
        assert info["method"] in ("reverse", "forward", "autograd")
        torch.testing.assert_close(got, ref, rtol=1e-9, atol=1e-11, msg=f"{method}")
    with pytest.raises(ValueError, match="structured"):
        spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, u, method="structured")


@pytest.mark.parametrize("patch_size", [1, 2])
def test_input_mask_model_every_engine_equals_autograd_with_the_mask_held_fixed(patch_size, edge_weight):
    """A missing reading's column is exactly zero; the observed reading standing in for it carries its influence."""
    model = tiny("tas_attn_none", n_nodes=N, ffn_size=8, readout_size=8, readout_layers=1, input_mask=True,
                 patch_size=patch_size, heads=1)
    x, _ = window(model)
    u = torch.zeros(T, N, 8, dtype=torch.float64)
    u[:, :, 0], u[:, :, 3] = 0.5, 1.0
    mask = torch.ones(T, N, 1, dtype=torch.bool)
    mask[1:3, 0] = False  # node 0 misses steps 1 and 2: step 0 stands in for them
    mask[0, 2] = False  # node 2 misses its first step: nothing stands in
    j = torch.autograd.functional.jacobian(
        lambda z: model(z, EDGE_INDEX, edge_weight, u=u.unsqueeze(0), x_mask=mask.unsqueeze(0)), x.unsqueeze(0))
    ref = j[0, :, :, :, 0]
    assert ref[..., 0, 0, :].abs().max() > 1e-3  # the stand-in
    assert float(ref[..., 1:3, 0, :].abs().max()) == 0.0 and float(ref[..., 0, 2, :].abs().max()) == 0.0
    for method in ("auto", "reverse", "forward", "autograd"):
        got = spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, u, x_mask=mask, norm=None, method=method)
        torch.testing.assert_close(got, ref, rtol=1e-9, atol=1e-11, msg=f"{method}")
    # without a mask every reading counts as observed
    full = spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, u, norm=None)
    torch.testing.assert_close(full, spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, u, norm=None,
                                                             x_mask=torch.ones_like(mask)))
    assert full[..., 1:3, 0, :].abs().max() > 1e-3
    with pytest.raises(ValueError, match="shape"):
        spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, u, x_mask=mask[:, :2])
    with pytest.raises(ValueError, match="reads no mask"):
        spatiotemporal_jacobian(tiny("tas_attn_none", n_nodes=N), x, EDGE_INDEX, edge_weight, u, x_mask=mask)


def _np_norm(block: np.ndarray, norm: str) -> float:
    if norm == "fro":
        return float(np.sqrt((block ** 2).sum()))
    if norm == "spectral":
        return float(np.linalg.svd(block, compute_uv=False)[0])
    if norm == "l1":
        return float(np.abs(block).sum())
    return float(np.abs(block).max())


@pytest.mark.parametrize("norm", ["fro", "spectral", "l1", "max"])
@pytest.mark.parametrize("method", ["structured", "reverse", "forward"])
def test_every_norm_option_against_numpy(norm, method, edge_weight):
    model = tiny("tts_template_penalty", input_size=2, output_size=3)
    x, u = window(model)
    ref = autograd_raw(model, x, u, edge_weight).numpy()  # [H, N, 3, T, N, 2]
    expect = np.empty((H, N, T, N))
    for a in range(H):
        for v in range(N):
            for s in range(T):
                for w in range(N):
                    expect[a, v, s, w] = _np_norm(ref[a, v, :, s, w, :], norm)
    got = spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, u, norm=norm, method=method)
    np.testing.assert_allclose(got.numpy(), expect, rtol=1e-9, atol=1e-12)


def test_selected_outputs_are_slices_of_the_full_jacobian(edge_weight):
    model = tiny("tas_template_mask")
    x, u = window(model)
    full = spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, u)
    for method in ("structured", "reverse", "forward"):
        part = spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, u, out_steps=[2, 0], out_nodes=[4, 1],
                                       method=method)
        torch.testing.assert_close(part, full[[2, 0]][:, [4, 1]])
    last = spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, u, out_steps=-1)
    torch.testing.assert_close(last, full[-1:])
    with pytest.raises(IndexError):
        spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, u, out_nodes=[N])


def test_wrt_encoded_and_hidden_output_equal_autograd(edge_weight):
    model = tiny("tas_template_none", exog_size=2)
    x, u = window(model)
    ei, ew, u4 = model.check_inputs(x.unsqueeze(0), EDGE_INDEX, edge_weight, u.unsqueeze(0))
    h0 = model.encode(x.unsqueeze(0), u4).detach()
    ref = torch.autograd.functional.jacobian(lambda h: model.decode(model.process(h, ei, ew, u4)), h0)
    ref = ref[0, :, :, :, 0]  # [H, N, 1, T, N, d]
    for method in ("auto", "reverse", "forward", "structured"):
        got, info = spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, u, wrt="encoded", norm=None,
                                            method=method, return_info=True)
        torch.testing.assert_close(got, ref, rtol=1e-9, atol=1e-11)
    assert info["method"] == "structured"
    ref_h = torch.autograd.functional.jacobian(
        lambda z: model.process(model.encode(z, u4), ei, ew, u4), x.unsqueeze(0))[0, :, :, :, 0]  # [T, N, d, T, N, 1]
    for method in ("structured", "reverse"):
        got = spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, u, output="hidden", norm=None, method=method)
        torch.testing.assert_close(got, ref_h, rtol=1e-9, atol=1e-11)


class PlainTSLModel(nn.Module):
    """A tsl-style model without encode/process/decode: linear encoder, diffusion conv, linear read-out."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(1, 6)
        self.conv = DiffusionConv(6, 6, k=1)
        self.dec = nn.Linear(6 * T, H)

    def forward(self, x, edge_index, edge_weight=None):
        h = torch.tanh(self.conv(self.enc(x), edge_index, edge_weight))  # [b, t, n, 6]
        b, t, n, f = h.shape
        return self.dec(h.permute(0, 2, 1, 3).reshape(b, n, t * f)).transpose(1, 2).unsqueeze(-1)


class _Cube(torch.autograd.Function):  # an old-style Function: torch.func transforms cannot trace it
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * g


class CustomFunctionModel(PlainTSLModel):
    def forward(self, x, edge_index, edge_weight=None):
        return _Cube.apply(super().forward(x, edge_index, edge_weight))


@pytest.mark.parametrize("cls", [PlainTSLModel, CustomFunctionModel])
def test_generic_tsl_model(cls, edge_weight):
    torch.manual_seed(0)
    model = cls().double().eval()
    x = torch.randn(T, N, 1, dtype=torch.float64)
    ref = torch.autograd.functional.jacobian(lambda z: model(z, EDGE_INDEX, edge_weight), x.unsqueeze(0))[0, :, :, :, 0]
    got, info = spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, norm=None, return_info=True)
    torch.testing.assert_close(got, ref, rtol=1e-9, atol=1e-12)
    assert info["fallback_reason"]  # not a zoo model: the structured engine declined, and said why
    assert info["method"] == ("reverse" if cls is PlainTSLModel else "autograd")
    with pytest.raises(ValueError, match="encode"):
        spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, wrt="encoded")
    with pytest.raises(ValueError, match="structured"):
        spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, method="structured")


def test_training_mode_switched_to_eval_warned_and_restored(edge_weight):
    model = tiny("tas_template_dropout", dropout=0.3, attn_dropout=0.2)
    x, u = window(model)
    ref = spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight)
    model.train()
    with pytest.warns(TrainingModeWarning, match="eval"):
        got, info = spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, return_info=True)
    assert info["switched_to_eval"]
    assert model.training and all(m.training for m in model.modules())
    torch.testing.assert_close(got, ref, rtol=0, atol=0)  # dropout off, diagonal dropout off, deterministic
    model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight)


def test_chunking_and_determinism(edge_weight):
    model = tiny("tts_template_none")
    x, u = window(model)
    one = spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight)
    many = spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, budget_mb=1e-6)  # one input node per chunk
    torch.testing.assert_close(one, many, rtol=1e-12, atol=1e-14)
    again = spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight)
    assert torch.equal(one, again)
    small = spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, method="reverse", chunk_size=1)
    torch.testing.assert_close(one, small, rtol=1e-9, atol=1e-12)


def test_structural_zeros_follow_the_receptive_field():
    # a path 0 -> 1 -> 2 -> 3 -> 4 and a TTS model with one 1-hop graph layer: only |u - v| <= 1 interacts
    model = tiny("tts_template_none", temporal_layers=1, spatial_layers=1, k=1)
    path = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4]])
    x, u = window(model)
    s = spatiotemporal_jacobian(model, x, path).sum((0, 2))  # [n_out, n_in]
    near = (torch.arange(N).view(-1, 1) - torch.arange(N).view(1, -1)).abs() <= 1
    assert (s[~near] == 0).all() and (s[near] > 0).all()


def test_bad_inputs(edge_weight):
    model = tiny()
    x, u = window(model)
    with pytest.raises(ValueError, match="one window"):
        spatiotemporal_jacobian(model, torch.randn(2, T, N, 1, dtype=torch.float64), EDGE_INDEX)
    with pytest.raises(ValueError, match="norm"):
        spatiotemporal_jacobian(model, x, EDGE_INDEX, norm="nuclear")
    with pytest.raises(ValueError, match="wrt"):
        spatiotemporal_jacobian(model, x, EDGE_INDEX, wrt="weights")
    with pytest.raises(ValueError, match="method"):
        spatiotemporal_jacobian(model, x, EDGE_INDEX, method="magic")


def test_work_counts_the_vectors_each_engine_carries():
    # path 0 - 1 - 2 - 3 - 4, one temporal and one 1-hop graph layer: after the graph layer the end nodes reach
    # 2 nodes and the inner ones 3 (13 rows); reverse mode carries [T, N] per output entry per sub-layer
    from stgnn_diag.sensitivity import StructuredJacobian
    model = tiny("tts_template_none", temporal_layers=1, spatial_layers=1, k=1, output_size=2)
    path = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4]])
    x, _ = window(model)
    w = StructuredJacobian(model, x.unsqueeze(0), path).work()
    per_row = T * model.input_size * T  # columns per input node x steps
    assert w["steps"] == [("temporal", N * per_row), ("graph", 13 * per_row)]
    assert w["reverse"] == (H * N * 2) * (T * N) * 2
    assert w["ratio"] == pytest.approx(w["reverse"] / (18 * per_row))


@pytest.mark.parametrize("max_padding", [0.0, 1e9])
def test_last_graph_step_with_and_without_the_read_out_contraction(max_padding, edge_weight, monkeypatch):
    # the engine contracts the last graph step with the read-out unless its padded layout is too wasteful;
    # both ways give the autograd Jacobian
    from stgnn_diag.sensitivity.structured import graph_step
    monkeypatch.setattr(graph_step, "MAX_PADDING", max_padding)
    for name, kw in [("tas_template_none", {}), ("tts_template_noresid", dict(graph_conv="gcn", output_size=3))]:
        model = tiny(name, **kw)
        x, u = window(model)
        got = spatiotemporal_jacobian(model, x, EDGE_INDEX, edge_weight, u, norm=None, method="structured")
        torch.testing.assert_close(got, autograd_raw(model, x, u, edge_weight), rtol=1e-9, atol=1e-11)
