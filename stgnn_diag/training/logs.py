"""Per-attempt CSV logs of a run, merged into one ``metrics.csv``.

Lightning's ``CSVLogger`` rewrites its file from what it logged in the current process, so a
resumed run would lose the epochs logged before the interruption. Each attempt (the first run
and every ``--resume``) therefore logs into ``logs/attempt<k>/metrics.csv``, and the run's
``metrics.csv`` is their merge: for an epoch logged by several attempts (an interrupted epoch
that was redone), the rows of the latest attempt win.
"""
from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from typing import Any, Dict, List

from .._io import write_json

LOGS = "logs"
#: Per attempt: where and how long it trained (``logs/attempt<k>/attempt.json``).
ATTEMPT_JSON = "attempt.json"


def next_attempt(out_dir: Path, resume: bool) -> str:
    """Version name for this attempt's CSV logger; a fresh (non-resumed) run clears old attempts."""
    logs = Path(out_dir) / LOGS
    if not resume and logs.exists():
        shutil.rmtree(logs)
    done = sorted(logs.glob("attempt*")) if logs.exists() else []
    return f"attempt{len(done)}"


def _attempt_index(path: Path) -> int:
    return int(path.name[len("attempt"):])


def write_attempt(out_dir: Path, attempt: str, info: Dict[str, Any]) -> None:
    """Record one attempt (device, environment, fit seconds, last step) in ``logs/<attempt>/attempt.json``."""
    write_json(Path(out_dir) / LOGS / attempt / ATTEMPT_JSON, {"attempt": attempt, **info})


def read_attempts(out_dir: Path) -> List[Dict[str, Any]]:
    """Every attempt of the run, in order; one without a record reads ``{"attempt": name, "recorded": False}``."""
    folders = sorted((Path(out_dir) / LOGS).glob("attempt*"), key=_attempt_index)
    return [json.loads((f / ATTEMPT_JSON).read_text()) if (f / ATTEMPT_JSON).exists()
            else {"attempt": f.name, "recorded": False} for f in folders]


def merge_attempt_logs(out_dir: Path, target: Path) -> Path:
    """Write the merged per-epoch log of every attempt under ``out_dir/logs`` into ``target``."""
    files: List[Path] = sorted((Path(out_dir) / LOGS).glob("attempt*/metrics.csv"),
                               key=lambda p: _attempt_index(p.parent))
    rows_by_attempt = []
    fields: List[str] = []
    for f in files:
        with open(f) as fh:
            reader = csv.DictReader(fh)
            fields += [c for c in reader.fieldnames or [] if c not in fields]
            rows_by_attempt.append([r for r in reader if r.get("epoch")])
    merged, seen = [], set()
    for rows in reversed(rows_by_attempt):  # latest attempt first
        epochs = {r["epoch"] for r in rows}
        merged = [r for r in rows if r["epoch"] not in seen] + merged
        seen |= epochs
    merged.sort(key=lambda r: (int(float(r["epoch"])), int(float(r.get("step") or 0))))
    with open(target, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(merged)
    return Path(target)
