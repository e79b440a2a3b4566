"""Named training budgets: what a run may spend, so CPU runs are practical and honest."""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Dict, Optional


@dataclass(frozen=True)
class Budget:
    """Training budget and schedule.

    Attributes:
        max_epochs: epochs (an "epoch" is ``limit_train_batches`` batches when that is set).
        batch_size: windows per optimizer step (the global batch: under DDP each of W processes takes 1 / W of it).
        limit_train_batches: batches per epoch (None: the whole training split).
        limit_val_batches: validation batches per epoch (None: all).
        lr, weight_decay: AdamW.
        warmup_epochs: linear warm-up, then cosine decay to ``min_lr`` over the remaining epochs.
        grad_clip: gradient-norm clipping.
        patience: early-stopping patience in epochs on validation MAE (None: off).
        model_overrides: zoo overrides applied by this budget (e.g. a smaller hidden size).
    """

    max_epochs: int
    batch_size: int
    limit_train_batches: Optional[int] = None
    limit_val_batches: Optional[int] = None
    lr: float = 2e-3
    min_lr: float = 1e-6
    weight_decay: float = 1e-4
    warmup_epochs: float = 1.0
    grad_clip: float = 5.0
    patience: Optional[int] = 20
    model_overrides: tuple = ()

    def __post_init__(self) -> None:
        for name in ("max_epochs", "batch_size", "limit_train_batches", "limit_val_batches", "patience"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v <= 0):
                raise ValueError(f"{name} must be a positive integer, got {v!r}.")
        for name in ("lr", "min_lr", "grad_clip"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not v > 0 or v != v or v == float("inf"):
                raise ValueError(f"{name} must be a positive finite number, got {v!r}.")
        if self.weight_decay < 0 or self.warmup_epochs < 0:
            raise ValueError(f"weight_decay and warmup_epochs must be >= 0, got {self.weight_decay!r}, "
                             f"{self.warmup_epochs!r}.")

    def with_overrides(self, **kw) -> "Budget":
        """A copy with the given fields replaced (``None`` values are ignored); invalid values raise."""
        return replace(self, **{k: v for k, v in kw.items() if v is not None})

    def to_dict(self) -> Dict:
        d = asdict(self)
        d["model_overrides"] = dict(self.model_overrides)
        return d


BUDGETS: Dict[str, Budget] = {
    # The README's first run: 3 x 400 batches of 16 (1,200 steps, 19,200 windows) at lr 8e-3, the whole pipeline
    # (data, training, test-set evaluation, baselines) in a few minutes on 2 CPU cores.
    "cpu-small": Budget(max_epochs=3, batch_size=16, limit_train_batches=400, limit_val_batches=20,
                        lr=8e-3, warmup_epochs=0.5, patience=None,
                        model_overrides=(("hidden_size", 32),)),
    # Table 1's budget: 4 x 275 batches of 32 (35,200 windows, 1.5 passes over the training split), about a
    # quarter of an hour of training on 2 CPU cores at hidden 32; counted in steps, so a busy machine never
    # changes a result. lr 8e-3 is the best of 3e-3 / 5e-3 / 8e-3 for the forecasters in 1,100 steps
    # (models/results/probes.md).
    "cpu-15min": Budget(max_epochs=4, batch_size=32, limit_train_batches=275, limit_val_batches=20,
                        lr=8e-3, warmup_epochs=0.15, patience=None,
                        model_overrides=(("hidden_size", 32),)),
    # The diagonal-sink authors' schedule (PAPER.md): 150 epochs, batch 128, AdamW 2e-4,
    # 5 warm-up epochs then cosine to 1e-6, clip 5, patience 20. For a GPU.
    "paper": Budget(max_epochs=150, batch_size=128, lr=2e-4, min_lr=1e-6, weight_decay=1e-2,
                    warmup_epochs=5, grad_clip=5.0, patience=20),
}


def get_budget(name: str) -> Budget:
    """The preset ``name``; ``ValueError`` listing the presets for an unknown one."""
    if name not in BUDGETS:
        raise ValueError(f"Unknown budget {name!r}; choose one of {sorted(BUDGETS)}.")
    return BUDGETS[name]


#: The budget knobs a run may override, declared once: field -> (type, short form in a bench budget label).
#: The command-line flags (``--max-epochs`` ...), ``TrainConfig``'s fields, the grid's ``overrides`` keys and
#: the budget labels (``cpu-small+e1-b8``) are all derived from it.
OVERRIDABLE = {"max_epochs": (int, "e"), "batch_size": (int, "b"), "limit_train_batches": (int, "tb"),
               "limit_val_batches": (int, "vb"), "lr": (float, "lr"), "weight_decay": (float, "wd"),
               "patience": (int, "p")}


def budget_overrides(source) -> Dict:
    """``{knob: value}`` for every :data:`OVERRIDABLE` knob of ``source`` (an object with those attributes,
    such as parsed arguments or a ``TrainConfig``, or a mapping); absent knobs are ``None``."""
    get = source.get if isinstance(source, dict) else (lambda k: getattr(source, k, None))
    return {k: get(k) for k in OVERRIDABLE}


def add_budget_arguments(parser) -> None:
    """Add one ``--<knob>`` flag per :data:`OVERRIDABLE` knob (None: the preset's value) to an argparse
    parser or group."""
    for field, (typ, _) in OVERRIDABLE.items():
        parser.add_argument("--" + field.replace("_", "-"), type=typ, help=f"override the budget's {field}")
