"""Learning-rate schedule: linear warm-up, then cosine decay (per optimizer step)."""
from __future__ import annotations

import math


def warmup_cosine(step: int, warmup_steps: int, total_steps: int, base_lr: float, min_lr: float) -> float:
    """Multiplier of ``base_lr`` at ``step``: linear from ~0 to 1 over ``warmup_steps``, then a
    cosine from 1 down to ``min_lr / base_lr`` at ``total_steps`` (flat afterwards)."""
    if warmup_steps > 0 and step < warmup_steps:
        return (step + 1) / warmup_steps
    span = max(1, total_steps - warmup_steps)
    progress = min(1.0, (step - warmup_steps) / span)
    floor = min_lr / base_lr
    return floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))
