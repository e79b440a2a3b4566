"""Diagonal regularizers as modules: their own state only, old checkpoints load, fixed <-> learnable penalties,
and a new regularizer is one class."""
from __future__ import annotations

import pytest
import torch

from stgnn_diag.nn import (DiagonalRegularizer, TemporalAttention, make_regularizer, register_regularizer,
                           regularizer_names)
from stgnn_diag.nn.regularizers import registry as reg_mod

D, H, T = 8, 2, 5


def _old_state(layer: TemporalAttention, penalty) -> dict:
    """The layer's state dict as it was written before the regularizers were modules: a ``penalty`` entry in
    every layer (a buffer ``[]``, or a ``[heads]`` parameter when learnable), none under ``regularizer.``."""
    sd = {k: v for k, v in layer.state_dict().items() if not k.startswith("regularizer.")}
    sd["penalty"] = torch.as_tensor(penalty, dtype=torch.float32)
    return sd


@pytest.mark.parametrize("diag,kw", [("none", {}), ("mask", {}), ("dropout", {"diag_p": 0.3})])
def test_only_the_penalty_has_state(diag, kw):
    layer = TemporalAttention(D, H, diag=diag, **kw)
    assert not [k for k in layer.state_dict() if "penalty" in k]
    assert type(layer.regularizer).name == diag == layer.diag


def test_old_checkpoints_load_in_every_mode():
    torch.manual_seed(0)
    x = torch.randn(2, T, 3, D)
    for diag, kw in (("none", {}), ("mask", {}), ("penalty", {"diag_penalty": -0.05})):
        src = TemporalAttention(D, H, diag=diag, **kw).eval()
        dst = TemporalAttention(D, H, diag=diag, **kw).eval()
        dst.load_state_dict(_old_state(src, -0.7 if diag == "penalty" else 0.0))  # strict
        if diag == "penalty":
            assert float(dst.regularizer.penalty) == pytest.approx(-0.7)
            src.regularizer.penalty.fill_(-0.7)
        torch.testing.assert_close(dst(x), src(x))


def test_fixed_and_learnable_penalties_load_into_each_other():
    fixed = TemporalAttention(D, H, diag="penalty", diag_penalty=-0.2)
    learn = TemporalAttention(D, H, diag="penalty", diag_penalty=0.0, learn_penalty=True)
    learn.load_state_dict(fixed.state_dict())
    torch.testing.assert_close(learn.regularizer.penalty.detach(), torch.full((H,), -0.2))
    assert isinstance(learn.regularizer.penalty, torch.nn.Parameter)
    back = TemporalAttention(D, H, diag="penalty", diag_penalty=0.0)
    back.load_state_dict(learn.state_dict())
    assert float(back.regularizer.penalty) == pytest.approx(-0.2)
    with torch.no_grad():
        learn.regularizer.penalty.copy_(torch.tensor([-1.0, 0.5]))
    with pytest.raises(RuntimeError, match="learn_penalty=True"):
        back.load_state_dict(learn.state_dict())


def test_static_biases_are_cached_per_length():
    mask = make_regularizer("mask")
    assert mask.removed(T) is mask.removed(T) and mask.removed(T + 1).shape == (T + 1, T + 1)


def test_unknown_and_ineffective_arguments():
    with pytest.raises(ValueError, match="choose one of"):
        make_regularizer("diagonal")
    with pytest.raises(ValueError, match="no effect"):
        make_regularizer("mask", diag_p=0.2)
    with pytest.raises(ValueError, match="diag_p > 0"):
        make_regularizer("dropout")


def test_a_new_regularizer_is_one_class():
    """A band regularizer (keys farther than 1 step removed), registered and used by name, against a
    hand-written softmax over the admissible keys."""

    @register_regularizer
    class Band(DiagonalRegularizer):
        name = "band_test"

        def removed(self, t, device=None):
            i = torch.arange(t, device=device)
            return (i[:, None] - i[None, :]).abs() > 1

    try:
        assert "band_test" in regularizer_names()
        torch.manual_seed(1)
        layer = TemporalAttention(D, 1, diag="band_test", residual=False).double().eval()
        x = torch.randn(1, T, 1, D, dtype=torch.float64)
        _, attn = layer(x, return_attention=True)
        q, k, _ = layer.project_qkv(x)
        logits = (q[0, 0, 0] @ k[0, 0, 0].T) / D ** 0.5
        i = torch.arange(T)
        logits[(i[:, None] - i[None, :]).abs() > 1] = float("-inf")
        torch.testing.assert_close(attn[0, 0, 0], torch.softmax(logits, -1))
    finally:
        reg_mod._REGISTRY.pop("band_test", None)


def test_parameter_order_is_kept_for_optimizer_states():
    """A learnable penalty is the layer's last parameter, as before the regularizers were modules: an AdamW
    state saved then (keyed by parameter position) resumes onto the same tensors."""
    layer = TemporalAttention(D, H, diag="penalty", diag_penalty=-0.1, learn_penalty=True)
    names = [n for n, _ in layer.named_parameters()]
    assert names == ["qkv.weight", "qkv.bias", "out.weight", "out.bias", "regularizer.penalty"]
