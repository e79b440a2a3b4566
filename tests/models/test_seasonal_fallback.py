"""seasonal_fallback: in evaluation mode, a node whose whole input window is missing is forecast as the median
reading of its weekday and slot of the day at each target step (a table fitted on the training split)."""
import numpy as np
import pytest
import torch

import stgnn_diag
from stgnn_diag.baselines import historical_median
from stgnn_diag.training.module import ForecastModule
from stgnn_diag.training.seasonal import seasonal_table

N, T, H = 5, 12, 12
EDGE_INDEX = torch.tensor([[0, 1, 2, 3, 4], [1, 2, 3, 4, 0]])
OPTS = dict(n_nodes=N, input_mask=True, level_skip=True)


def consecutive_u(day: int, slot: int, b: int = 1) -> torch.Tensor:
    """``[b, T, 8]``: the covariates of T consecutive 5-minute steps whose last is weekday ``day`` (Monday 0),
    slot ``slot``."""
    rows = []
    for t in range(T - 1, -1, -1):
        s, d = slot - t, day
        if s < 0:
            s, d = s + 288, (day - 1) % 7
        rows.append(torch.cat([torch.tensor([s / 288]), torch.nn.functional.one_hot(torch.tensor(d), 7).float()]))
    return torch.stack(rows)[None].expand(b, -1, -1).clone()


def pair(name="tas_attn_none"):
    """The same weights with the fallback and without it."""
    torch.manual_seed(0)
    with_table = stgnn_diag.create_model(name, seasonal_fallback=True, **OPTS).eval()
    without = stgnn_diag.create_model(name, **OPTS).eval()
    without.load_state_dict({k: v for k, v in with_table.state_dict().items() if not k.startswith("fallback.")})
    return with_table, without


@pytest.mark.parametrize("name", ["tas_attn_none", "tts_attn_penalty"])
@pytest.mark.parametrize("day, slot", [(2, 100), (3, 283), (6, 287)])  # a Wednesday; past midnight; past Sunday
def test_a_node_with_nothing_observed_is_forecast_from_its_weekday_and_slot_at_each_target_step(name, day, slot):
    m, plain = pair(name)
    table = torch.randn(7, 288, N)
    m.fallback.set_table(table)
    x, u = torch.randn(2, T, N, 1), consecutive_u(day, slot, 2)
    mask = torch.ones_like(x, dtype=torch.bool)
    mask[0, :, 4] = False  # window 0, node 4: nothing observed -> the table
    mask[1, :11, 3] = False  # window 1, node 3: only the last step observed -> the model's forecast
    want = plain(x, EDGE_INDEX, u=u, x_mask=mask)
    for h in range(1, H + 1):  # target step h is h five-minute slots after the last input step
        s, d = slot + h, day
        if s >= 288:
            s, d = s - 288, (day + 1) % 7
        want[0, h - 1, 4, 0] = table[d, s, 4]
    torch.testing.assert_close(m(x, EDGE_INDEX, u=u, x_mask=mask), want)


def test_training_mode_leaves_the_forecast_as_it_is():
    m, plain = pair()
    m.fallback.set_table(torch.randn(7, 288, N))
    m.train(), plain.train()
    x, u = torch.randn(1, T, N, 1), consecutive_u(0, 50)
    mask = torch.zeros_like(x, dtype=torch.bool)
    torch.testing.assert_close(m(x, EDGE_INDEX, u=u, x_mask=mask), plain(x, EDGE_INDEX, u=u, x_mask=mask))


def test_the_table_travels_with_the_weights():
    m, _ = pair()
    m.fallback.set_table(torch.randn(7, 288, N, 1))
    fresh = stgnn_diag.create_model("tas_attn_none", seasonal_fallback=True, **OPTS).eval()
    fresh.load_state_dict(m.state_dict())
    x, u = torch.randn(1, T, N, 1), consecutive_u(4, 7)
    mask = torch.zeros_like(x, dtype=torch.bool)
    torch.testing.assert_close(fresh(x, EDGE_INDEX, u=u, x_mask=mask), m(x, EDGE_INDEX, u=u, x_mask=mask))


def test_a_table_never_set_bad_tables_and_bad_settings_are_refused():
    m, _ = pair()
    x, u = torch.randn(1, T, N, 1), consecutive_u(1, 1)
    with pytest.raises(ValueError, match="seasonal table was never set"):
        m(x, EDGE_INDEX, u=u, x_mask=torch.ones_like(x, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"must be \[7, slots, nodes, channels\]"):
        m.fallback.set_table(torch.zeros(7, 96, N))
    with pytest.raises(ValueError, match="NaN or Inf"):
        m.fallback.set_table(torch.full((7, 288, N), float("nan")))
    with pytest.raises(ValueError, match="needs input_mask=True, n_nodes"):
        stgnn_diag.create_model("tas_attn_none", n_nodes=N, seasonal_fallback=True)
    with pytest.raises(ValueError, match="needs input_mask=True, n_nodes"):
        stgnn_diag.create_model("tas_attn_none", n_nodes=N, input_mask=True, exog_size=1, dow_embedding=False,
                                seasonal_fallback=True)
    with pytest.raises(ValueError, match="seasonal_fallback must be True or False"):
        stgnn_diag.create_model("tas_attn_none", seasonal_fallback=1, **OPTS)


def test_on_the_real_test_windows_the_fallback_is_the_historical_median(dcrnn_splits):
    """Where a sensor's whole input window is missing, the engine's forecast (mph) is the historical-median
    baseline's, computed independently from the timestamps of the target steps; elsewhere the model's."""
    splits = dcrnn_splits
    n = splits.edge_index.max().item() + 1
    kw = dict(n_nodes=n, input_mask=True, level_skip=True)
    module = ForecastModule("tas_attn_none", {**kw, "seasonal_fallback": True}, splits.scaler.mean,
                            splits.scaler.std, edge_index=splits.edge_index, edge_weight=splits.edge_weight).eval()
    module.model.fallback.set_table(seasonal_table(splits))
    plain = ForecastModule("tas_attn_none", kw, splits.scaler.mean, splits.scaler.std,
                           edge_index=splits.edge_index, edge_weight=splits.edge_weight).eval()
    plain.model.load_state_dict({k: v for k, v in module.model.state_dict().items() if not k.startswith("fallback.")})
    test = splits["test"]
    down = ~test[0:len(test)]["x_mask"].any(1)[..., 0]                                   # [windows, nodes]
    windows = torch.nonzero(down.any(1)).flatten()
    assert len(windows) > 10
    late = [int(w) for w in windows if 276 <= (splits.dataset.timestamps[test.starts[w] + T - 1].astype(
        "datetime64[m]").astype(int) % 1440) // 5]   # a last input step after 23:00: the targets cross midnight
    assert late
    pick = torch.tensor(sorted({int(windows[0]), int(windows[len(windows) // 2]), late[0]}))
    batch = test[pick]
    with torch.no_grad():
        got, other = module(batch["x"], batch["u"])[..., 0], plain(batch["x"], batch["u"])[..., 0]
    hm = torch.from_numpy(historical_median(splits, "test")[pick.numpy()]).float()       # [3, H, nodes]
    where = down[pick][:, None, :].expand_as(got)
    torch.testing.assert_close(got[where], hm[where], rtol=1e-5, atol=1e-3)
    torch.testing.assert_close(got[~where], other[~where])
