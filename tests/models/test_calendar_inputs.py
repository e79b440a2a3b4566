"""The calendar embeddings read our encoding only; the ecosystem's encodings are named and convertible."""
import numpy as np
import pytest
import torch

import stgnn_diag
from stgnn_diag.datasets.covariates import calendar_covariates, tod_from_sin_cos, tod_from_zscore

TS = np.datetime64("2012-03-05T00:00", "ns") + np.arange(2 * 288) * np.timedelta64(5, "m")  # a Monday, 2 days


def _windows(u_series):
    """12-step windows of a ``[time, c]`` series: ``[b, 12, c]``."""
    u = torch.as_tensor(u_series, dtype=torch.float32)
    return torch.stack([u[s:s + 12] for s in range(0, len(u) - 12, 60)])


def test_tsl_sin_cos_and_pygt_zscore_encodings_are_refused_and_convertible():
    model = stgnn_diag.create_model("tas_attn_none", n_nodes=2, hidden_size=8, heads=2).eval()
    ei = torch.tensor([[0], [1]])
    ours = calendar_covariates(TS)
    frac = ours[:, 0]
    sin, cos = np.sin(2 * np.pi * frac), np.cos(2 * np.pi * frac)  # tsl's datetime_encoded('day')
    tsl_u = np.concatenate([sin[:, None], cos[:, None], ours[:, 2:]], 1)
    x = torch.randn(len(_windows(ours)), 12, 2, 1)
    with pytest.raises(ValueError, match=r"not a time of day in \[0, 1\).*tod_from_sin_cos"):
        model(x, ei, u=_windows(tsl_u))
    z = (frac - frac.mean()) / frac.std()  # PyG Temporal's loader: z-scored over the file
    with pytest.raises(ValueError, match="tod_from_zscore"):
        model(x, ei, u=_windows(np.concatenate([z[:, None], ours[:, 1:]], 1)))
    np.testing.assert_allclose(tod_from_sin_cos(sin, cos), frac, atol=1e-6)
    np.testing.assert_allclose(tod_from_zscore(z, frac.mean(), frac.std()), frac, atol=1e-6)
    torch.testing.assert_close(tod_from_sin_cos(torch.tensor(sin), torch.tensor(cos)), torch.tensor(frac),
                               atol=1e-6, rtol=0)
    converted = np.concatenate([tod_from_sin_cos(sin, cos)[:, None], ours[:, 1:]], 1)
    with torch.no_grad():
        torch.testing.assert_close(model(x, ei, u=_windows(converted)), model(x, ei, u=_windows(ours)))


def test_out_of_range_time_and_a_weekday_that_is_not_one_hot():
    model = stgnn_diag.create_model("tts_attn_none", n_nodes=2, hidden_size=8, heads=2).eval()
    ei, x = torch.tensor([[0], [1]]), torch.randn(1, 12, 2, 1)
    u = _windows(calendar_covariates(TS))[:1]
    late = u.clone()
    late[..., 0] = 5.0  # once silently clamped to the last slot
    with pytest.raises(ValueError, match=r"values in \[5, 5\]"):
        model(x, ei, u=late)
    two_days = u.clone()
    two_days[..., 2] = 1.0
    with pytest.raises(ValueError, match="not a one-hot weekday"):
        model(x, ei, u=two_days)
    template = stgnn_diag.create_model("tas_template_none", n_nodes=2, hidden_size=8, heads=2, n_layers=1,
                                       exog_size=1, tod_embedding=288).eval()
    with pytest.raises(ValueError, match="not a time of day"):
        template(x, ei, u=late[..., :1])


def test_pygt_layouts_are_named_with_their_conversion():
    from stgnn_diag.integrations.pygt_layouts import from_layout, to_layout

    model = stgnn_diag.create_model("tas_attn_none", n_nodes=5, hidden_size=8, heads=2).eval()
    x = torch.randn(2, 12, 5, 1)
    ei, u = torch.tensor([[0], [1]]), _windows(calendar_covariates(TS))[:2]
    for layout in ("BNFT", "BFNT"):
        with pytest.raises(ValueError, match=rf"PyG Temporal's {layout} layout.*from_layout\(x, '{layout}'\)"):
            model(to_layout(x, layout), ei, u=u)
        torch.testing.assert_close(model(from_layout(to_layout(x, layout), layout), ei, u=u), model(x, ei, u=u))
    with pytest.raises(ValueError, match="13 time steps") as e:
        model(torch.randn(2, 13, 5, 1), ei, u=u)
    assert "PyG Temporal" not in str(e.value)


@pytest.mark.parametrize("name", ["tas_attn_none", "tts_attn_penalty"])
def test_exog_size_zero_alone_builds_a_model_without_calendar_inputs(name):
    """A tsl user without covariates passes exog_size=0 only; the calendar embeddings are then off, the
    configuration says so, and it rebuilds the same model."""
    model = stgnn_diag.create_model(name, n_nodes=3, hidden_size=8, heads=2, exog_size=0)
    cfg = model.config["model_kwargs"]
    assert (cfg["exog_size"], cfg["tod_embedding"], cfg["dow_embedding"]) == (0, 0, False)
    assert not any("tod" in k or "dow" in k for k, _ in model.named_parameters())
    out = model(torch.randn(2, 12, 3, 1), torch.tensor([[0, 1], [1, 2]]))
    assert out.shape == (2, 12, 3, 1)
    again = stgnn_diag.create_model(name, **cfg)
    assert [p.shape for p in again.parameters()] == [p.shape for p in model.parameters()]
    with pytest.raises(ValueError, match="exog_size=0"):
        model(torch.randn(2, 12, 3, 1), torch.tensor([[0, 1], [1, 2]]), u=torch.zeros(2, 12, 8))
