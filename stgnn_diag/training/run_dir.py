"""A training run's folder: what it holds, and the rules that keep finished work from being lost."""
from __future__ import annotations

import json
import os
import shutil
import socket
import time
from pathlib import Path
from typing import Any, Dict, Iterable, Optional

from .._io import write_json

CHECKPOINTS = "checkpoints"
LAST = "last.ckpt"
METRICS_JSON = "metrics.json"
CONFIG_JSON = "config.json"
LOCK = ".lock"
#: What a run writes into its folder (and ``overwrite`` removes; anything else there is left alone).
RUN_OUTPUTS = (CHECKPOINTS, "logs", METRICS_JSON, CONFIG_JSON, "metrics.csv", "loss_curve.png")


class RunDirError(RuntimeError):
    """The run folder is in a state the requested action would damage (or cannot resume from)."""


class RunBusyError(RunDirError):
    """The run folder's lock is held by another live training process: nothing is wrong with the run."""


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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


class RunLock:
    """One training process per run folder: ``out_dir/.lock`` holds the owner's pid and host.

    Taken before the folder is checked (so ``--overwrite`` never deletes a live run) and released when
    training ends, however it ends. A lock whose process no longer runs on this host (``kill -9``, a crash)
    is stale and taken over; a lock from another host is respected (its process cannot be checked).
    """

    def __init__(self, out_dir: Path):
        self.path = Path(out_dir) / LOCK
        self.held = False

    def _owner(self) -> Dict[str, Any]:
        try:
            return json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}

    def acquire(self) -> "RunLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        me = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%d %H:%M:%S")}
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                owner = self._owner()
                pid, host = owner.get("pid"), owner.get("host")
                if isinstance(pid, int) and (host != me["host"] or _alive(pid)):
                    raise RunBusyError(f"{self.path.parent} is in use by another training process (pid {pid} on "
                                      f"{host}, since {owner.get('since')}): wait for it to end or stop it, or "
                                      f"choose another --out.") from None
                self.path.unlink(missing_ok=True)  # stale: its process is gone
                continue
            with os.fdopen(fd, "w") as f:
                json.dump(me, f)
            self.held = True
            return self
        raise RunDirError(f"Could not take the lock {self.path}; remove it if no run uses the folder.")

    def release(self) -> None:
        if self.held and self._owner().get("pid") == os.getpid():
            self.path.unlink(missing_ok=True)
        self.held = False

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


#: ``config.json`` fields that may differ when a run is resumed: where and how it runs, not what it is.
RESUMABLE_CHANGES = ("out", "data_root", "accelerator", "devices", "strategy", "num_nodes",
                     "checkpoint_every_n_steps", "progress", "resume", "overwrite")


def changed_fields(then: Dict[str, Any], now: Dict[str, Any], ignore: Iterable[str] = ()) -> Dict[str, tuple]:
    """``{key: (then, now)}`` for every key (sorted, ``ignore`` left out) whose value differs between two records."""
    keys = (set(then) | set(now)) - set(ignore)
    return {k: (then.get(k), now.get(k)) for k in sorted(keys) if then.get(k) != now.get(k)}


def model_kwargs_changes(then: Dict[str, Any], now: Dict[str, Any], defaults: Dict[str, Any]) -> Dict[str, tuple]:
    """:func:`changed_fields` of two recorded model configurations, except an argument that ``then`` lacks and
    ``now`` holds at its constructor default (``defaults``): the library gives a new model option the default
    that builds the model as it was before, so a run recorded before the option existed was built with it."""
    added = {k: v for k, v in now.items() if k not in then and k in defaults and defaults[k] == v}
    return changed_fields({**added, **then}, now)


def check_same_run(out_dir: Path, config: Dict[str, Any], ignore: Iterable[str] = RESUMABLE_CHANGES,
                   absent_means: Optional[Dict[str, Any]] = None) -> None:
    """Raise :class:`RunDirError` unless ``config`` is the run recorded in ``out_dir/config.json``
    (model, its arguments, data set, protocol, budget, seed ...): a resume must continue the same run.
    ``absent_means``: the value a key had in runs recorded before it existed (``{"dataset": "metr_la"}``)."""
    path = Path(out_dir) / CONFIG_JSON
    if not path.is_file():
        raise RunDirError(f"{out_dir} has no {CONFIG_JSON}: it cannot be checked that --resume continues the same "
                          f"run. Start over with --overwrite.")
    saved = {**(absent_means or {}), **json.loads(path.read_text())}
    new = json.loads(json.dumps(config, default=str))  # the same normalisation as the saved file
    diff = changed_fields(saved, new, ignore)
    if diff:
        said = "; ".join(f"{k}: the run has {a!r}, asked {b!r}" for k, (a, b) in diff.items())
        raise RunDirError(f"--resume asks for another run than the one in {out_dir} ({said}). Resume with the "
                          f"run's own settings, or start a new run in another --out.")


def check_same_model(out_dir: Path, model_config: Dict[str, Any], defaults: Dict[str, Any]) -> None:
    """Raise :class:`RunDirError` unless ``model_config`` (``model.config`` of the model a resume builds) is
    the one recorded in ``out_dir/config.json``: a zoo entry whose defaults changed since the run started
    builds another model under the same name (an option added since, at its constructor default in
    ``defaults``, is no change: :func:`model_kwargs_changes`). Runs recorded before ``config.json`` held it are
    not checked."""
    saved = json.loads((Path(out_dir) / CONFIG_JSON).read_text()).get("model_config")
    if saved is None:
        return
    then, now = saved.get("model_kwargs", {}), json.loads(json.dumps(model_config, default=str))["model_kwargs"]
    diff = model_kwargs_changes(then, now, json.loads(json.dumps(defaults, default=str)))
    if diff:
        said = "; ".join(f"{k}: the run has {a!r}, now {b!r}" for k, (a, b) in diff.items())
        raise RunDirError(f"--resume would build another {model_config['name']!r} than the run in {out_dir} ({said}): "
                          f"the zoo entry changed since the run started. Pass the run's values as model "
                          f"overrides (--set KEY=VALUE) to resume it, or start a new run in another --out.")
