"""CheckpointOnInterrupt: Ctrl-C waits for the training step to end, saves there, then interrupts."""
import signal

import pytest

from stgnn_diag.training.interrupt import CheckpointOnInterrupt


class FakeTrainer:
    world_size = 1

    def __init__(self):
        self.training, self.saved = True, []

    def save_checkpoint(self, path, weights_only=None):
        assert weights_only is False  # optimizer and loop state too, or --resume could not continue
        self.saved.append(path)


@pytest.fixture
def callback(tmp_path):
    before = signal.getsignal(signal.SIGINT)
    cb = CheckpointOnInterrupt(tmp_path / "last.ckpt")
    trainer = FakeTrainer()
    cb.on_train_start(trainer, None)
    assert signal.getsignal(signal.SIGINT) == cb._on_sigint
    yield cb, trainer
    cb._restore()
    assert signal.getsignal(signal.SIGINT) == before  # the handler never outlives the training


def test_first_ctrl_c_in_a_training_step_is_deferred_to_its_end_and_saved(callback, tmp_path):
    cb, trainer = callback
    cb._on_sigint(signal.SIGINT, None)  # does not raise: the step goes on
    assert cb.requested and trainer.saved == []
    with pytest.raises(KeyboardInterrupt):
        cb.on_train_batch_end(trainer, None, None, None, 0)
    assert trainer.saved == [str(tmp_path / "last.ckpt")]
    assert signal.getsignal(signal.SIGINT) != cb._on_sigint


def test_second_ctrl_c_stops_at_once_without_saving(callback):
    cb, trainer = callback
    cb._on_sigint(signal.SIGINT, None)
    with pytest.raises(KeyboardInterrupt):
        cb._on_sigint(signal.SIGINT, None)
    assert trainer.saved == []


def test_ctrl_c_outside_a_training_step_stops_at_once(callback):
    cb, trainer = callback
    trainer.training = False  # validating
    with pytest.raises(KeyboardInterrupt):
        cb._on_sigint(signal.SIGINT, None)
    assert trainer.saved == [] and not cb.requested


def test_no_request_no_save(callback):
    cb, trainer = callback
    cb.on_train_batch_end(trainer, None, None, None, 0)
    cb.on_train_end(trainer, None)
    assert trainer.saved == []


def test_inactive_under_several_processes(tmp_path):
    before = signal.getsignal(signal.SIGINT)
    trainer = FakeTrainer()
    trainer.world_size = 2
    CheckpointOnInterrupt(tmp_path / "last.ckpt").on_train_start(trainer, None)
    assert signal.getsignal(signal.SIGINT) == before
