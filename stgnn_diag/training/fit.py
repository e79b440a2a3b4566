"""``train``: fit a zoo model on a data set under a protocol and a budget, then test it."""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional

import lightning as L
import torch
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.utilities.rank_zero import rank_zero_only

from ..datasets import DEFAULT_DATASET, check_dataset_name, get_dataset, make_splits
from ..zoo import check_model_name, get_entry
from ..zoo.registry import constructor_defaults
from .budgets import Budget, budget_overrides, get_budget
from .checkpoint_io import AtomicCheckpointIO
from .data import WindowDataModule
from ..nn import DiagonalSchedule
from .ddp_check import RankAgreement
from .scoring import score_split
from .interrupt import CheckpointOnInterrupt
from .module import COVARIATES, ForecastModule
from .malloc import keep_freed_memory
from .wall_clock import ElapsedTime, WallClockBudget, parse_duration
from .logs import LOGS, merge_attempt_logs, next_attempt, read_attempts, write_attempt
from .plots import plot_loss_curve
from .progress import ProgressBar
from .provenance import environment
from .quiet import quiet_lightning
from .run_dir import (CHECKPOINTS, CONFIG_JSON, LAST, METRICS_JSON, RESUMABLE_CHANGES, RunLock, check_same_model,
                      check_same_run, last_checkpoint,
                      prepare_run_dir, write_json)
from .seasonal import seasonal_table


@dataclass
class TrainConfig:
    """Everything that defines a training run (stored as ``config.json`` and in checkpoints)."""

    model: str
    out: str
    dataset: str = DEFAULT_DATASET
    protocol: str = "dcrnn"
    horizon: int = 12
    window: int = 12
    align_window: Optional[int] = None    # score on the targets of this input length (datasets.make_splits)
    budget: str = "cpu-small"
    seed: int = 0
    covariates: str = "auto"
    data_root: Optional[str] = None
    model_overrides: Optional[Dict[str, Any]] = None
    max_windows: Optional[int] = None     # thin every split (tests / smoke runs)
    # budget overrides (None: the preset's value): one field per budgets.OVERRIDABLE knob
    max_epochs: Optional[int] = None
    batch_size: Optional[int] = None
    limit_train_batches: Optional[int] = None
    limit_val_batches: Optional[int] = None
    lr: Optional[float] = None
    weight_decay: Optional[float] = None
    patience: Optional[int] = None
    max_steps: Optional[int] = None       # train exactly this many steps (the schedule's length), any epochs
    max_time: Optional[str] = None        # wall-clock budget ("15m"): fixes max_steps after a calibration
    # devices (passed through to Lightning)
    accelerator: str = "cpu"
    devices: Any = 1
    strategy: str = "auto"
    num_nodes: int = 1
    checkpoint_every_n_steps: int = 25
    diag_schedule: Optional[str] = None   # "param:start:end:epochs[:shape]", e.g. "diag_p:0:0.3:5"
    progress: bool = True
    resume: bool = False                  # continue the run in ``out`` from checkpoints/last.ckpt
    overwrite: bool = False               # start over in an ``out`` that already holds a run


def _check_length(cfg: TrainConfig):
    """``--max-steps`` / ``--max-time`` / ``--checkpoint-every`` checked; returns the wall-clock budget as a
    timedelta (or None)."""
    if cfg.max_steps is not None and cfg.max_time is not None:
        raise ValueError("Give --max-steps or --max-time, not both (a time budget fixes the steps itself; "
                         "--max-steps repeats a timed run exactly).")
    if cfg.max_steps is not None and (not isinstance(cfg.max_steps, int) or cfg.max_steps <= 0):
        raise ValueError(f"--max-steps must be a positive integer, got {cfg.max_steps!r}.")
    every = cfg.checkpoint_every_n_steps
    if not isinstance(every, int) or isinstance(every, bool) or every <= 0:
        raise ValueError(f"--checkpoint-every must be a positive integer (steps), got {every!r}.")
    return None if cfg.max_time is None else parse_duration(cfg.max_time)


