"""Tiny models and graphs for the sensitivity tests (float64, so comparisons with autograd are tight)."""
from __future__ import annotations

import pytest
import torch

import stgnn_diag

N, T, H = 5, 4, 3
EDGE_INDEX = torch.tensor([[0, 1, 2, 3, 4, 1], [1, 2, 3, 4, 0, 3]])


@pytest.fixture
def edge_weight():
    return torch.rand(6, generator=torch.Generator().manual_seed(1), dtype=torch.float64) + 0.1


def tiny(name: str = "tas_template_none", **kw):
    """A zoo model at width 8 (2 heads), 4 input steps, 3 output steps, in float64 and eval mode."""
    torch.manual_seed(0)
    kw = {"hidden_size": 8, "heads": 2, "window": T, "horizon": H, **kw}
    m = stgnn_diag.create_model(name, **kw).double().eval()
    for p in m.parameters():  # non-zero biases so every bias path is exercised
        if p.dim() == 1:
            with torch.no_grad():
                p.add_(0.1 * torch.randn_like(p))
    return m


def window(model, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(T, N, model.input_size, generator=g, dtype=torch.float64)
    u = torch.rand(T, model.exog_size, generator=g, dtype=torch.float64) if model.exog_size else None
    return x, u


def autograd_raw(model, x, u, edge_weight):
    """Reference: ``torch.autograd.functional.jacobian`` -> raw blocks [t_out, n_out, f_out, t_in, n_in, f_in]."""
    uu = None if u is None else u.unsqueeze(0)
    j = torch.autograd.functional.jacobian(lambda z: model(z, EDGE_INDEX, edge_weight, u=uu), x.unsqueeze(0))
    return j[0, :, :, :, 0]
