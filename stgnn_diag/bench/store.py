"""Where a bench unit's result lives: ``<results>/<unit id>/result.json`` (written atomically, only when the unit
is complete), ``error.json`` for a failed unit, ``run/`` for its training run, and the machine facts stored with
every result."""
from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import resource
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from .unit import Unit

__all__ = ["ERROR_JSON", "RESULT_JSON", "RESULTS_GITIGNORE", "RUN_DIR", "SCHEMA", "load_result", "machine_info",
           "record_error", "unit_dir", "unit_state", "write_gitignore"]

RESULT_JSON = "result.json"
ERROR_JSON = "error.json"
RUN_DIR = "run"
SCHEMA = 1

#: Written into a results folder: checkpoints are large and not results; a run's lock file only says
#: that a process is training it now.
RESULTS_GITIGNORE = ("# written by stgnn-diag bench: the unit folders are packed into units.tar.gz by the report (bench\n"
                     "# unpacks it again to skip finished units); README.md, results.csv, plots/ are the outputs\n"
                     "/*/\n!/plots/\n")


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MiB (Linux: KiB units; macOS: bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 ** 2 if sys.platform == "darwin" else 1024), 1)


def machine_info(accelerator: str = "cpu") -> Dict[str, Any]:
    """Machine facts stored with every result, with a one-line ``summary`` for table headers."""
    import torch

    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        available = os.cpu_count()
    gpus = ([torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
            if torch.cuda.is_available() else [])
    uses_gpu = accelerator in ("gpu", "cuda") or (accelerator == "auto" and bool(gpus))
    summary = f"{platform.machine()}, {available} CPU cores, torch threads {torch.get_num_threads()}"
    summary += f", GPU {gpus[0]}" + (f" x{len(gpus)}" if len(gpus) > 1 else "") if uses_gpu and gpus else ", CPU only"
    return {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(), "cpus_available": available, "torch_threads": torch.get_num_threads(),
            "gpus": gpus, "accelerator": accelerator, "uses_gpu": uses_gpu, "summary": summary}


def with_attempts(machine: Dict[str, Any], attempts: Optional[List[Dict[str, Any]]]) -> Dict[str, Any]:
    """``machine`` (where the unit finished), its summary extended when the training attempts ran on several
    devices (a run trained on a GPU and completed on a CPU says so in every table)."""
    used = [a.get("device", "unrecorded") for a in attempts or []]
    if len(set(used)) <= 1:
        return machine
    return {**machine, "summary": f"{machine['summary']}; trained in attempts on {' then '.join(used)}"}


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def write_result_json(path: Path, data: Dict[str, Any]) -> None:
    from ..training.run_dir import write_json

    write_json(path, data)


def roundtrip(d: Dict[str, Any]) -> Dict[str, Any]:
    return json.loads(json.dumps(d, sort_keys=True, default=str))


def load_result(path: Union[str, Path]) -> Dict[str, Any]:
    """Read one ``result.json``; ``ValueError`` naming the file when it is not a bench result."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path} is not valid JSON ({e}); delete it to rerun the unit.") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or "metrics" not in data:
        raise ValueError(f"{path} is not a stgnn-diag bench result (schema {SCHEMA}).")
    return data


def unit_dir(results_dir: Path, unit: Unit) -> Path:
    return Path(results_dir) / unit.unit_id


def unit_state(results_dir: Union[str, Path], unit: Unit) -> str:
    """The state of ``unit`` in ``results_dir``.

    Returns:
        ``"done"`` (``result.json``), ``"trained"`` (training finished: ``run/metrics.json`` but no
        result), ``"partial"`` (``run/checkpoints/last.ckpt``, training not finished: resume),
        ``"stale"`` (a run folder without a checkpoint: start over there) or ``"new"``.
    """
    from ..training.run_dir import METRICS_JSON, last_checkpoint

    udir = unit_dir(Path(results_dir), unit)
    if (udir / RESULT_JSON).is_file():
        return "done"
    run = udir / RUN_DIR
    if (run / METRICS_JSON).is_file():
        return "trained"
    if last_checkpoint(run) is not None:
        return "partial"
    if run.exists() and any(run.iterdir()):
        return "stale"
    return "new"


def record_error(udir: Path, unit: Unit, message: str, detail: str = "") -> None:
    write_result_json(udir / ERROR_JSON, {"unit_id": unit.unit_id, "error": message, "detail": detail[-8000:],
                                    "at": now()})


def write_gitignore(results_dir: Path) -> None:
    """Write :data:`RESULTS_GITIGNORE` into ``results_dir`` (new, or ours from an older version; a user's own file
    is kept)."""
    ignore = Path(results_dir) / ".gitignore"
    current = ignore.read_text() if ignore.exists() else ""
    if current != RESULTS_GITIGNORE and (not current or current.startswith("# written by stgnn-diag bench")):
        ignore.write_text(RESULTS_GITIGNORE)
