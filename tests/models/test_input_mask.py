"""input_mask: missing readings enter the forecasters as the last observed reading plus a flag."""
import pytest
import torch

import stgnn_diag
from stgnn_diag.models.embeddings import fill_missing
from stgnn_diag.training.budgets import BUDGETS
from stgnn_diag.training.module import ForecastModule
from tests.calendar import calendar_u

N, T = 5, 12
EDGE_INDEX = torch.tensor([[0, 1, 2, 3, 4], [1, 2, 3, 4, 0]])


def fill_by_hand(x, m):
    """Reference: walk each series forward, carrying the last observed value (0 before the first)."""
    out = x.clone()
    b, t = x.shape[:2]
    for i in range(b):
        for idx in torch.cartesian_prod(*[torch.arange(s) for s in x.shape[2:]]).tolist():
            idx = tuple(idx) if isinstance(idx, list) else (idx,)
            last = 0.0
            for s in range(t):
                if m[(i, s) + idx] > 0:
                    last = float(x[(i, s) + idx])
                else:
                    out[(i, s) + idx] = last
    return out


def random_mask(shape, seed=0, p=0.3):
    g = torch.Generator().manual_seed(seed)
    m = torch.rand(shape, generator=g) > p
    m[0, :4, 0] = False  # a node missing from the window's start: nothing to carry
    m[1, :, 1] = False  # a node missing all window long
    return m


def test_fill_missing_carries_the_last_observed_reading_forward():
    x = torch.randn(2, T, N, 1)
    m = random_mask(x.shape)
    got = fill_missing(x, m.float())
    torch.testing.assert_close(got, fill_by_hand(x, m))
    assert bool((got[0, :4, 0] == 0).all()) and bool((got[1, :, 1] == 0).all())


def test_fill_missing_gives_a_missing_reading_no_gradient_and_its_stand_in_all_of_it():
    x = torch.randn(1, 6, 1, 1, requires_grad=True)
    m = torch.tensor([1, 0, 0, 1, 0, 1.]).view(1, 6, 1, 1)
    fill_missing(x, m).sum().backward()
    # step 0 stands in for steps 1 and 2, step 3 for step 4
    assert x.grad.flatten().tolist() == [3.0, 0.0, 0.0, 2.0, 0.0, 1.0]


@pytest.mark.parametrize("name", ["tas_attn_none", "tts_attn_penalty"])
def test_masked_model_reads_the_filled_values_and_one_flag_weight(name):
    torch.manual_seed(0)
    m = stgnn_diag.create_model(name, n_nodes=N, input_mask=True, patch_size=1).eval()
    x, u = torch.randn(2, T, N, 1), calendar_u(2, T).unsqueeze(2).expand(-1, -1, N, -1)
    mask = random_mask(x.shape)
    w_flag = m.embedding.value.weight[:, 1]  # [x, flag] -> hidden
    # independent computation: fill by hand, call the embedding as if every reading were observed,
    # then move the flag of the missing readings from 1 to 0 through its weight column
    expected = m.encode(fill_by_hand(x, mask), u, torch.ones_like(mask)) - (~mask).float() * w_flag
    torch.testing.assert_close(m.encode(x, u, mask), expected)
    # what stands at a missing position does not matter
    x2 = torch.where(mask, x, torch.full_like(x, -2.7))
    torch.testing.assert_close(m(x2, EDGE_INDEX, u=u, x_mask=mask), m(x, EDGE_INDEX, u=u, x_mask=mask))
    assert not torch.allclose(m(x2, EDGE_INDEX, u=u, x_mask=torch.ones_like(mask)),
                              m(x, EDGE_INDEX, u=u, x_mask=torch.ones_like(mask)))


