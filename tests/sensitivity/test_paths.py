import pytest
import torch

from stgnn_diag.nn import TemporalAttention
from stgnn_diag.sensitivity import attention_paths, autograd_blocks, path_bounds, sequence_length_sweep

MODES = [("none", {}), ("mask", {}), ("penalty", {"diag_penalty": -0.7}), ("dropout", {"diag_p": 0.5})]


def layer(mode="none", d=8, heads=2, seed=0, **kw):
    torch.manual_seed(seed)
    lay = TemporalAttention(d, heads, diag=mode, **kw).double()
    with torch.no_grad():
        lay.qkv.bias.normal_()
        lay.out.bias.normal_()
    return lay


@pytest.mark.parametrize("mode,kw", MODES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("residual", [True, False])
def test_paths_sum_to_the_autograd_jacobian(mode, kw, causal, residual):
    lay = layer(mode, causal=causal, residual=residual, **kw)
    x = torch.randn(6, 8, dtype=torch.float64)
    dec = attention_paths(lay, x)
    ref = autograd_blocks(lay, x)
    torch.testing.assert_close(dec.total, ref, rtol=1e-10, atol=1e-12)
    eye = torch.eye(6, dtype=torch.bool)
    assert dec.query[~eye].abs().max() == 0 and dec.residual[~eye].abs().max() == 0
    assert (dec.residual[eye] != 0).any() == residual


def test_subset_of_rows_and_learned_penalty():
    lay = layer("penalty", diag_penalty=-0.3, learn_penalty=True)
    with torch.no_grad():
        lay.regularizer.penalty.copy_(torch.tensor([-1.0, 0.5]))
    x = torch.randn(5, 8, dtype=torch.float64)
    dec = attention_paths(lay, x, rows=[3, 1])
    torch.testing.assert_close(dec.total, autograd_blocks(lay, x)[[3, 1]], rtol=1e-10, atol=1e-12)


def test_mask_zeroes_the_value_path_on_the_diagonal():
    x = torch.randn(7, 8, dtype=torch.float64)
    masked = attention_paths(layer("mask"), x)
    plain = attention_paths(layer("none"), x)  # same weights (same seed)
    idx = torch.arange(7)
    assert masked.value[idx, idx].abs().max() == 0 and masked.key[idx, idx].abs().max() == 0
    assert plain.value[idx, idx].abs().min() > 0
    assert masked.query[idx, idx].abs().max() > 0  # the query path still sits on the diagonal
    assert masked.attention.diagonal(dim1=-2, dim2=-1).abs().max() == 0


def test_uniform_attention_off_diagonal_scales_as_one_over_t():
    # zero query weights and bias: every logit is 0, attention is exactly uniform (1/T)
    lay = layer("none", d=6, heads=2, seed=3)
    with torch.no_grad():
        lay.qkv.weight[:6].zero_()
        lay.qkv.bias[:6].zero_()
    w_ov = (lay.out.weight @ lay.qkv.weight[12:]).detach()
    scaled = []
    for t in (3, 6, 12, 24):
        x = torch.randn(t, 6, dtype=torch.float64)
        j = autograd_blocks(lay, x)  # independent of the closed forms
        off = ~torch.eye(t, dtype=torch.bool)
        blocks = j[off]  # [t * (t - 1), d, d]
        torch.testing.assert_close(blocks * t, w_ov.expand_as(blocks), rtol=1e-10, atol=1e-12)
        scaled.append(float(torch.linalg.matrix_norm(blocks, ord=2).mean()) * t)
        assert path_bounds(lay, x).value_offdiag_uniform * t == pytest.approx(float(torch.linalg.matrix_norm(w_ov, 2)))
    assert max(scaled) - min(scaled) < 1e-9


@pytest.mark.parametrize("mode,kw", MODES)
def test_bounds_hold(mode, kw):
    lay = layer(mode, d=8, heads=2, seed=1, **kw)
    x = torch.randn(9, 8, dtype=torch.float64)
    dec = attention_paths(lay, x)
    b = path_bounds(lay, x)
    spec = lambda m: torch.linalg.matrix_norm(m, ord=2)  # noqa: E731
    off = ~torch.eye(9, dtype=torch.bool)
    assert float(spec(dec.value)[off].max()) <= b.value_offdiag_bound * (1 + 1e-9)
    assert float(spec(dec.key)[off].max()) <= b.key_offdiag_bound * (1 + 1e-9)
    assert float(spec(dec.query)[~off].max()) <= b.query_bound * (1 + 1e-9)
    assert b.query_bound == pytest.approx(b.query_constant / 2.0)  # d_k = 4


def test_length_sweep_decays_like_one_over_t():
    res = sequence_length_sweep(dim=8, heads=2, lengths=(4, 8, 16, 32), max_rows=4, seed=0)
    assert res.modes() == ["none", "mask", "penalty", "dropout"]
    for mode in res.modes():
        assert -1.25 < res.decay_exponent(mode) < -0.75
        assert res.lengths(mode) == [4, 8, 16, 32]
    mask_rows = [r for r in res.rows if r["mode"] == "mask"]
    assert all(r["attn_diag"] == 0 and r["diag_value"] == 0 for r in mask_rows)
    assert all(r["diag_residual"] == pytest.approx(1.0) for r in res.rows)
