"""seasonal_level: with level_skip and input_mask, a node whose whole input window is missing takes the mean reading
of its weekday and slot of the day at the window's last step as its level (a table fitted on the training split)."""
import numpy as np
import pytest
import torch

import stgnn_diag
from stgnn_diag.training.train import seasonal_table
from tests.calendar import calendar_u

N, T = 5, 12
EDGE_INDEX = torch.tensor([[0, 1, 2, 3, 4], [1, 2, 3, 4, 0]])
OPTS = dict(n_nodes=N, input_mask=True, level_skip=True)


def pair(name="tas_attn_none"):
    """The same weights with the seasonal level and without it (level 0 where nothing is observed)."""
    torch.manual_seed(0)
    with_table = stgnn_diag.create_model(name, seasonal_level=True, **OPTS).eval()
    without = stgnn_diag.create_model(name, **OPTS).eval()
    without.load_state_dict({k: v for k, v in with_table.state_dict().items() if not k.startswith("seasonal.")})
    return with_table, without


@pytest.mark.parametrize("name", ["tas_attn_none", "tts_attn_penalty"])
def test_a_node_with_nothing_observed_takes_the_level_of_its_weekday_and_slot(name):
    m, plain = pair(name)
    table = torch.randn(7, 288, N)
    m.set_seasonal_level(table)
    x, u = torch.randn(2, T, N, 1), calendar_u(2, T)
    mask = torch.ones_like(x, dtype=torch.bool)
    mask[0, :, 4] = False  # window 0, node 4: nothing observed -> the table
    mask[1, :11, 3] = False  # window 1, node 3: only the last step observed -> its reading, as without the table
    want = torch.zeros(2, N)
    slot, day = round(float(u[0, -1, 0]) * 288), int(u[0, -1, 1:8].argmax())
    want[0, 4] = table[day, slot, 4]
    diff = m(x, EDGE_INDEX, u=u, x_mask=mask) - plain(x, EDGE_INDEX, u=u, x_mask=mask)
    torch.testing.assert_close(diff[..., 0], want[:, None].expand(-1, 12, -1))


def test_the_table_travels_with_the_weights():
    m, _ = pair()
    m.set_seasonal_level(torch.randn(7, 288, N, 1))
    fresh = stgnn_diag.create_model("tas_attn_none", seasonal_level=True, **OPTS).eval()
    fresh.load_state_dict(m.state_dict())
    x, u = torch.randn(1, T, N, 1), calendar_u(1, T)
    mask = torch.zeros_like(x, dtype=torch.bool)
    torch.testing.assert_close(fresh(x, EDGE_INDEX, u=u, x_mask=mask), m(x, EDGE_INDEX, u=u, x_mask=mask))


def test_a_table_never_set_bad_tables_and_bad_settings_are_refused():
    m, _ = pair()
    x, u = torch.randn(1, T, N, 1), calendar_u(1, T)
    with pytest.raises(ValueError, match="seasonal table was never set"):
        m(x, EDGE_INDEX, u=u, x_mask=torch.ones_like(x, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"must be \[7, slots, nodes, channels\]"):
        m.set_seasonal_level(torch.zeros(7, 96, N))
    with pytest.raises(ValueError, match="NaN or Inf"):
        m.set_seasonal_level(torch.full((7, 288, N), float("nan")))
    with pytest.raises(ValueError, match="needs level_skip=True, input_mask=True"):
        stgnn_diag.create_model("tas_attn_none", n_nodes=N, input_mask=True, seasonal_level=True)
    with pytest.raises(ValueError, match="seasonal_level must be True or False"):
        stgnn_diag.create_model("tas_attn_none", seasonal_level=1, **OPTS)
    with pytest.raises(ValueError, match="no seasonal table"):
        stgnn_diag.create_model("tas_attn_none", **OPTS).set_seasonal_level(torch.zeros(7, 288, N))


def test_the_training_table_is_the_scaled_mean_of_the_training_readings(dcrnn_splits):
    """One cell per node, counted by hand from the raw series: the non-zero readings of the training steps at
    that weekday and slot, their mean, scaled by the protocol's scaler."""
    table = seasonal_table(dcrnn_splits)
    data, stop = dcrnn_splits.dataset, dcrnn_splits.fit_stop
    ts = np.asarray(data.timestamps[:stop]).astype("datetime64[m]")
    minutes = (ts - ts.astype("datetime64[D]")).astype(int)
    weekday = (ts.astype("datetime64[D]").astype(int) + 3) % 7  # 1970-01-01 was a Thursday
    speed = np.asarray(data.speed64[:stop])
    for day, hh, mm in ((0, 8, 0), (5, 17, 35)):
        at = (weekday == day) & (minutes == hh * 60 + mm)
        for node in (0, 100):
            readings = speed[at, node][speed[at, node] != 0]
            assert len(readings) > 0
            want = (readings.mean() - dcrnn_splits.scaler.mean) / dcrnn_splits.scaler.std
            assert table[day, (hh * 60 + mm) // 5, node] == pytest.approx(float(np.squeeze(want)), abs=1e-5)
    assert table.shape == (7, 288, data.speed64.shape[1]) and table.dtype == np.float32
