"""CheckpointOnInterrupt: Ctrl-C waits for the training step (or training's validation pass) to end, saves there,
then interrupts."""
import os
import signal
from types import SimpleNamespace

import pytest
import torch
from lightning.pytorch.trainer.states import TrainerFn

from stgnn_diag.training.interrupt import CheckpointOnInterrupt


class FakeTrainer:
    world_size = 1

    def __init__(self):
        self.training, self.validating, self.sanity_checking, self.saved = True, False, False, []
        self.state = SimpleNamespace(fn=TrainerFn.FITTING)

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


def test_ctrl_c_in_trainings_validation_pass_is_deferred_to_its_end(callback, tmp_path):
    cb, trainer = callback
    trainer.training, trainer.validating = False, True
    cb._on_sigint(signal.SIGINT, None)
    assert cb.requested and trainer.saved == []
    with pytest.raises(KeyboardInterrupt):
        cb.on_validation_end(trainer, None)
    assert trainer.saved == [str(tmp_path / "last.ckpt")]


@pytest.mark.parametrize("where", ["sanity check", "test pass"])
def test_ctrl_c_outside_training_stops_at_once(callback, where):
    cb, trainer = callback
    trainer.training, trainer.validating = False, where == "sanity check"
    trainer.sanity_checking = where == "sanity check"
    if where == "test pass":
        trainer.state.fn = TrainerFn.TESTING
    with pytest.raises(KeyboardInterrupt):
        cb._on_sigint(signal.SIGINT, None)
    assert trainer.saved == [] and not cb.requested


def test_a_real_ctrl_c_at_the_epochs_validation_saves_the_epochs_end(tmp_path):
    """A real Lightning fit whose epoch-end validation receives SIGINT: the pass finishes, the checkpoint holds the
    epoch's last step, and Lightning then stops (it exits with status 1 after its graceful shutdown)."""
    import lightning as L

    class Tiny(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.lin, self.val_batches = torch.nn.Linear(2, 1), 0

        def training_step(self, batch, _):
            return self.lin(batch[0]).pow(2).mean()

        def validation_step(self, batch, _):
            self.val_batches += 1
            if self.val_batches == 1:
                os.kill(os.getpid(), signal.SIGINT)  # arrives at once: this pass must still finish

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(8, 2)), batch_size=2)
    path = tmp_path / "last.ckpt"
    model = Tiny()
    trainer = L.Trainer(max_epochs=3, num_sanity_val_steps=0, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False, accelerator="cpu",
                        callbacks=[CheckpointOnInterrupt(path)])
    before = signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(SystemExit):
            trainer.fit(model, data, data)
    finally:
        signal.signal(signal.SIGINT, before)  # Lightning ignores SIGINT during its shutdown
    assert model.val_batches == 4  # the whole validation pass ran
    assert torch.load(path, weights_only=False)["global_step"] == 4  # the first epoch's 4 steps


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