def _resolve_covariates(model: str, covariates: str) -> str:
    if covariates != "auto":
        if covariates not in COVARIATES:
            raise ValueError(f"Unknown covariates {covariates!r}; choose one of {sorted(COVARIATES)} or 'auto'.")
        return covariates
    # entries built for time of day only (paper_tas) keep it; others (tsl:/pygt: too) get tod + weekday
    entry = get_entry(model)
    if not entry.native:
        return "tod_dow"
    return "tod" if entry.defaults.get("exog_size") == 1 else "tod_dow"




class DiagonalScheduleCallback(L.Callback):
    """Applies a :class:`~stgnn_diag.nn.DiagonalSchedule` at the start of every training epoch."""

    def __init__(self, schedule: DiagonalSchedule):
        self.schedule = schedule

    def on_fit_start(self, trainer, pl_module) -> None:  # fail before training, not after an epoch
        self.schedule.apply(pl_module.model, trainer.current_epoch)

    def on_train_epoch_start(self, trainer, pl_module) -> None:
        value = self.schedule.apply(pl_module.model, trainer.current_epoch)
        pl_module.log(self.schedule.param, value, on_step=False, on_epoch=True)


def build(cfg: TrainConfig, budget: Budget, splits) -> ForecastModule:
    """The model and its Lightning module for ``cfg`` on ``splits``."""
    covariates = _resolve_covariates(cfg.model, cfg.covariates)
    kwargs = {**dict(budget.model_overrides), **(cfg.model_overrides or {}),
              "n_nodes": splits.n_nodes, "horizon": cfg.horizon, "window": cfg.window,
              "exog_size": COVARIATES[covariates]}
    steps = len(splits.train) // budget.batch_size
    if budget.limit_train_batches:
        steps = min(steps, budget.limit_train_batches)
    if steps == 0:
        raise ValueError(f"The training split ({len(splits.train)} windows) holds no full batch of "
                         f"{budget.batch_size}; lower --batch-size.")
    module = ForecastModule(cfg.model, kwargs, splits.scaler.mean, splits.scaler.std, budget, steps_per_epoch=steps,
                            covariates=covariates, edge_index=splits.edge_index, edge_weight=splits.edge_weight,
                            dataset=cfg.dataset, protocol=cfg.protocol, window=cfg.window, horizon=cfg.horizon,
                            align_window=cfg.align_window,
                            seed=cfg.seed)
    if getattr(module.model, "fallback", None) is not None:
        module.model.fallback.set_table(seasonal_table(splits))
    return module


def _deterministic(accelerator: str):
    """Lightning's ``deterministic`` for ``accelerator``: strict on CPU; ``"warn"`` elsewhere, because on
    CUDA PyG's sum aggregation (``scatter_add_`` over [E, ...] messages) has no deterministic kernel and would
    raise. cuBLAS gets the workspace setting it needs for deterministic products (before CUDA starts)."""
    if accelerator == "cpu":
        return True
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    return "warn"


def _device_name(accelerator: str) -> str:
    """``"cpu"`` or ``"cuda (<GPU name>)"``: where this attempt trains."""
    if accelerator != "cpu" and torch.cuda.is_available():
        return f"cuda ({torch.cuda.get_device_name(0)})"
    return "cpu"


