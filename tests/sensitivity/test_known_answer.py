"""`lag_hop_recovery` against forecasters whose Jacobian is known in closed form."""
import pytest
import torch
from torch import nn

from stgnn_diag.datasets import LagHopTask, make_splits
from stgnn_diag.sensitivity.known_answer import lag_hop_recovery


class Reads(nn.Module):
    """``y_v = slope * x[T - 1 - lag, src[v]]``: a linear forecaster reading one input cell per node."""

    exog_size = 0

    def __init__(self, src, lag, slope):
        super().__init__()
        self.src, self.lag, self.slope = torch.as_tensor(src), lag, slope

    def forward(self, x, edge_index, edge_weight=None, u=None):
        t = x.shape[1]
        return self.slope * x[:, t - 1 - self.lag, self.src].unsqueeze(1)  # [b, 1, n, 1]


@pytest.fixture(scope="module")
def task_splits():
    task = LagHopTask(hop=3, lag=4, graph="grid", n_nodes=36, steps=400)
    return task, make_splits(task, window=8, horizon=1)


def test_the_true_forecaster_is_found_exactly(task_splits):
    task, splits = task_splits
    r = lag_hop_recovery(Reads(task.source, task.lag, 0.9), task, splits, windows=3)
    assert r["hit_rate"] == 1.0 and r["true_share"] == pytest.approx(1.0)
    assert r["gain"] == pytest.approx(0.9)
    assert r["profile_argmax"] == (3, 4) and r["reach_hops"] == 3 and r["nodes"] == 36


def test_a_forecaster_reading_the_wrong_cell_scores_zero(task_splits):
    task, splits = task_splits
    own = torch.arange(task.n_nodes)
    r = lag_hop_recovery(Reads(own, 0, 1.0), task, splits, windows=3)  # the last value of the node itself
    assert r["hit_rate"] == 0.0 and r["true_share"] == 0.0 and r["gain"] == 0.0
    assert r["profile_argmax"] == (0, 0) and r["reach_hops"] == 0


def test_a_window_that_cannot_see_the_lag_is_refused(task_splits):
    task, _ = task_splits
    with pytest.raises(ValueError, match="do not see lag 4"):
        lag_hop_recovery(Reads(task.source, 0, 1.0), task, make_splits(task, window=4, horizon=1))


class ReadsCells(nn.Module):
    """``y_v = sum_k slope_k * x[T - 1 - lag_k, src_k[v]]``: a linear forecaster reading several cells per node."""

    exog_size = 0

    def __init__(self, cells):
        super().__init__()
        self.cells = [(torch.as_tensor(src), lag, slope) for src, lag, slope in cells]

    def forward(self, x, edge_index, edge_weight=None, u=None):
        t = x.shape[1]
        return sum(slope * x[:, t - 1 - lag, src] for src, lag, slope in self.cells).unsqueeze(1)


def test_several_sources_are_found_and_a_missed_one_is_counted():
    task = LagHopTask(hop=2, lag=[1, 6], graph="grid", n_nodes=36, steps=400)
    splits = make_splits(task, window=8, horizon=1)
    both = ReadsCells([(task.sources[0], 1, 0.45), (task.sources[1], 6, 0.45)])
    r = lag_hop_recovery(both, task, splits, windows=3)
    assert r["hit_rate"] == 1.0 and r["source_hit_rates"] == (1.0, 1.0) and r["true_share"] == pytest.approx(1.0)
    assert r["gain"] == pytest.approx(0.45) and r["profile_top"] == ((2, 1), (2, 6))
    own = torch.arange(task.n_nodes)
    first = ReadsCells([(task.sources[0], 1, 0.5), (own, 0, 0.3)])  # the far source missed, the last value read
    r = lag_hop_recovery(first, task, splits, windows=3)
    assert r["source_hit_rates"] == (1.0, 0.0) and r["hit_rate"] == 0.5
    assert r["true_share"] == pytest.approx(0.5 / 0.8) and r["gain"] == pytest.approx(0.25)
    assert r["profile_argmax"] == (2, 1) and r["profile_top"] == ((0, 0), (2, 1))
    with pytest.raises(ValueError, match="do not see lag 6"):
        lag_hop_recovery(both, task, make_splits(task, window=6, horizon=1))
