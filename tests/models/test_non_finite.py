"""Non-finite values are named where they enter: model inputs, regularizer arguments, checkpoints."""
import math

import pytest
import torch

import stgnn_diag
from stgnn_diag.nn import TemporalAttention
from tests.calendar import calendar_u


def _tiny(name="tas_attn_penalty"):
    return stgnn_diag.create_model(name, n_nodes=3, hidden_size=8, heads=2)


@pytest.mark.parametrize("name", ["tas_attn_penalty", "tts_attn_none", "tas_template_mask"])
def test_nan_or_inf_inputs_are_refused(name):
    model = _tiny(name)
    ei = torch.tensor([[0, 1], [1, 2]])
    x = torch.randn(2, 12, 3, 1)
    u = calendar_u(2, 12, c=model.exog_size) if model.exog_size else None
    bad = x.clone()
    bad[0, 3, 1, 0] = float("nan")
    with pytest.raises(ValueError, match="x holds 1 NaN and 0 Inf"):
        model(bad, ei, u=u)
    if u is not None:
        u_bad = u.clone()
        u_bad[1, 0, 0] = float("inf")
        with pytest.raises(ValueError, match="u holds 0 NaN and 1 Inf"):
            model(x, ei, u=u_bad)
    for value, said in ((float("nan"), "1 NaN and 0 Inf"), (float("inf"), "0 NaN and 1 Inf")):
        with pytest.raises(ValueError, match=f"edge_weight holds {said}"):
            model(x, ei, torch.tensor([1.0, value]), u=u)
    assert torch.isfinite(model(x, ei, torch.tensor([1.0, 0.5]), u=u)).all()
    assert torch.isfinite(model(x, ei, u=u)).all()


def test_the_check_stays_out_of_torch_func_transforms():
    """Under jacrev / vmap the inputs are wrapped tensors: no data-dependent check runs (it would fail)."""
    model = _tiny().eval()
    ei, x, u = torch.tensor([[0, 1], [1, 2]]), torch.randn(1, 12, 3, 1), calendar_u(1, 12)
    jac = torch.func.jacrev(lambda z: model(z, ei, u=u))(x)
    assert jac.shape == (1, 12, 3, 1, 1, 12, 3, 1) and torch.isfinite(jac).all()


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_a_non_finite_diagonal_penalty_is_refused(value):
    with pytest.raises(ValueError, match="diag_penalty must be a finite number"):
        TemporalAttention(8, heads=2, diag="penalty", diag_penalty=value)


def test_a_checkpoint_with_nan_weights_is_refused(tmp_path):
    from stgnn_diag.sensitivity.checkpoint import CheckpointFormatError, build_model
    from stgnn_diag.zoo.pretrained import PretrainedError

    model = _tiny()
    state = model.state_dict()
    key = next(k for k, v in state.items() if v.is_floating_point())
    state[key] = state[key].clone().fill_(float("nan"))
    torch.save(state, tmp_path / "w.pt")
    with pytest.raises(PretrainedError, match=r"NaN / Inf weights in 1 tensors"):
        stgnn_diag.create_model("tas_attn_penalty", n_nodes=3, hidden_size=8, heads=2, checkpoint_path=tmp_path / "w.pt")
    with pytest.raises(CheckpointFormatError, match="a diverged run"):
        build_model("tas_attn_penalty", tmp_path / "w.pt", n_nodes=3, hidden_size=8, heads=2)