def train(cfg: TrainConfig) -> Dict[str, Any]:
    """Train ``cfg.model``, checkpoint every epoch (and every few steps), test the last model.

    Writes into ``cfg.out``: ``config.json``, ``checkpoints/`` (``last.ckpt`` + one per epoch),
    ``metrics.csv`` (per-epoch train / val MAE), ``metrics.json`` (test metrics, parameter count,
    time, environment) and ``loss_curve.png``. Returns the ``metrics.json`` content.
    """
    check_model_name(cfg.model)  # unknown model / data set -> clear error before any work
    check_dataset_name(cfg.dataset)
    if cfg.accelerator in ("gpu", "cuda") and not torch.cuda.is_available():
        raise ValueError(f"--accelerator {cfg.accelerator} asked, but torch sees no CUDA device (torch "
                         f"{torch.__version__}); train with --accelerator cpu.")
    quiet_lightning()
    keep_freed_memory()
    budget = get_budget(cfg.budget).with_overrides(**budget_overrides(cfg))
    out = Path(cfg.out)
    max_time = _check_length(cfg)
    config = {k: v for k, v in vars(cfg).items() if k not in ("resume", "overwrite", "progress")}
    config["budget_resolved"] = budget.to_dict()
    if rank_zero_only.rank != 0:  # a DDP worker re-launched by Lightning: rank 0 owns (and has checked) the folder
        return _fit_and_test(cfg, budget, config, max_time, last_checkpoint(out) if cfg.resume else None)
    with RunLock(out):  # before any check: a second process (or --overwrite) must not touch a live run
        resume_from = prepare_run_dir(out, resume=cfg.resume, overwrite=cfg.overwrite)
        if resume_from is not None:
            # the model's resolved configuration is compared once it is built (check_same_model)
            check_same_run(out, config, ignore=RESUMABLE_CHANGES + ("model_config",),
                           absent_means={"dataset": DEFAULT_DATASET, "align_window": None})
        return _fit_and_test(cfg, budget, config, max_time, resume_from)


def _leave_process_group(world_size: int) -> None:
    """Under DDP: wait until every rank is done (rank 0 writes the run's outputs last), then leave the process group
    together. Without it a rank that has finished exits while gloo still holds its connections to a busy peer, and
    gloo can abort it (SIGABRT, seen in the two-node launch) and so fail the launch after a complete run."""
    if world_size > 1 and torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()


