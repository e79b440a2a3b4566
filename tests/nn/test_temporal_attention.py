import math

import numpy as np
import pytest
import torch

from stgnn_diag.nn import TemporalAttention

B, T, N, D, H = 2, 6, 3, 8, 2


def reference(layer: TemporalAttention, x: torch.Tensor, drop=None):
    """Independent numpy attention: loops over batch, node, head and query with a hand softmax.

    ``drop`` is a bool [T] of removed diagonal logits (dropout mode). Returns (y, attn)."""
    xn = x.detach().double().numpy()
    wqkv, bqkv = layer.qkv.weight.detach().double().numpy(), layer.qkv.bias.detach().double().numpy()
    wo, bo = layer.out.weight.detach().double().numpy(), layer.out.bias.detach().double().numpy()
    pen = (layer.regularizer.penalty.detach().double().numpy() * np.ones(H) if layer.diag == "penalty"
           else np.zeros(H))
    dk = D // H
    b_, t_, n_, _ = xn.shape
    y = np.zeros_like(xn)
    attn = np.zeros((b_, n_, H, t_, t_))
    for b in range(b_):
        for n in range(n_):
            qkv = xn[b, :, n] @ wqkv.T + bqkv  # [T, 3D]
            q, k, v = qkv[:, :D], qkv[:, D:2 * D], qkv[:, 2 * D:]
            heads_out = np.zeros((t_, D))
            for h in range(H):
                sl = slice(h * dk, (h + 1) * dk)
                for i in range(t_):
                    allowed = [j for j in range(t_) if not (layer.causal and j > i)]
                    if layer.diag == "mask" or (drop is not None and drop[i]):
                        allowed = [j for j in allowed if j != i]
                    if not allowed:
                        continue  # defined: no keys -> zero weights, zero attention output
                    logits = np.array([q[i, sl] @ k[j, sl] / math.sqrt(dk)
                                       + (pen[h] if (layer.diag == "penalty" and j == i) else 0.0)
                                       for j in allowed])
                    e = np.exp(logits - logits.max())
                    w = e / e.sum()
                    attn[b, n, h, i, allowed] = w
                    heads_out[i, sl] = sum(wj * v[j, sl] for wj, j in zip(w, allowed))
            out = heads_out @ wo.T + bo
            empty = attn[b, n, 0].sum(-1) == 0
            out[empty] = 0.0
            y[b, :, n] = out + (xn[b, :, n] if layer.residual else 0.0)
    return y, attn


MODES = [("none", {}), ("mask", {}), ("dropout", {"diag_p": 0.5}), ("penalty", {"diag_penalty": -0.7})]


@pytest.mark.parametrize("mode,kw", MODES)
@pytest.mark.parametrize("residual", [True, False])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("backend", ["sdpa", "explicit"])
def test_matches_hand_written_softmax_in_eval(mode, kw, residual, causal, backend):
    torch.manual_seed(0)
    layer = TemporalAttention(D, H, diag=mode, residual=residual, causal=causal, backend=backend, **kw)
    layer = layer.double().eval()
    torch.nn.init.normal_(layer.qkv.bias)
    x = torch.randn(B, T, N, D, dtype=torch.float64)
    y_ref, a_ref = reference(layer, x)  # eval: dropout mode is a no-op, so no drop pattern
    y_fast = layer(x)
    y_slow, attn = layer(x, return_attention=True)
    assert attn.shape == (B, N, H, T, T)
    np.testing.assert_allclose(y_fast.detach().numpy(), y_ref, atol=1e-10)
    np.testing.assert_allclose(y_slow.detach().numpy(), y_ref, atol=1e-10)
    np.testing.assert_allclose(attn.detach().numpy(), a_ref, atol=1e-12)


def test_mask_gives_exactly_zero_diagonal_weights():
    layer = TemporalAttention(D, H, diag="mask")
    for mode in ("train", "eval"):
        getattr(layer, mode)()
        _, attn = layer(torch.randn(B, T, N, D), return_attention=True)
        assert torch.all(torch.diagonal(attn, dim1=-2, dim2=-1) == 0)
        torch.testing.assert_close(attn.sum(-1), torch.ones(B, N, H, T))


def test_dropout_is_noop_in_eval():
    torch.manual_seed(1)
    drop = TemporalAttention(D, H, diag="dropout", diag_p=0.9).eval()
    plain = TemporalAttention(D, H).eval()
    plain.load_state_dict(drop.state_dict())
    x = torch.randn(B, T, N, D)
    torch.testing.assert_close(drop(x), plain(x))


def test_dropout_train_rows_are_plain_or_masked_and_shared():
    torch.manual_seed(2)
    layer = TemporalAttention(D, H, diag="dropout", diag_p=0.5).double().train()
    x = torch.randn(B, T, N, D, dtype=torch.float64)
    plain = TemporalAttention(D, H).double().eval()
    masked = TemporalAttention(D, H, diag="mask").double().eval()
    plain.load_state_dict(layer.state_dict())
    masked.load_state_dict(layer.state_dict())
    _, a_plain = plain(x, return_attention=True)
    _, a_mask = masked(x, return_attention=True)
    seen_drop, seen_keep = False, False
    for _ in range(10):
        _, a = layer(x, return_attention=True)
        is_plain = torch.isclose(a, a_plain).all(-1)  # [B, N, H, T]
        is_mask = torch.isclose(a, a_mask).all(-1)
        assert torch.all(is_plain | is_mask)
        dropped = is_mask & ~is_plain
        # one Bernoulli draw of length T, shared by batch, nodes and heads
        assert torch.all(dropped == dropped[0, 0, 0])
        seen_drop |= bool(dropped.any())
        seen_keep |= bool((~dropped).any())
    assert seen_drop and seen_keep


