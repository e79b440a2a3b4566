"""A unit in its own process (``python -m stgnn_diag.bench.worker``), and the signals around it: a Ctrl-C reaches
the worker, a SIGTERM sent to the bench is passed on to it, and nobody is left training after the bench has gone."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import List, Sequence

from .unit import Unit

__all__ = ["BUSY_EXIT", "restore_sigint", "run_isolated", "run_worker"]

#: Exit status of a worker whose unit is being trained by another process (``EX_TEMPFAIL``: try again later).
BUSY_EXIT = 75


def restore_sigint() -> None:
    # Lightning ignores SIGINT after a Ctrl-C during fit; give it back to Python
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)


def run_isolated(unit: Unit, results_dir: Path, *, data_root, accelerator, devices, progress) -> int:
    cmd = [sys.executable, "-m", "stgnn_diag.bench.worker", "--unit", json.dumps(unit.to_dict()),
           "--results", str(results_dir), "--accelerator", str(accelerator), "--devices", str(devices)]
    if data_root:
        cmd += ["--data-root", str(data_root)]
    if not progress:
        cmd.append("--no-progress")
    return run_worker(cmd)


class _Terminated(Exception):
    """The bench received SIGTERM while its worker ran."""


def run_worker(cmd: Sequence[str], grace_s: float = 120.0) -> int:
    """Run an isolated unit's process ``cmd`` and wait for it; returns its exit code.

    A Ctrl-C reaches the worker too (same process group): it shuts down cleanly and is waited for. A
    SIGTERM sent to the bench alone (``kill``, a scheduler's time limit) is passed on to the worker, so
    that no worker goes on training, and holding its run folder's lock, after the bench has gone. The
    handler is in place before the worker starts: a SIGTERM that arrives while it starts is held until
    ``Popen`` has returned the process to stop.
    """
    started: List[subprocess.Popen] = []
    held: List[int] = []

    def stop(signum, frame):  # only leaves proc.wait(): waiting inside the handler would deadlock on its lock
        if not started:
            held.append(signum)
            return
        raise _Terminated(signum)

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, stop) if main else None
    try:
        started.append(subprocess.Popen(cmd))
        if held:
            raise _Terminated(held[0])
        return started[0].wait()
    except KeyboardInterrupt:
        if started:
            _reap(started[0], grace_s)
        raise
    except _Terminated as e:
        started[0].terminate()
        _reap(started[0], grace_s)
        raise SystemExit(128 + e.args[0])
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)


def _reap(proc: subprocess.Popen, grace_s: float) -> None:
    """Give a stopping worker ``grace_s`` seconds, then kill it."""
    try:
        proc.wait(timeout=grace_s)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        proc.kill()
        proc.wait()
