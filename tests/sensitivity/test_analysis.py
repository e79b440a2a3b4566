"""analyze_window's report of output steps that depend on no input (a dead read-out)."""
import torch

from stgnn_diag.sensitivity.analysis import analyze_window, format_summary

from .conftest import EDGE_INDEX, H, tiny, window


def test_a_dead_read_out_step_is_reported(edge_weight):
    model = tiny("tts_template_none")
    x, u = window(model)
    assert analyze_window(model, x, EDGE_INDEX, edge_weight, u, hidden=False).summary[
        "insensitive_output_steps"] == []
    # step 2's time map sends every hidden unit far below zero: the read-out's ReLU is off at every node
    with torch.no_grad():
        model.time_readout.weight[1].zero_()
        model.time_readout.bias[1] = -100.0
    res = analyze_window(model, x, EDGE_INDEX, edge_weight, u, hidden=False)
    assert res.summary["insensitive_output_steps"] == [2]
    assert (res.sensitivity[1] == 0).all() and all((res.sensitivity[t] != 0).any() for t in (0, 2)) and H == 3
    assert "output step(s) [2] depend on no input" in format_summary(res)
