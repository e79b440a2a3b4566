"""The Lightning module that trains any zoo model on windowed data with a masked MAE in original units."""
from __future__ import annotations

from typing import Any, Dict, Optional, Union

import lightning as L
import torch
from torch import Tensor

from ..metrics import masked_mae
from ..zoo import create_model, get_entry
from ..zoo.registry import saved_model_kwargs
from .budgets import Budget
from .schedule import warmup_cosine

#: Absolute reading in mph below which an unscaled input counts as the missing placeholder 0 (float32 round trip
#: of the scaler: about 1e-5 mph).
MISSING_TOL = 1e-3

#: Columns of the covariates ``u [.., 8]`` (time of day, one-hot weekday) per choice.
COVARIATES = {"none": 0, "tod": 1, "tod_dow": 8}


def saved_hparams(hp: Dict[str, Any]) -> Dict[str, Any]:
    """A checkpoint's hyper-parameters with its model's arguments as
    :func:`~stgnn_diag.zoo.registry.saved_model_kwargs` completes them (an option added since the checkpoint
    was saved builds the model as it was)."""
    if "model_name" not in hp or not isinstance(hp.get("model_kwargs"), dict):
        return dict(hp)
    return {**hp, "model_kwargs": saved_model_kwargs(hp["model_name"], hp["model_kwargs"])}


class NonFiniteLossError(FloatingPointError):
    """Raised when the training loss becomes NaN or infinite (the run stops, checkpoints stay)."""


def _scaler_buffer(value) -> Tensor:
    """A scaler statistic as a buffer: ``[]`` for a scalar, ``[1, 1, n, 1]`` for per-node values."""
    t = torch.as_tensor(value, dtype=torch.float32)
    return t.reshape(1, 1, -1, 1) if t.dim() >= 1 else t


