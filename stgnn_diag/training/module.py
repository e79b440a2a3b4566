"""The Lightning module that trains any zoo model on windowed METR-LA with a masked MAE in mph."""
from __future__ import annotations

from typing import Dict, Optional

import lightning as L
import torch
from torch import Tensor, nn

from ..metrics import masked_mae
from .budgets import Budget
from .schedule import warmup_cosine

#: Columns of the METR-LA covariates ``u [.., 8]`` (time of day, one-hot weekday) per choice.
COVARIATES = {"none": 0, "tod": 1, "tod_dow": 8}


class NonFiniteLossError(FloatingPointError):
    """Raised when the training loss becomes NaN or infinite (the run stops, checkpoints stay)."""


class ForecastModule(L.LightningModule):
    """Wraps a model of the tsl contract for training and evaluation in original units (mph).

    The model predicts scaled speeds; predictions are de-normalised with the protocol's scaler
    before the masked MAE (targets equal to 0 are missing and masked out).

    Args:
        model: ``model(x, edge_index, edge_weight, u) -> [b, horizon, n, 1]``.
        edge_index: ``[2, E]``, edge_weight ``[E]``: the sensor graph (kept as buffers).
        scaler_mean, scaler_std: scalar or per-node ``[n]`` statistics of the protocol's scaler.
        budget: optimisation settings (:class:`~stgnn_diag.training.budgets.Budget`).
        steps_per_epoch: optimizer steps per epoch (for the schedule).
        covariates: ``"none"``, ``"tod"`` or ``"tod_dow"`` (columns of ``u`` passed to the model).
        hparams: extra hyper-parameters stored in the checkpoint (model name and kwargs, protocol ...).

    Shapes (batch dict):
        ``x [b, window, n, 1]`` scaled, ``u [b, window, 8]``, ``y [b, horizon, n, 1]`` mph,
        ``mask [b, horizon, n, 1]``.
    """

    def __init__(self, model: nn.Module, edge_index: Tensor, edge_weight: Optional[Tensor],
                 scaler_mean, scaler_std, budget: Budget, steps_per_epoch: int,
                 covariates: str = "tod_dow", hparams: Optional[Dict] = None):
        super().__init__()
        if covariates not in COVARIATES:
            raise ValueError(f"Unknown covariates {covariates!r}; choose one of {sorted(COVARIATES)}.")
        self.model = model
        self.budget, self.steps_per_epoch, self.covariates = budget, steps_per_epoch, covariates
        #: length of the learning-rate schedule in optimizer steps (a wall-clock budget fixes it during training)
        self.schedule_steps = budget.max_epochs * steps_per_epoch
        self.register_buffer("edge_index", edge_index.clone())
        self.register_buffer("edge_weight", None if edge_weight is None else edge_weight.clone().float())
        mean = torch.as_tensor(scaler_mean, dtype=torch.float32)
        std = torch.as_tensor(scaler_std, dtype=torch.float32)
        shape = (1, 1, -1, 1) if mean.dim() == 1 else ()
        self.register_buffer("scaler_mean", mean.reshape(shape))
        self.register_buffer("scaler_std", std.reshape(shape))
        self.save_hyperparameters({"covariates": covariates, "budget": budget.to_dict(),
                                   "steps_per_epoch": steps_per_epoch, **(hparams or {})})

    def forward(self, x: Tensor, u: Optional[Tensor] = None) -> Tensor:
        """Prediction in mph ``[b, horizon, n, 1]`` from scaled inputs ``x [b, window, n, 1]``."""
        k = COVARIATES[self.covariates]
        u = u[..., :k] if (u is not None and k) else None
        out = self.model(x, self.edge_index, self.edge_weight, u=u)
        return out * self.scaler_std + self.scaler_mean

    def _loss(self, batch: Dict[str, Tensor]) -> Tensor:
        return masked_mae(self(batch["x"], batch.get("u")), batch["y"])

    def training_step(self, batch, batch_idx):
        loss = self._loss(batch)
        if not torch.isfinite(loss):
            raise NonFiniteLossError(
                f"Training loss is {loss.item()} at step {self.global_step} (epoch {self.current_epoch}); "
                f"the last good checkpoint is kept. Check the inputs for NaN / Inf, then try a lower --lr.")
        self.log("train_mae", loss, on_step=False, on_epoch=True, prog_bar=True,
                 batch_size=batch["x"].size(0), sync_dist=True)
        self.log("lr", self.optimizers().param_groups[0]["lr"], on_step=True, on_epoch=False,
                 batch_size=batch["x"].size(0))
        return loss

    def validation_step(self, batch, batch_idx):
        pred = self(batch["x"], batch.get("u"))
        kw = dict(on_step=False, on_epoch=True, batch_size=batch["x"].size(0), sync_dist=True)
        self.log("val_mae", masked_mae(pred, batch["y"]), prog_bar=True, **kw)
        self.log("val_mae_last", masked_mae(pred[:, -1], batch["y"][:, -1]), **kw)  # the horizon's last step

    def predict_step(self, batch, batch_idx, dataloader_idx: int = 0) -> Tensor:
        return self(batch["x"], batch.get("u"))

    def configure_optimizers(self):
        b = self.budget
        opt = torch.optim.AdamW(self.parameters(), lr=b.lr, weight_decay=b.weight_decay)
        warmup = int(round(b.warmup_epochs * self.steps_per_epoch))

        def lam(step: int) -> float:  # reads schedule_steps at every step: a wall-clock budget may fix it late
            return warmup_cosine(step, warmup_steps=warmup, total_steps=self.schedule_steps, base_lr=b.lr,
                                 min_lr=b.min_lr)

        sched = torch.optim.lr_scheduler.LambdaLR(opt, lam)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}

    def on_save_checkpoint(self, checkpoint: Dict) -> None:
        checkpoint["schedule_steps"] = self.schedule_steps

    def on_load_checkpoint(self, checkpoint: Dict) -> None:
        self.schedule_steps = checkpoint.get("schedule_steps", self.schedule_steps)