@pytest.mark.parametrize("backend", ["sdpa", "explicit"])
def test_dropout_train_fast_path_matches_reference_with_same_draw(backend):
    layer = TemporalAttention(D, H, diag="dropout", diag_p=0.5, backend=backend).double().train()
    x = torch.randn(B, T, N, D, dtype=torch.float64)
    torch.manual_seed(3)
    drop = torch.rand(T) < 0.5  # the layer draws exactly this vector after the same seed
    torch.manual_seed(3)
    y = layer(x)
    y_ref, _ = reference(layer, x, drop=drop.numpy())
    np.testing.assert_allclose(y.detach().numpy(), y_ref, atol=1e-10)


def test_learnable_penalty_per_head_gets_gradients_and_matches_reference():
    torch.manual_seed(4)
    layer = TemporalAttention(D, H, diag="penalty", diag_penalty=-0.05, learn_penalty=True).double()
    assert isinstance(layer.regularizer.penalty, torch.nn.Parameter) and layer.regularizer.penalty.shape == (H,)
    torch.testing.assert_close(layer.regularizer.penalty.detach(), torch.full((H,), -0.05, dtype=torch.float64))
    with torch.no_grad():
        layer.regularizer.penalty.copy_(torch.tensor([-2.0, 1.5]))
    x = torch.randn(B, T, N, D, dtype=torch.float64)
    y = layer(x)
    y_ref, _ = reference(layer, x)
    np.testing.assert_allclose(y.detach().numpy(), y_ref, atol=1e-10)
    y.square().sum().backward()
    assert layer.regularizer.penalty.grad is not None and torch.all(layer.regularizer.penalty.grad != 0)


@pytest.mark.parametrize("mode,kw", MODES)
@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("backend", ["sdpa", "explicit"])
def test_causal_is_finite_with_every_mode(mode, kw, training, backend):
    torch.manual_seed(5)
    layer = TemporalAttention(D, H, diag=mode, causal=True, dropout=0.1, backend=backend, **kw).train(training)
    x = torch.randn(B, T, N, D, requires_grad=True)
    for _ in range(5):  # several dropout draws, including ones that remove step 0
        y = layer(x)
        y2, attn = layer(x, return_attention=True)
        assert torch.isfinite(y).all() and torch.isfinite(y2).all() and torch.isfinite(attn).all()
        (y.sum() + y2.sum()).backward()
        assert torch.isfinite(x.grad).all()
        assert torch.all(attn.triu(1) == 0)


def test_short_softmax_matches_torch_and_gradcheck():
    from stgnn_diag.nn.short_softmax import short_softmax
    logits = torch.randn(5, 7, 12, dtype=torch.float64)
    logits[..., 3] = float("-inf")
    torch.testing.assert_close(short_softmax(logits), torch.softmax(logits, -1))
    assert torch.autograd.gradcheck(short_softmax, (torch.randn(3, 4, 6, dtype=torch.float64, requires_grad=True),))
    # usable under torch.func: reverse and forward Jacobians equal torch.softmax's
    x = torch.randn(2, 5, dtype=torch.float64)
    ref = torch.func.jacrev(lambda t: torch.softmax(t, -1))(x)
    torch.testing.assert_close(torch.func.jacrev(short_softmax)(x), ref)
    torch.testing.assert_close(torch.func.jacfwd(short_softmax)(x), ref)


@pytest.mark.parametrize("backend", ["sdpa", "explicit"])
def test_causal_mask_row_zero_returns_the_residual(backend):
    layer = TemporalAttention(D, H, diag="mask", causal=True, backend=backend)
    x = torch.randn(B, T, N, D)
    y, attn = layer(x, return_attention=True)
    assert torch.all(attn[..., 0, :] == 0)
    torch.testing.assert_close(y[:, 0], x[:, 0])
    torch.testing.assert_close(layer(x)[:, 0], x[:, 0])
    noresid = TemporalAttention(D, H, diag="mask", causal=True, residual=False, backend=backend)
    assert torch.all(noresid(x)[:, 0] == 0)


def test_residual_off_is_the_attention_branch_alone():
    torch.manual_seed(6)
    a = TemporalAttention(D, H)
    b = TemporalAttention(D, H, residual=False)
    b.load_state_dict(a.state_dict())
    x = torch.randn(B, T, N, D)
    torch.testing.assert_close(a(x) - x, b(x))


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(dim=10, heads=3), ValueError, "divisible"),
    (dict(dim=8, heads=2, diag="diagonal"), ValueError, "Unknown diag"),
    (dict(dim=8, heads=2, diag="dropout", diag_p=1.0), ValueError, r"\[0, 1\)"),
    (dict(dim=8, heads=2, diag="dropout", diag_p=-0.1), ValueError, r"\[0, 1\)"),
    (dict(dim=8, heads=2, diag="dropout"), ValueError, "diag_p > 0"),
    (dict(dim=8, heads=2, diag="none", diag_p=0.3), ValueError, "no effect"),
    (dict(dim=8, heads=2, diag="mask", diag_penalty=-1.0), ValueError, "no effect"),
    (dict(dim=8, heads=2, learn_penalty=True), ValueError, "penalty"),
    (dict(dim=8, heads=2, backend="flash"), ValueError, "Unknown backend"),
])
def test_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        TemporalAttention(**kwargs)


def test_bad_input_rank_and_width():
    layer = TemporalAttention(D, H)
    with pytest.raises(ValueError, match="rank 3"):
        layer(torch.randn(T, N, D))
    with pytest.raises(ValueError, match="channels"):
        layer(torch.randn(B, T, N, D + 1))
    with pytest.raises(TypeError):
        layer(np.zeros((B, T, N, D)))
