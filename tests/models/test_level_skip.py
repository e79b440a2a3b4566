"""level_skip: the forecasters add each node's last input reading (the last observed one with input_mask) to
every predicted step."""
import pytest
import torch

import stgnn_diag
from stgnn_diag.sensitivity import spatiotemporal_jacobian
from tests.calendar import calendar_u

N, T = 5, 12
EDGE_INDEX = torch.tensor([[0, 1, 2, 3, 4], [1, 2, 3, 4, 0]])


def pair(name, **kw):
    """The same weights with and without the skip."""
    torch.manual_seed(0)
    with_skip = stgnn_diag.create_model(name, n_nodes=N, level_skip=True, **kw).eval()
    without = stgnn_diag.create_model(name, n_nodes=N, **kw).eval()
    without.load_state_dict(with_skip.state_dict())
    return with_skip, without


@pytest.mark.parametrize("name", ["tas_attn_none", "tts_attn_penalty"])
def test_the_skip_adds_the_last_reading_to_every_step(name):
    m, plain = pair(name)
    x, u = torch.randn(2, T, N, 1), calendar_u(2, T)
    diff = m(x, EDGE_INDEX, u=u) - plain(x, EDGE_INDEX, u=u)
    torch.testing.assert_close(diff, x[:, -1:].expand(-1, 12, -1, -1))


def test_with_input_mask_a_missing_last_reading_is_replaced_by_the_last_observed_one():
    m, plain = pair("tas_attn_none", input_mask=True)
    x, u = torch.randn(1, T, N, 1), calendar_u(1, T)
    mask = torch.ones_like(x, dtype=torch.bool)
    mask[0, 9:, 2] = False  # node 2: steps 9-11 missing, step 8 stands in
    mask[0, :, 4] = False  # node 4: nothing observed, 0 (the scaled mean) stands in
    want = x[0, -1, :, 0].clone()
    want[2], want[4] = x[0, 8, 2, 0], 0.0
    diff = m(x, EDGE_INDEX, u=u, x_mask=mask) - plain(x, EDGE_INDEX, u=u, x_mask=mask)
    torch.testing.assert_close(diff[0, :, :, 0], want.expand(12, -1))


def test_the_jacobian_gains_the_identity_at_the_last_step():
    """Closed form: J(skip) - J(no skip) is 1 from (last step, node n) to (every step, node n), 0 elsewhere."""
    m, plain = (mm.double() for mm in pair("tas_attn_none", window=4, horizon=3))
    x, u = torch.randn(4, N, 1, dtype=torch.float64), calendar_u(1, 4).double()[0]
    d = (spatiotemporal_jacobian(m, x, EDGE_INDEX, None, u, norm=None)
         - spatiotemporal_jacobian(plain, x, EDGE_INDEX, None, u, norm=None))  # [3, N, 1, 4, N, 1]
    want = torch.zeros_like(d)
    for n in range(N):
        want[:, n, 0, -1, n, 0] = 1.0
    torch.testing.assert_close(d, want, rtol=0, atol=1e-10)


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="level_skip must be True or False"):
        stgnn_diag.create_model("tas_attn_none", n_nodes=N, level_skip="yes")
    with pytest.raises(ValueError, match="output_size <= input_size"):
        stgnn_diag.create_model("tas_attn_none", n_nodes=N, level_skip=True, output_size=2)