def test_patched_tokens_take_the_filled_values_and_flags_of_their_steps():
    torch.manual_seed(0)
    m = stgnn_diag.create_model("tas_attn_none", n_nodes=N, input_mask=True).eval()  # patch_size 2
    assert m.embedding.value.in_features == 4  # 2 steps x [value, flag]
    x, u = torch.randn(1, T, N, 1), calendar_u(1, T)
    mask = random_mask((2, T, N, 1))[:1]
    y = m(x, EDGE_INDEX, u=u, x_mask=mask)
    assert y.shape == (1, 12, N, 1) and torch.isfinite(y).all()


def test_mask_errors_say_what_to_pass():
    m = stgnn_diag.create_model("tas_attn_none", n_nodes=N, input_mask=True)
    x, u = torch.randn(1, T, N, 1), calendar_u(1, T)
    with pytest.raises(ValueError, match="input_mask=True; pass x_mask"):
        m(x, EDGE_INDEX, u=u)
    with pytest.raises(ValueError, match="shape"):
        m(x, EDGE_INDEX, u=u, x_mask=torch.ones(1, T, N + 1, 1, dtype=torch.bool))
    with pytest.raises(ValueError, match="only 0 and 1"):
        m(x, EDGE_INDEX, u=u, x_mask=x)
    with pytest.raises(ValueError, match="input_mask=False"):
        stgnn_diag.create_model("tas_attn_none", n_nodes=N)(x, EDGE_INDEX, u=u, x_mask=x > 0)
    with pytest.raises(ValueError, match="True or False"):
        stgnn_diag.create_model("tas_attn_none", n_nodes=N, input_mask="last")


def test_forecast_module_flags_the_zero_mph_readings_as_missing():
    mean, std = 54.0, 19.0
    module = ForecastModule("tas_attn_none", dict(n_nodes=N, input_mask=True), mean, std, BUDGETS["cpu-small"],
                            edge_index=EDGE_INDEX).eval()
    mph = 40 + 20 * torch.rand(2, T, N, 1)
    mph[0, 5:, 2] = 0.0  # a sensor that went silent
    mph[1, 0, 4] = 0.0
    x, u = (mph - mean) / std, calendar_u(2, T)
    want = module.model(x, EDGE_INDEX, u=u, x_mask=mph != 0) * std + mean
    torch.testing.assert_close(module(x, u), want)
    torch.testing.assert_close(module.observed(x), mph != 0)


def test_forecast_module_takes_the_batch_mask_over_the_values():
    # a data set that filled its gaps before scaling (tsl's imputation, say) marks them only in x_mask: the
    # values read as observed, so the mask must come from the batch, in training, validation and prediction
    mean, std = 54.0, 19.0
    module = ForecastModule("tas_attn_none", dict(n_nodes=N, input_mask=True), mean, std, BUDGETS["cpu-small"],
                            edge_index=EDGE_INDEX).eval()
    mph = 40 + 20 * torch.rand(2, T, N, 1)
    x_mask = torch.ones_like(mph, dtype=torch.bool)
    x_mask[0, 5:, 2] = False  # filled with plausible speeds: only the mask says so
    x, u = (mph - mean) / std, calendar_u(2, T)
    want = module.model(x, EDGE_INDEX, u=u, x_mask=x_mask) * std + mean
    assert not torch.allclose(want, module(x, u))  # the values alone would call the filled readings observed
    torch.testing.assert_close(module(x, u, x_mask), want)
    batch = {"x": x, "u": u, "y": mph, "x_mask": x_mask}
    torch.testing.assert_close(module.predict_step(batch, 0), want)
    torch.testing.assert_close(module._loss(batch), (want - mph).abs().mean())
    # scoring a split reads the windows' masks too
    from stgnn_diag.training.scoring import predict_split

    class Windows:  # two windows of a split whose filled readings only its masks mark
        def __len__(self):
            return 2

        def __getitem__(self, sl):
            return {k: v[sl] for k, v in batch.items()}

    pred = predict_split(module, {"test": Windows()}, batch_size=1, progress=False)
    torch.testing.assert_close(torch.from_numpy(pred), want[..., 0])
