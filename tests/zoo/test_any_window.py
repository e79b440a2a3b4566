"""Every native zoo entry takes any input length: its forecast has the horizon's shape and reads every input step."""
import pytest
import torch

import stgnn_diag
from stgnn_diag.zoo.registry import list_models

NATIVE = list_models(native=True)
N = 5


@pytest.mark.parametrize("name", NATIVE)
@pytest.mark.parametrize("window", [24, 288])
def test_entry_forecasts_from_a_long_window_and_reads_its_first_step(name, window):
    torch.manual_seed(0)
    model = stgnn_diag.create_model(name, n_nodes=N, window=window, horizon=12, exog_size=8, hidden_size=16).eval()
    edge_index = torch.tensor([list(range(N)), [(i + 1) % N for i in range(N)]])
    x = torch.randn(2, window, N, 1, requires_grad=True)
    u = torch.zeros(2, window, 8)
    u[..., 0] = torch.arange(window) % 288 / 288
    u[..., 1] = 1.0
    y = model(x, edge_index, None, u=u)
    assert y.shape == (2, 12, N, 1) and torch.isfinite(y).all()
    y.sum().backward()
    # the oldest step reaches the forecast (a read-out sized for 12 steps would leave it out)
    assert x.grad[:, 0].abs().sum() > 0