def _fit_and_test(cfg: TrainConfig, budget: Budget, config: Dict[str, Any], max_time, resume_from
                  ) -> Dict[str, Any]:
    out = Path(cfg.out)
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    data = get_dataset(cfg.dataset, cfg.data_root, progress=cfg.progress)
    splits = make_splits(data, cfg.protocol, window=cfg.window, horizon=cfg.horizon, max_windows=cfg.max_windows,
                         align_window=cfg.align_window)
    module = build(cfg, budget, splits)
    # every constructor argument of the model: a later change of a zoo default cannot pass for this run
    config["model_config"] = json.loads(json.dumps(module.model.config, default=str))
    if resume_from is not None and rank_zero_only.rank == 0:
        check_same_model(out, config["model_config"], constructor_defaults(module.model))
    if cfg.max_steps:
        module.schedule_steps = cfg.max_steps
    if resume_from is None and rank_zero_only.rank == 0:
        write_json(out / CONFIG_JSON, config)
    attempt = next_attempt(out, resume_from is not None) if rank_zero_only.rank == 0 else "worker"
    callbacks = [
        # both callbacks write the one last.ckpt (no "last-v1"): always the most recent state
        ModelCheckpoint(dirpath=out / CHECKPOINTS, filename="epoch{epoch:03d}", auto_insert_metric_name=False,
                        save_top_k=-1, every_n_epochs=1, save_last=True, enable_version_counter=False),
        # mid-epoch safety net: an interrupted epoch loses at most this many steps
        ModelCheckpoint(dirpath=out / CHECKPOINTS, filename="last", every_n_train_steps=cfg.checkpoint_every_n_steps,
                        save_top_k=1, enable_version_counter=False),
    ]
    agreement = RankAgreement(splits, batch_size=max(budget.batch_size, 64))
    callbacks += [agreement, CheckpointOnInterrupt(out / CHECKPOINTS / LAST)]  # Ctrl-C loses no step
    if cfg.diag_schedule:
        callbacks.append(DiagonalScheduleCallback(DiagonalSchedule.parse(cfg.diag_schedule)))
    if budget.patience:
        callbacks.append(EarlyStopping("val_mae", patience=budget.patience, mode="min"))
    callbacks.append(ElapsedTime())
    if max_time is not None:
        callbacks.append(WallClockBudget(max_time))
    if cfg.progress:
        callbacks.append(ProgressBar(refresh_rate=5))
    by_length = cfg.max_steps or max_time is not None
    trainer = L.Trainer(
        max_epochs=-1 if by_length else budget.max_epochs, max_steps=cfg.max_steps or -1, max_time=max_time,
        limit_train_batches=budget.limit_train_batches,
        limit_val_batches=budget.limit_val_batches, gradient_clip_val=budget.grad_clip,
        accelerator=cfg.accelerator, devices=cfg.devices, strategy=cfg.strategy, num_nodes=cfg.num_nodes,
        callbacks=callbacks, logger=CSVLogger(out / LOGS, name="", version=attempt), enable_progress_bar=cfg.progress,
        use_distributed_sampler=False, deterministic=_deterministic(cfg.accelerator), enable_model_summary=False,
        default_root_dir=out, num_sanity_val_steps=0, plugins=[AtomicCheckpointIO()],
        log_every_n_steps=max(1, min(50, module.steps_per_epoch)))
    env = environment()  # the code that trains is the code at the start, whatever is committed meanwhile
    device = _device_name(cfg.accelerator)
    t0, finished = time.perf_counter(), False
    try:
        trainer.fit(module, datamodule=WindowDataModule(splits, budget.batch_size, seed=cfg.seed),
                    ckpt_path=resume_from)
        finished = not trainer.interrupted
    except SystemExit:  # Lightning answers Ctrl-C with sys.exit(1); callers expect an interrupt
        if trainer.interrupted:
            raise KeyboardInterrupt from None
        raise
    finally:  # an interrupted attempt is recorded too: a resumed run adds up the time of all its attempts
        train_time = time.perf_counter() - t0
        if trainer.global_rank == 0:
            write_attempt(out, attempt, {"device": device, "fit_s": round(train_time, 1),
                                         "end_step": trainer.global_step, "finished": finished, "environment": env})
    if device != "cpu":  # Lightning's teardown left the module on the CPU: test where it trained
        module.to(trainer.strategy.root_device)
    # every rank scores its share of the test windows; the sums are added up across the ranks
    shard = (trainer.global_rank, trainer.world_size) if trainer.world_size > 1 else None
    test_metrics = score_split(module, splits, "test", progress=cfg.progress and trainer.global_rank == 0, shard=shard)
    try:
        if trainer.global_rank != 0:
            return {}
        attempts = read_attempts(out)
        fit_times = [a.get("fit_s") for a in attempts]
        result = {
            "model": cfg.model, "dataset": cfg.dataset, "protocol": cfg.protocol, "horizon": cfg.horizon, "budget": cfg.budget,
            "seed": cfg.seed, "split": "test", "windows": int(len(splits.test)), "window": cfg.window,
            "align_window": cfg.align_window,
            "metrics": test_metrics,
            "parameters": sum(p.numel() for p in module.model.parameters()),
            "epochs": trainer.current_epoch, "global_steps": trainer.global_step,
            "schedule_steps": module.schedule_steps, "max_time": cfg.max_time,
            # a timed run fixes its length at the end of the warm-up: --max-steps repeats it exactly when that is >= 10
            "max_steps_repeats": None if max_time is None else module.warmup_steps >= 10,
            # all attempts' fit time; when an earlier attempt left no record, this attempt's alone (flagged)
            "train_time_s": round(sum(fit_times) if None not in fit_times else train_time, 1),
            "train_time_complete": None not in fit_times, "attempts": attempts, "resumed": resume_from is not None,
            "ranks": agreement.report,
            "environment": env, "config": config,
        }
        write_json(out / METRICS_JSON, result)
        merge_attempt_logs(out, out / "metrics.csv")
        plot_loss_curve(out / "metrics.csv", out / "loss_curve.png", title=f"{cfg.model} ({cfg.protocol}, {cfg.budget})")
        return result
    finally:
        _leave_process_group(trainer.world_size)
