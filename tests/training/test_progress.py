"""ProgressBar: after a resume from a mid-epoch checkpoint the bar still has the epoch's total (so an ETA)."""
import lightning as L
import torch
from lightning.pytorch.callbacks import ModelCheckpoint

from stgnn_diag.training.progress import ProgressBar


class Tiny(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 1)

    def training_step(self, batch, _):
        return self.lin(batch[0]).pow(2).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class Seen(L.Callback):
    """What the bar shows at each batch's end: (total, start, count, description)."""

    def __init__(self, bar):
        self.bar, self.rows = bar, []

    def on_train_batch_end(self, *_):
        b = self.bar.train_progress_bar
        self.rows.append((b.total, b.initial, b.n, b.desc.rstrip(": ")))


def fit(tmp_path, **kw):
    bar = ProgressBar(refresh_rate=1)
    seen = Seen(bar)
    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(16, 2)), batch_size=2)
    ckpt = ModelCheckpoint(dirpath=tmp_path, filename="mid", every_n_train_steps=3, save_top_k=-1)
    trainer = L.Trainer(num_sanity_val_steps=0, logger=False, enable_model_summary=False, accelerator="cpu",
                        callbacks=[ckpt, bar, seen], **kw)
    return trainer, data, seen


def test_a_resumed_epoch_keeps_its_total_and_counts_from_where_it_resumed(tmp_path):
    trainer, data, seen = fit(tmp_path, max_steps=3)
    trainer.fit(Tiny(), data)
    assert len(seen.rows) == 3 and seen.rows[-1][3] == "Epoch 0"  # 3 of the epoch's 8 batches

    trainer, data, seen = fit(tmp_path / "again", max_epochs=1)
    trainer.fit(Tiny(), data, ckpt_path=tmp_path / "mid.ckpt")
    total, start, n, desc = seen.rows[0]
    assert (total, start, desc) == (8, 3, "Epoch 0")  # Lightning's own bar: total None ("4/?"), "Training"
    assert [r[2] for r in seen.rows] == [4, 5, 6, 7, 8] and len(seen.rows) == 5