class ForecastModule(L.LightningModule):
    """Builds a zoo model from its name and arguments and trains it in original units (mph).

    The model predicts scaled speeds; predictions are de-normalised with the protocol's scaler
    before the masked MAE (targets equal to 0 are missing and masked out). Everything but the graph
    and the scaler is a saved hyper-parameter, so Lightning's ``ForecastModule.load_from_checkpoint(path)``
    rebuilds the module (the graph and the scaler come back from the checkpoint's state); the file is read
    by :func:`~stgnn_diag.training.safe_load.load_file` (``weights_only=True``, an explicit allow-list).

    Args:
        model_name: a zoo name (``stgnn_diag.list_models()``).
        model_kwargs: its arguments (``n_nodes``, ``exog_size`` ...).
        scaler_mean, scaler_std: scalar or per-node ``[n]`` statistics of the protocol's scaler.
        budget: optimisation settings (:class:`~stgnn_diag.training.budgets.Budget` or its ``to_dict()``).
        steps_per_epoch: optimizer steps per epoch of one process (for the warm-up before the trainer
            knows it; :meth:`configure_optimizers` takes both lengths from the trainer).
        covariates: ``"none"``, ``"tod"`` or ``"tod_dow"`` (columns of ``u`` passed to the model).
        edge_index: ``[2, E]``, edge_weight ``[E]``: the sensor graph (kept as buffers).
        pretrained: a tag of the zoo entry's shipped weights to start from (``create_model(pretrained=)``).
        **info: more hyper-parameters kept in the checkpoint (protocol, window, horizon, seed, dataset ...).

    Shapes (batch dict):
        ``x [b, window, n, 1]`` scaled, ``u [b, window, 8]``, ``y [b, horizon, n, 1]`` mph,
        ``mask [b, horizon, n, 1]``.
    """

    def __init__(self, model_name: str, model_kwargs: Optional[Dict[str, Any]] = None, scaler_mean=0.0,
                 scaler_std=1.0, budget: Union[Budget, Dict, None] = None, steps_per_epoch: int = 1,
                 covariates: str = "tod_dow", edge_index: Optional[Tensor] = None,
                 edge_weight: Optional[Tensor] = None, pretrained: Union[bool, str] = False, **info):
        super().__init__()
        if covariates not in COVARIATES:
            raise ValueError(f"Unknown covariates {covariates!r}; choose one of {sorted(COVARIATES)}.")
        from .budgets import BUDGETS

        if budget is None:
            budget = BUDGETS["cpu-15min"]
        elif not isinstance(budget, Budget):  # the saved hyper-parameter (Budget.to_dict())
            budget = Budget(**{**budget, "model_overrides": tuple(dict(budget.get("model_overrides", {})).items())})
        model_kwargs = dict(model_kwargs or {})
        self.model = create_model(model_name, pretrained=pretrained, **model_kwargs)
        if get_entry(model_name).native:  # every constructor argument: the checkpoint rebuilds this very model even
            model_kwargs = dict(self.model.config["model_kwargs"])  # after a default of its zoo entry changed
        self.budget, self.steps_per_epoch, self.covariates = budget, steps_per_epoch, covariates
        #: length of the learning-rate schedule in optimizer steps (the trainer's estimate at the start of
        #: fitting; a wall-clock budget fixes it during training)
        self.schedule_steps = budget.max_epochs * steps_per_epoch
        self.warmup_steps = int(round(budget.warmup_epochs * steps_per_epoch))
        self.register_buffer("edge_index", torch.zeros(2, 0, dtype=torch.long) if edge_index is None
                             else edge_index.clone())
        self.register_buffer("edge_weight", None if edge_weight is None else edge_weight.clone().float())
        self.register_buffer("scaler_mean", _scaler_buffer(scaler_mean))
        self.register_buffer("scaler_std", _scaler_buffer(scaler_std))
        self.save_hyperparameters({"model_name": model_name, "model_kwargs": model_kwargs,
                                   "budget": budget.to_dict(), "steps_per_epoch": steps_per_epoch,
                                   "covariates": covariates, "pretrained": pretrained, **info})

    def observed(self, x: Tensor) -> Tensor:
        """Mask ``[b, window, n, 1]`` of the observed readings of scaled inputs ``x``: a reading of 0 mph is
        missing (the data sets' convention, as for the targets of the masked MAE)."""
        return (x * self.scaler_std + self.scaler_mean).abs() > MISSING_TOL

    def forward(self, x: Tensor, u: Optional[Tensor] = None, x_mask: Optional[Tensor] = None) -> Tensor:
        """Prediction in mph ``[b, horizon, n, 1]`` from scaled inputs ``x [b, window, n, 1]``. A model built
        with ``input_mask=True`` also gets ``x_mask [b, window, n, 1]`` (bool, True where observed): the batch's
        own when it carries one (a data set whose gaps were filled before scaling knows them, its values no
        longer do), else :meth:`observed` of ``x``."""
        k = COVARIATES[self.covariates]
        u = u[..., :k] if (u is not None and k) else None
        mask = {}
        if getattr(self.model, "input_mask", False):
            mask["x_mask"] = self.observed(x) if x_mask is None else x_mask
        out = self.model(x, self.edge_index, self.edge_weight, u=u, **mask)
        return out * self.scaler_std + self.scaler_mean

    def _loss(self, batch: Dict[str, Tensor]) -> Tensor:
        """The masked MAE of the batch. Under DDP each rank holds a slice of the global batch
        (:class:`~stgnn_diag.training.data.WindowDataModule`): its error sum over the observed targets of all
        ranks, times the world size (DDP averages the ranks' gradients), is the global batch's masked MAE, and its
        gradient the one a single process would compute on the whole batch."""
        pred, y = self(batch["x"], batch.get("u"), batch.get("x_mask")), batch["y"]
        trainer = self._trainer
        world = 1 if trainer is None else trainer.world_size
        if world == 1:
            return masked_mae(pred, y)
        observed = (y != 0) & ~torch.isnan(y)
        err = torch.where(observed, (pred - y).abs(), torch.zeros_like(pred)).sum()
        count = trainer.strategy.reduce(observed.sum().to(err.dtype).detach(), reduce_op="sum")
        return err * world / count

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
        pred = self(batch["x"], batch.get("u"), batch.get("x_mask"))
        kw = dict(on_step=False, on_epoch=True, batch_size=batch["x"].size(0), sync_dist=True)
        self.log("val_mae", masked_mae(pred, batch["y"]), prog_bar=True, **kw)
        self.log("val_mae_last", masked_mae(pred[:, -1], batch["y"][:, -1]), **kw)  # the horizon's last step

    def predict_step(self, batch, batch_idx, dataloader_idx: int = 0) -> Tensor:
        return self(batch["x"], batch.get("u"), batch.get("x_mask"))

    def _lengths_from_trainer(self) -> None:
        """Warm-up and schedule length in optimizer steps, as the trainer counts them (batches of the global batch
        size: the same at any world size, see :class:`~stgnn_diag.training.data.WindowDataModule`). An unbounded fit (a wall-clock budget) keeps the current length
        until :class:`~stgnn_diag.training.wall_clock.WallClockBudget` fixes it."""
        trainer = self._trainer
        if trainer is None:
            return
        total = trainer.estimated_stepping_batches  # also sets up the train loader (num_training_batches)
        per_epoch = trainer.num_training_batches
        if per_epoch not in (None, float("inf")) and per_epoch > 0:
            self.steps_per_epoch = int(per_epoch)
            self.warmup_steps = int(round(self.budget.warmup_epochs * self.steps_per_epoch))
        if total != float("inf"):
            self.schedule_steps = int(total)

    def configure_optimizers(self):
        b = self.budget
        self._lengths_from_trainer()
        opt = torch.optim.AdamW(self.parameters(), lr=b.lr, weight_decay=b.weight_decay)

        def lam(step: int) -> float:  # reads schedule_steps at every step: a wall-clock budget may fix it late
            return warmup_cosine(step, warmup_steps=self.warmup_steps, total_steps=self.schedule_steps,
                                 base_lr=b.lr, min_lr=b.min_lr)

        sched = torch.optim.lr_scheduler.LambdaLR(opt, lam)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}

    def on_save_checkpoint(self, checkpoint: Dict) -> None:
        checkpoint["schedule_steps"] = self.schedule_steps

    def on_load_checkpoint(self, checkpoint: Dict) -> None:
        self.schedule_steps = checkpoint.get("schedule_steps", self.schedule_steps)
        # the graph and the scaler are state, not hyper-parameters: take their shapes from the file
        state = checkpoint.get("state_dict", {})
        for name in ("edge_index", "edge_weight", "scaler_mean", "scaler_std"):
            if name in state and (getattr(self, name) is None or getattr(self, name).shape != state[name].shape):
                setattr(self, name, torch.empty_like(state[name]))

    def input_spec(self) -> Dict[str, Any]:
        """What the wrapped model's inputs and outputs are, for a user outside the engine (JSON)."""
        from ..datasets.covariates import ENCODINGS
        from ..datasets.graph import EDGE_DIRECTION

        def scalar_or_list(t: Tensor):
            t = t.flatten()
            return float(t) if t.numel() == 1 else [float(v) for v in t]

        hp = self.hparams
        spec = {} if not getattr(self.model, "input_mask", False) else {
            "x_mask": "[batch, window, nodes, 1] bool: True where the reading is observed (a reading of 0 is missing)"}
        return {"x": "[batch, window, nodes, 1]: the target variable, scaled as (x - scaler_mean) / scaler_std",
                **spec,
                "output": "[batch, horizon, nodes, 1]: scaled; value = output * scaler_std + scaler_mean",
                "scaler_mean": scalar_or_list(self.scaler_mean), "scaler_std": scalar_or_list(self.scaler_std),
                "covariates": self.covariates, "covariate_encoding": ENCODINGS[self.covariates],
                "window": hp.get("window"), "horizon": hp.get("horizon"), "edge_direction": EDGE_DIRECTION}

    def save_pretrained(self, directory, **info):
        """The wrapped model, its configuration and :meth:`input_spec` into ``directory``
        (:func:`stgnn_diag.zoo.save_pretrained`; read back with ``stgnn_diag.from_pretrained``)."""
        from ..zoo import save_pretrained

        hp = self.hparams
        return save_pretrained(self.model, directory, inputs=self.input_spec(), protocol=hp.get("protocol"),
                               seed=hp.get("seed"), **info)

    @classmethod
    def load_from_checkpoint(cls, checkpoint_path, map_location=None, hparams_file=None, strict=None, **kwargs):
        """Lightning's loader, reading the file with the library's safe reader (``weights_only=True`` and
        an explicit allow-list; a file that would run code raises
        :class:`~stgnn_diag.training.safe_load.UnsafeCheckpointError`)."""
        from .safe_load import allowed_globals, load_file

        allowed = allowed_globals(checkpoint_path)  # refuses before Lightning reads anything
        if "model_kwargs" not in kwargs:  # Lightning builds the module from the saved ones, read here first
            hp = saved_hparams(load_file(checkpoint_path, "cpu").get("hyper_parameters", {}))
            if "model_kwargs" in hp:
                kwargs["model_kwargs"] = hp["model_kwargs"]
        with torch.serialization.safe_globals(allowed):
            return super().load_from_checkpoint(checkpoint_path, map_location=map_location,
                                                hparams_file=hparams_file, strict=strict, weights_only=True,
                                                **kwargs)
