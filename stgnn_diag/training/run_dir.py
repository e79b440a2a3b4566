"""A training run's folder: what it holds, and the rules that keep finished work from being lost."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, Optional

CHECKPOINTS = "checkpoints"
LAST = "last.ckpt"
METRICS_JSON = "metrics.json"
CONFIG_JSON = "config.json"
#: What a run writes into its folder (and ``overwrite`` removes; anything else there is left alone).
RUN_OUTPUTS = (CHECKPOINTS, "logs", METRICS_JSON, CONFIG_JSON, "metrics.csv", "loss_curve.png")


class RunDirError(RuntimeError):
    """The run folder is in a state the requested action would damage (or cannot resume from)."""


def last_checkpoint(out_dir: Path) -> Optional[Path]:
    """``out_dir/checkpoints/last.ckpt`` if it exists."""
    p = Path(out_dir) / CHECKPOINTS / LAST
    return p if p.is_file() else None


def prepare_run_dir(out_dir: Path, resume: bool, overwrite: bool) -> Optional[Path]:
    """Check ``out_dir`` for a new run or a resume; returns the checkpoint to resume from (or None).

    A folder that already holds a run is never reused silently: pass ``resume`` to continue it or
    ``overwrite`` to start over (the old run's outputs, :data:`RUN_OUTPUTS`, are removed first, so no
    checkpoint or log of the old run can be mistaken for the new one's).
    """
    out_dir = Path(out_dir)
    ckpt = last_checkpoint(out_dir)
    has_run = ckpt is not None or (out_dir / METRICS_JSON).exists() or (out_dir / CONFIG_JSON).exists()
    if resume:
        if ckpt is None:
            raise RunDirError(f"Nothing to resume in {out_dir}: no {CHECKPOINTS}/{LAST}. Start a new run "
                              f"without --resume.")
        return ckpt
    if has_run and not overwrite:
        raise RunDirError(f"{out_dir} already holds a run. Use --resume to continue it, --overwrite to "
                          f"start over there, or choose another --out.")
    if has_run:
        for name in RUN_OUTPUTS:
            p = out_dir / name
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists():
                p.unlink()
    out_dir.mkdir(parents=True, exist_ok=True)
    return None


def write_json(path: Path, data: Dict[str, Any]) -> None:
    """Write JSON atomically (temp file + rename), so an interrupted write leaves the old file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=2, sort_keys=True, default=str)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
