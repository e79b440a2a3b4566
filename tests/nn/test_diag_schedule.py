import math

import pytest
import torch

import stgnn_diag
from stgnn_diag.nn import DiagonalSchedule, TemporalAttention, attention_layers, set_diagonal_strength


def test_linear_and_cosine_values():
    lin = DiagonalSchedule("diag_p", 0.0, 0.4, 4)
    assert [lin.value(s) for s in (0, 1, 2, 4, 9)] == pytest.approx([0.0, 0.1, 0.2, 0.4, 0.4])
    cos = DiagonalSchedule("diag_penalty", 0.0, -1.0, 2, "cosine")
    assert cos.value(1) == pytest.approx(-0.5 * (1 - math.cos(math.pi / 2)))
    assert DiagonalSchedule.parse("diag_p:0:0.3:5:cosine") == DiagonalSchedule("diag_p", 0.0, 0.3, 5, "cosine")


#: zoo models without covariates, on a 3-node graph
NO_COV = dict(n_nodes=3, exog_size=0, tod_embedding=0, dow_embedding=False, hidden_size=8, heads=2)


def test_apply_changes_the_layers_and_their_output():
    model = stgnn_diag.create_model("tts_attn_penalty", **NO_COV).eval()
    x, ei = torch.randn(1, 12, 3, 1), torch.tensor([[0, 1], [1, 2]])
    y0 = model(x, ei)
    sched = DiagonalSchedule("diag_penalty", -0.05, -3.0, 2)
    assert sched.apply(model, 2) == -3.0
    assert all(float(m.regularizer.penalty) == -3.0 for m in attention_layers(model))
    assert not torch.allclose(model(x, ei), y0)
    drop = stgnn_diag.create_model("tas_attn_dropout", **NO_COV)
    assert set_diagonal_strength(drop, "diag_p", 0.25) == drop.n_layers == 2
    assert all(m.regularizer.p == 0.25 for m in attention_layers(drop))


def test_bad_schedules():
    with pytest.raises(ValueError, match="no TemporalAttention with diag='dropout'"):
        set_diagonal_strength(stgnn_diag.create_model("tas_attn_none", **NO_COV), "diag_p", 0.1)
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        set_diagonal_strength(stgnn_diag.create_model("tas_attn_dropout", **NO_COV), "diag_p", 1.0)
    with pytest.raises(ValueError, match="learnable"):
        set_diagonal_strength(TemporalAttention(8, 2, diag="penalty", learn_penalty=True), "diag_penalty", -1.0)
    with pytest.raises(ValueError, match="expected param"):
        DiagonalSchedule.parse("diag_p:0:1")
    with pytest.raises(ValueError, match="Unknown schedule shape"):
        DiagonalSchedule("diag_p", 0, 0.1, 3, "step")
