"""The findings report's measurements give a model built with ``input_mask=True`` the observed readings of its
windows (the shipped ``tas_attn_none.metr_la_cpu_e10_mask`` weights, real METR-LA test windows)."""
import argparse

import numpy as np
import pytest
import torch

from stgnn_diag.sensitivity.findings.measurements import last_attention_input
from stgnn_diag.sensitivity.findings.models import get_model
from stgnn_diag.sensitivity.findings.models import test_mae as findings_mae


@pytest.mark.realdata
def test_findings_score_a_masked_model_with_its_windows_missing_readings(metr_la, dcrnn_splits):
    model, source = get_model("tas_attn_none", argparse.Namespace(pretrained="metr_la_cpu_e10_mask"), dcrnn_splits)
    assert model.input_mask and "metr_la_cpu_e10_mask" in source
    ds, n = dcrnn_splits.test, 64
    pos = torch.linspace(0, len(ds) - 1, n).long()
    # independent of the batches: each window's input readings cut from the data set's speed array
    raw = np.stack([metr_la.speed[s:s + 12] for s in ds.starts[pos.numpy()]])
    observed = torch.from_numpy(raw != 0).unsqueeze(-1)
    assert not observed.all()  # some of these windows hold missing readings: the mask matters

    b = ds.get_batch(pos)
    mean = float(np.asarray(dcrnn_splits.scaler.mean).mean())
    std = float(np.asarray(dcrnn_splits.scaler.std).mean())
    u = b["u"][..., :model.exog_size]
    ds_graph = (dcrnn_splits.edge_index, dcrnn_splits.edge_weight)

    def mae(mask):
        with torch.no_grad():
            pred = model(b["x"], ds_graph[0], ds_graph[1], u=u, x_mask=mask) * std + mean
        return float((pred - b["y"]).abs()[b["mask"]].mean())

    expected, all_observed = mae(observed), mae(torch.ones_like(observed))
    assert findings_mae(model, dcrnn_splits, n_windows=n) == pytest.approx(expected, rel=1e-5)
    assert abs(expected - all_observed) > 1e-3

    # the attention-path measurement runs the model on one window with that window's mask
    xin, layer = last_attention_input(model, b["x"][0], *ds_graph, u[0], b["x_mask"][0])
    assert xin.shape == (model.tokens, 207, model.hidden_size)
