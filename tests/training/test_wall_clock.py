"""Wall-clock budgets: a time limit becomes a recorded number of steps that repeats the run exactly."""
from datetime import timedelta

import pytest
import torch

from stgnn_diag.training import TrainConfig, load_checkpoint, train
from stgnn_diag.training.wall_clock import parse_duration

from .test_engine import tiny_cfg


@pytest.mark.parametrize("text,seconds", [("15m", 900), ("90s", 90), ("1.5h", 5400), ("1h30m", 5400),
                                          ("00:00:15:00", 900), ("2d", 172800)])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("bad", ["15", "fifteen minutes", "0m", "-5m", "1:2"])
def test_parse_duration_rejects_what_it_cannot_read(bad):
    with pytest.raises(ValueError, match="DD:HH:MM:SS"):
        parse_duration(bad)


@pytest.mark.slow
def test_max_time_fixes_the_steps_and_max_steps_repeats_the_run(tmp_path, metr_la_root):
    # 24 batches an epoch: cpu-small's warm-up of half an epoch is 12 steps, where the length gets fixed
    kw = dict(max_epochs=None, limit_train_batches=24, max_windows=1200)
    timed = train(tiny_cfg(tmp_path, metr_la_root, "timed", max_time="10s", **kw))
    steps = timed["schedule_steps"]
    assert timed["max_time"] == "10s" and timed["max_steps_repeats"] is True
    assert 12 <= timed["global_steps"] <= steps  # calibrated at step 12, then ran to the fixed length
    again = train(tiny_cfg(tmp_path, metr_la_root, "again", max_steps=timed["global_steps"], **kw))
    assert again["global_steps"] == timed["global_steps"]
    if timed["global_steps"] == steps:  # ended by its fixed length (not by Lightning's hard time limit)
        assert again["metrics"] == timed["metrics"]
        wa = load_checkpoint(tmp_path / "timed" / "checkpoints" / "last.ckpt").state_dict()
        wb = load_checkpoint(tmp_path / "again" / "checkpoints" / "last.ckpt").state_dict()
        assert all(torch.equal(wa[k], wb[k]) for k in wa)


def test_max_steps_and_max_time_together_is_an_error(tmp_path, metr_la_root):
    with pytest.raises(ValueError, match="not both"):
        train(tiny_cfg(tmp_path, metr_la_root, max_steps=10, max_time="1m"))
    with pytest.raises(ValueError, match="positive"):
        train(tiny_cfg(tmp_path, metr_la_root, "neg", max_steps=0))
