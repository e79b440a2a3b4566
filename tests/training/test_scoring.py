"""`evaluate --steps`: every step scored, and a step the model predicts as one constant found."""
import numpy as np
import pytest
import torch

from stgnn_diag.cli import main
from stgnn_diag.training import TrainConfig, evaluate, train
from stgnn_diag.training.scoring import constant_steps

from .test_engine import TINY


def test_constant_steps_on_hand_made_predictions():
    rng = np.random.default_rng(0)
    pred = rng.normal(50, 5, size=(20, 6, 7)).astype(np.float32)  # [windows, horizon, nodes]
    pred[:, 1] = 61.5   # step 2: one value everywhere
    pred[:, 4, :3] = 3.0  # step 5: constant on some nodes only -> not constant
    assert constant_steps(pred) == [2]
    assert constant_steps(rng.normal(size=(5, 3, 4))) == []
    # a float32 step of 124,200 equal values: its float32 std is ~0.04, far above the threshold
    big = rng.normal(50, 5, size=(600, 12, 207)).astype(np.float32)
    big[:, 3] = np.float32(34.91219)
    assert constant_steps(big) == [4]


def test_every_step_of_a_baseline_matches_the_default_steps(metr_la_root):
    full = evaluate("last_value", data_root=metr_la_root, max_windows=300, progress=False, steps="all")
    default = evaluate("last_value", data_root=metr_la_root, max_windows=300, progress=False)
    assert {f"mae@{s}" for s in range(1, 13)} <= set(full["metrics"])
    for k, v in default["metrics"].items():
        assert full["metrics"][k] == pytest.approx(v)
    assert full["constant_steps"] == []


@pytest.mark.slow
def test_a_dead_read_out_step_is_found(tmp_path, metr_la_root, capsys):
    train(TrainConfig(out=str(tmp_path / "run"), data_root=str(metr_la_root), **TINY))
    ckpt = torch.load(tmp_path / "run" / "checkpoints" / "last.ckpt", map_location="cpu", weights_only=False)
    # step 4's output row: no input weight, only a bias (what a dead read-out unit amounts to)
    w, b = "model.head.out.weight", "model.head.out.bias"
    ckpt["state_dict"][w][3] = 0.0
    ckpt["state_dict"][b][3] = -1.0
    dead = tmp_path / "dead.ckpt"
    torch.save(ckpt, dead)
    live = evaluate(checkpoint=tmp_path / "run" / "checkpoints" / "last.ckpt", data_root=metr_la_root,
                    max_windows=600, progress=False, steps="all")
    assert live["constant_steps"] == []
    assert main(["evaluate", "--checkpoint", str(dead), "--steps", "all", "--data-root", str(metr_la_root),
                 "--max-windows", "600", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "| 4 |" in out and "constant |" in out and "step(s) [4]" in out
    assert out.count("constant |") == 1
    assert main(["evaluate", "--model", "last_value", "--steps", "two", "--data-root", str(metr_la_root)]) != 0
    assert "--steps takes 'all' or step numbers" in capsys.readouterr().err
    assert main(["evaluate", "--model", "last_value", "--steps", "13", "--data-root", str(metr_la_root),
                 "--max-windows", "300", "--no-progress"]) == 2
    assert "outside 1..12" in capsys.readouterr().err


def test_predictions_do_not_depend_on_the_scoring_batch(dcrnn_splits):
    from stgnn_diag.training.budgets import get_budget
    from stgnn_diag.training.scoring import predict_split, scoring_batch_size
    from stgnn_diag.training.module import ForecastModule

    torch.manual_seed(0)
    module = ForecastModule("tas_attn_none", dict(hidden_size=8, heads=2, n_nodes=207), 54.4, 19.5,
                            get_budget("cpu-small"), 1, edge_index=dcrnn_splits.edge_index)

    class First:  # the first 70 test windows: two default batches and a partial third
        def __getitem__(self, i):
            return dcrnn_splits["test"][i]

        def __len__(self):
            return 70

    splits = {"test": First()}
    assert scoring_batch_size("cpu") == 32 and scoring_batch_size(torch.device("cuda", 0)) == 128
    default = predict_split(module, splits, progress=False)
    one_by_one = predict_split(module, splits, batch_size=1, progress=False)
    assert default.shape == (70, 12, 207)
    np.testing.assert_allclose(default, one_by_one, rtol=1e-5, atol=1e-4)
