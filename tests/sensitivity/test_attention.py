import math

import pytest
import torch
from torch import nn

from stgnn_diag.nn import TemporalAttention
from stgnn_diag.sensitivity import NoAttentionError, TrainingModeWarning, attention_diagnostics

from .conftest import EDGE_INDEX, T, tiny


def test_stats_match_the_layers_own_attention(edge_weight):
    model = tiny("tts_template_penalty", diag_penalty=-2.0)
    x = torch.randn(3, T, 5, 1, dtype=torch.float64)
    stats = attention_diagnostics(model, x, EDGE_INDEX, edge_weight)
    assert [s.layer for s in stats] == [f"temporal.{i}.attention" for i in range(3)]
    # independent recomputation for the first layer: its input is encode(x)
    h = model.encode(x)
    _, a = model.temporal[0].attention(h, return_attention=True)  # [b, n, heads, T, T]
    s = stats[0]
    torch.testing.assert_close(s.map, a.mean((0, 1, 2)).float())
    torch.testing.assert_close(s.diag_mass, a.diagonal(dim1=-2, dim2=-1).mean((0, 1, 3)).float())
    off = ~torch.eye(T, dtype=torch.bool)
    torch.testing.assert_close(s.offdiag_mean, a[..., off].mean((0, 1, 3)).float())
    ent = -(a * a.log()).sum(-1).mean((0, 1, 3))
    torch.testing.assert_close(s.entropy, ent.float())
    assert s.max_entropy == pytest.approx(math.log(T))
    assert s.diag_ratio < 1.0  # a strong negative penalty pushes weight off the diagonal
    assert s.uniform == pytest.approx(1 / T)


def test_mask_has_no_diagonal_mass_and_causal_rows(edge_weight):
    model = tiny("tas_template_mask", causal=True)
    x = torch.randn(2, T, 5, 1, dtype=torch.float64)
    for s in attention_diagnostics(model, x, EDGE_INDEX, edge_weight):
        assert float(s.diag_mass.abs().max()) == 0.0
        assert torch.allclose(s.map.triu(), torch.zeros(T, T, dtype=s.map.dtype))  # causal, no diagonal
        # query 0 has no key; the other rows have i keys: mean log(#keys) over rows with keys
        assert s.max_entropy == pytest.approx(sum(math.log(i) for i in range(1, T)) / (T - 1))


def test_model_without_attention_layers():
    class NoAttention(nn.Module):
        def forward(self, x, edge_index, edge_weight=None):
            return x

    with pytest.raises(NoAttentionError, match="no stgnn_diag.nn.TemporalAttention") as e:
        attention_diagnostics(NoAttention(), torch.randn(T, 5, 1), EDGE_INDEX)
    assert isinstance(e.value, ValueError)


def test_training_mode_is_reported_and_restored(edge_weight):
    model = tiny("tas_template_dropout", attn_dropout=0.5).train()
    x = torch.randn(T, 5, 1, dtype=torch.float64)
    with pytest.warns(TrainingModeWarning):
        a = attention_diagnostics(model, x, EDGE_INDEX, edge_weight)
    assert model.training
    b = attention_diagnostics(model.eval(), x, EDGE_INDEX, edge_weight)
    torch.testing.assert_close(a[0].map, b[0].map, rtol=0, atol=0)


def test_lone_layer_inside_a_custom_model(edge_weight):
    class Wrapper(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Linear(1, 4)
            self.att = TemporalAttention(4, 2, diag="mask")

        def forward(self, x, edge_index, edge_weight=None):
            return self.att(self.enc(x))

    stats = attention_diagnostics(Wrapper().eval(), torch.randn(T, 5, 1), EDGE_INDEX)
    assert len(stats) == 1 and stats[0].layer == "att" and stats[0].diag == "mask"
    assert stats[0].offdiag_mean.mean() == pytest.approx(1 / (T - 1), rel=1e-5)


def test_input_mask_model_takes_the_mask_or_reads_every_reading_as_observed(edge_weight):
    from .conftest import N
    model = tiny("tas_attn_none", n_nodes=N, input_mask=True, patch_size=1, heads=1)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, T, N, 1, generator=g, dtype=torch.float64)
    u = torch.zeros(3, T, N, 8, dtype=torch.float64)
    u[..., 3] = 1.0
    mask = torch.ones(3, T, N, 1, dtype=torch.bool)
    mask[:, 1:3] = False
    seen = attention_diagnostics(model, x, EDGE_INDEX, edge_weight, u)
    ones = attention_diagnostics(model, x, EDGE_INDEX, edge_weight, u, x_mask=torch.ones_like(mask))
    masked = attention_diagnostics(model, x, EDGE_INDEX, edge_weight, u, x_mask=mask)
    torch.testing.assert_close(seen[0].map, ones[0].map)
    assert not torch.allclose(masked[0].map, ones[0].map)
