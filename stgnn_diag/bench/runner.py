"""Run a benchmark grid unit by unit; every finished unit leaves ``<results>/<unit id>/result.json``.

Rules that make a grid resumable and honest:

* ``result.json`` is written atomically, and only when the unit is complete. A unit that has one is
  skipped (after checking that it was run with the same settings; a mismatch is an error, never a
  silent reuse).
* A trained unit trains in ``<results>/<unit id>/run/`` (``stgnn_diag.training.train``'s run folder:
  checkpoints every epoch and every 25 steps). A unit interrupted mid-training is resumed from
  ``run/checkpoints/last.ckpt`` (``TrainConfig(resume=True)``); a unit whose training finished but whose
  result was not written is completed from ``run/metrics.json`` without training again. Ctrl-C lets the
  in-flight unit finish its training step and save it (:class:`~stgnn_diag.training.interrupt.
  CheckpointOnInterrupt`); a killed grid loses at most the steps since that unit's last checkpoint.
* Baselines are evaluated (``stgnn_diag.training.evaluate``) once per protocol / horizon / budget.
* A unit that fails writes ``error.json`` next to where its result would be, and the grid goes on
  (``fail_fast`` stops it). With ``isolate=True`` each unit runs in its own process
  (``python -m stgnn_diag.bench.worker``), so a crash or an out-of-memory kill loses only that unit.
* Ctrl-C stops the grid after the in-flight unit has shut down; its checkpoints stay and the next run
  resumes it.

What is measured (stored in ``result.json``):

* ``train_time_s``: Lightning ``fit`` time from ``metrics.json`` (for a resumed unit only the part after
  resuming; ``resumed`` says so); ``wall_time_s``: the whole unit in this attempt (data, fit, test).
* ``peak_memory``: ``rss_mb`` is the process's peak resident set size (``getrusage(RUSAGE_SELF).ru_maxrss``).
  In an isolated unit it is the peak of the unit's own process (including the Python / torch imports and
  the data set), ``rss_exact`` true. In-process it is the process's high-water mark after the unit:
  exact for this unit only when the unit raised it (``rss_exact``), otherwise an upper bound set by an
  earlier unit. On a GPU, ``cuda_max_allocated_mb`` is ``torch.cuda.max_memory_allocated`` during the
  unit (exact; tensors only, not the CUDA context).
* ``parameters``, ``metrics`` (test split), ``windows``, ``environment`` (``train``'s, with the git
  commit), ``git_dirty``, ``machine``, the budget preset, its resolved values, the budget label and
  whether it is a CPU / full budget.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import shutil
import resource
import signal
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

from ..datasets.registry import recorded_dataset
from ..training.budgets import budget_overrides
from ..training.run_dir import RunBusyError, changed_fields, model_kwargs_changes
from .archive import ARCHIVE, restore_units
from .calibration import gemm_gflops
from .grid import BUDGET_OVERRIDE_KEYS, GridError, GridSpec, Unit, is_cpu_budget, result_settings
from .worker import BUSY_EXIT

__all__ = ["ERROR_JSON", "Outcome", "RESULT_JSON", "RUN_DIR", "SCHEMA", "GridRun", "load_result", "machine_info",
           "run_grid", "run_unit", "unit_state"]

RESULT_JSON = "result.json"
ERROR_JSON = "error.json"
RUN_DIR = "run"
SCHEMA = 1

#: Written into a results folder: checkpoints are large and not results; a run's lock file only says
#: that a process is training it now.
RESULTS_GITIGNORE = ("# written by stgnn-diag bench: the unit folders are packed into units.tar.gz by the report (bench\n"
                     "# unpacks it again to skip finished units); README.md, results.csv, plots/ are the outputs\n"
                     "/*/\n!/plots/\n")


@dataclass
class Outcome:
    """What happened to one unit in a grid run.

    Attributes:
        unit: the unit.
        status: ``done`` (ran now), ``resumed`` (ran now from a checkpoint or a finished run folder),
            ``skipped`` (result already there), ``reused`` (copied from another results folder, see
            :func:`find_reusable`), ``failed``, ``busy`` (another live process trains it: left to that
            process, nothing written into its folder), ``interrupted`` (Ctrl-C while it ran),
            ``pending`` (not reached: the grid stopped before it), or ``planned`` (dry run).
        state: the unit's state before the run (see :func:`unit_state`).
        result: the result dict (``done`` / ``resumed`` / ``skipped``).
        error: the error message (``failed``, ``busy``).
    """

    unit: Unit
    status: str
    state: str = ""
    result: Optional[Dict[str, Any]] = None
    error: Optional[str] = None


@dataclass
class GridRun:
    """The outcome of :func:`run_grid`: one :class:`Outcome` per unit, in grid order."""

    outcomes: List[Outcome] = field(default_factory=list)
    interrupted: bool = False

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.outcomes)

    @property
    def failed(self) -> List[Outcome]:
        return [o for o in self.outcomes if o.status == "failed"]

    @property
    def busy(self) -> List[Outcome]:
        return [o for o in self.outcomes if o.status == "busy"]

    def summary(self) -> str:
        parts = [f"{self.count(s)} {s}" for s in ("done", "resumed", "reused", "skipped", "failed", "busy",
                                                   "interrupted", "pending", "planned") if self.count(s)]
        return ", ".join(parts) or "no units"


# -- helpers -------------------------------------------------------------------------------------
def _rss_mb() -> float:
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


def _with_attempts(machine: Dict[str, Any], attempts: Optional[List[Dict[str, Any]]]) -> Dict[str, Any]:
    """``machine`` (where the unit finished), its summary extended when the training attempts ran on several
    devices (a run trained on a GPU and completed on a CPU says so in every table)."""
    used = [a.get("device", "unrecorded") for a in attempts or []]
    if len(set(used)) <= 1:
        return machine
    return {**machine, "summary": f"{machine['summary']}; trained in attempts on {' then '.join(used)}"}


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def _write_json(path: Path, data: Dict[str, Any]) -> None:
    from ..training.run_dir import write_json

    write_json(path, data)


def _roundtrip(d: Dict[str, Any]) -> Dict[str, Any]:
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


def _unit_dir(results_dir: Path, unit: Unit) -> Path:
    return Path(results_dir) / unit.unit_id


def unit_state(results_dir: Union[str, Path], unit: Unit) -> str:
    """The state of ``unit`` in ``results_dir``.

    Returns:
        ``"done"`` (``result.json``), ``"trained"`` (training finished: ``run/metrics.json`` but no
        result), ``"partial"`` (``run/checkpoints/last.ckpt``, training not finished: resume),
        ``"stale"`` (a run folder without a checkpoint: start over there) or ``"new"``.
    """
    from ..training.run_dir import METRICS_JSON, last_checkpoint

    udir = _unit_dir(Path(results_dir), unit)
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


def unit_budget(unit: Unit):
    """The :class:`~stgnn_diag.training.Budget` ``unit`` trains under today: its preset with the grid's overrides."""
    from ..training.budgets import get_budget

    return get_budget(unit.budget).with_overrides(**budget_overrides(dict(unit.overrides)))


def budget_changes(unit: Unit, stored: Dict[str, Any]) -> Dict[str, tuple]:
    """``{field: (stored, now)}`` where the budget a result (or run config) was trained under differs from the
    unit's preset as it is now (a preset's learning rate was changed, say); ``{}`` when they agree, for a
    baseline (it trains nothing) and for results that did not record their budget."""
    then = stored.get("budget_resolved")
    if unit.kind != "model" or not then:
        return {}
    return changed_fields(_roundtrip(then), _roundtrip(unit_budget(unit).to_dict()))


#: Model arguments that come from the data and the unit (not from the zoo entry): taken from the stored record.
DATA_MODEL_ARGUMENTS = ("n_nodes", "horizon", "window", "exog_size")


def model_changes(unit: Unit, stored: Dict[str, Any]) -> Dict[str, tuple]:
    """``{argument: (stored, now)}`` where the model a result (or run config) was trained with differs from
    what the unit's zoo entry builds today (its defaults changed: another number of layers, say); ``{}`` when
    they agree, for a baseline, an integration entry (its overrides are in the unit's settings) and for
    results that did not record their model's configuration."""
    then = (stored.get("model_config") or {}).get("model_kwargs")
    if unit.kind != "model" or not then or ":" in unit.model:
        return {}
    import torch

    from ..zoo import create_model
    from ..zoo.registry import constructor_defaults

    kwargs = {**dict(unit_budget(unit).model_overrides), **dict(unit.model_overrides),
              **{k: then[k] for k in DATA_MODEL_ARGUMENTS if k in then}}
    with torch.device("meta"):  # the configuration and defaults of the model, without allocating it
        model = create_model(unit.model, **kwargs)
    return model_kwargs_changes(_roundtrip(then), _roundtrip(model.config["model_kwargs"]),
                                _roundtrip(constructor_defaults(model)))


def _changed(changes: Dict[str, tuple]) -> str:
    return ", ".join(f"{k}: {a!r} then, {b!r} now" for k, (a, b) in changes.items())


def _check_stored_settings(unit: Unit, stored: Dict[str, Any], where: Path) -> None:
    want = _roundtrip(unit.settings())
    have = result_settings(stored)
    if have != want:
        diff = {k: (have or {}).get(k) for k in want if (have or {}).get(k) != want[k]}
        raise GridError(f"{where} was made with other settings than unit {unit.unit_id} "
                        f"(stored {diff}, grid {{{', '.join(f'{k!r}: {want[k]!r}' for k in diff)}}}). "
                        f"Use another results folder, or delete {where.parent} to rerun it.")
    changed = budget_changes(unit, stored)
    if changed:
        raise GridError(f"{where} was trained under budget {unit.budget!r} as the preset was then; it has changed "
                        f"since ({_changed(changed)}), so this result is not a run of unit {unit.unit_id} today. "
                        f"Use another results folder, or delete {where.parent} to rerun it.")
    changed = model_changes(unit, stored)
    if changed:
        raise GridError(f"{where} was trained with another {unit.model!r} than the zoo builds today "
                        f"({_changed(changed)}), so this result is not a run of unit {unit.unit_id} today. Use another results folder, or "
                        f"delete {where.parent} to rerun it.")


def _check_run_config(unit: Unit, run: Path) -> None:
    """A run folder made for other settings is never resumed into this unit."""
    from ..training.run_dir import CONFIG_JSON

    path = run / CONFIG_JSON
    if not path.is_file():
        return
    cfg = json.loads(path.read_text())
    cfg["dataset"] = recorded_dataset(cfg)
    ov = dict(unit.overrides)
    want = {"model": unit.model, "dataset": unit.dataset, "protocol": unit.protocol, "horizon": unit.horizon,
            "window": unit.window, "budget": unit.budget, "seed": unit.seed,
            "model_overrides": dict(unit.model_overrides) or None, **{k: ov.get(k) for k in BUDGET_OVERRIDE_KEYS}}
    want = _roundtrip(want)
    diff = {k: (cfg.get(k), v) for k, v in want.items() if cfg.get(k) != v}
    diff.update({f"budget.{k}": v for k, v in budget_changes(unit, cfg).items()})  # the preset changed since
    diff.update({f"model.{k}": v for k, v in model_changes(unit, cfg).items()})  # the zoo entry changed since
    if diff:
        raise GridError(f"The run folder {run} was made with other settings than unit {unit.unit_id} "
                        f"(stored vs grid: {diff}). Delete it to rerun the unit.")


# -- one unit --------------------------------------------------------------------------------------
_SPLITS_CACHE: Dict[tuple, Any] = {}


def _baseline_splits(unit: Unit, data_root, progress: bool):
    from ..datasets import get_dataset, make_splits

    ov = dict(unit.overrides)
    key = (unit.dataset, str(data_root), unit.protocol, unit.window, unit.horizon, ov.get("max_windows"),
           ov.get("align_window"))
    if key not in _SPLITS_CACHE:
        data_key = ("data", unit.dataset, str(data_root))
        if data_key not in _SPLITS_CACHE:
            _SPLITS_CACHE.clear()
            _SPLITS_CACHE[data_key] = get_dataset(unit.dataset, data_root, progress=progress)
        _SPLITS_CACHE[key] = make_splits(_SPLITS_CACHE[data_key], unit.protocol, window=unit.window,
                                         horizon=unit.horizon, max_windows=ov.get("max_windows"),
                                         align_window=ov.get("align_window"))
    return _SPLITS_CACHE[key]


def _train_config(unit: Unit, out: Path, *, data_root, accelerator, devices, progress, resume, overwrite):
    from ..training import TrainConfig

    ov = dict(unit.overrides)
    return TrainConfig(model=unit.model, out=str(out), dataset=unit.dataset, protocol=unit.protocol,
                       horizon=unit.horizon, window=unit.window, align_window=ov.get("align_window"),
                       budget=unit.budget, seed=unit.seed,
                       data_root=str(data_root) if data_root else None,
                       model_overrides=dict(unit.model_overrides) or None, max_windows=ov.get("max_windows"),
                       max_time=ov.get("max_time"), **budget_overrides(ov), accelerator=accelerator, devices=devices,
                       progress=progress, resume=resume,
                       overwrite=overwrite)


def _train(cfg):  # indirection: tests replace it
    from ..training import train

    return train(cfg)


def run_unit(unit: Unit, results_dir: Union[str, Path], *, data_root=None, accelerator: str = "cpu",
             devices: Any = 1, progress: bool = True, isolated: bool = False) -> Dict[str, Any]:
    """Run one unit in this process and write its ``result.json``; returns the result.

    Skips nothing: callers check :func:`unit_state` first (a ``done`` unit is rerun by nobody).
    ``isolated`` only says how the peak memory is to be read (this process runs nothing else).

    Raises:
        GridError: the unit's folder holds a run made with other settings.
        Any error of training / evaluation (the caller records it).
    """
    import torch

    from ..training.run_dir import METRICS_JSON
    from ..training.train import environment

    results_dir = Path(results_dir)
    udir = _unit_dir(results_dir, unit)
    udir.mkdir(parents=True, exist_ok=True)
    state = unit_state(results_dir, unit)
    if state == "done":
        raise GridError(f"{udir / RESULT_JSON} already exists; {unit.unit_id} is done.")
    cuda = torch.cuda.is_available() and accelerator in ("gpu", "cuda", "auto")
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    rss_before = _rss_mb()
    t0 = time.perf_counter()
    speed = None
    ov = dict(unit.overrides)
    budget = unit_budget(unit)
    if unit.kind == "baseline":
        from ..training import evaluate

        splits = _baseline_splits(unit, data_root, progress)
        res = evaluate(unit.model, data_root=data_root, protocol=unit.protocol, horizon=unit.horizon,
                       window=unit.window, max_windows=ov.get("max_windows"), progress=progress, splits=splits)
        run_part = {"metrics": res["metrics"], "windows": res["windows"], "parameters": 0, "train_time_s": None,
                    "epochs": None, "global_steps": None, "resumed": False, "environment": environment(),
                    "run_dir": None}
    else:
        run = udir / RUN_DIR
        if state == "trained":
            _check_run_config(unit, run)
            metrics = json.loads((run / METRICS_JSON).read_text())
            resumed = True
        else:
            if state in ("partial", "stale"):
                _check_run_config(unit, run)
            cfg = _train_config(unit, run, data_root=data_root, accelerator=accelerator, devices=devices,
                                progress=progress, resume=state == "partial", overwrite=state == "stale")
            speed = gemm_gflops("cuda" if cuda else "cpu")  # the compute this unit trains with
            metrics = _train(cfg)
            speed = max(speed, gemm_gflops("cuda" if cuda else "cpu"))  # the better of before and after
            if not metrics:  # a non-zero DDP rank: rank 0 writes the result
                return {}
            resumed = state == "partial"
        budget_resolved = metrics.get("config", {}).get("budget_resolved")
        model_config = metrics.get("config", {}).get("model_config")
        run_part = {"metrics": metrics["metrics"], "windows": metrics["windows"], "parameters": metrics["parameters"],
                    "train_time_s": metrics["train_time_s"], "epochs": metrics.get("epochs"),
                    "global_steps": metrics.get("global_steps"), "schedule_steps": metrics.get("schedule_steps"),
                    "max_steps_repeats": metrics.get("max_steps_repeats"),
                    "resumed": bool(resumed or metrics.get("resumed")),
                    "train_time_complete": metrics.get("train_time_complete"), "attempts": metrics.get("attempts"),
                    "environment": metrics.get("environment") or environment(), "run_dir": RUN_DIR}
        if budget_resolved:
            run_part["budget_resolved"] = budget_resolved
        if model_config:
            run_part["model_config"] = model_config
    wall = time.perf_counter() - t0
    rss_after = _rss_mb()
    peak = {"rss_mb": rss_after, "rss_exact": bool(isolated or rss_after > rss_before),
            "rss_scope": ("peak of the unit's own process (imports and data included)" if isolated else
                          "process high-water mark after the unit (in-process run; an upper bound unless "
                          "rss_exact)"),
            "cuda_max_allocated_mb": (round(torch.cuda.max_memory_allocated() / 2 ** 20, 1) if cuda else None)}
    if state == "trained":  # nothing ran now: this attempt's memory says nothing about the training
        peak = {"rss_mb": None, "rss_exact": False, "rss_scope": "unknown (completed from a finished run folder)",
                "cuda_max_allocated_mb": None}
    env = run_part.pop("environment")
    budget_resolved = run_part.pop("budget_resolved", None) or budget.to_dict()
    result = {
        "schema": SCHEMA, "unit_id": unit.unit_id, "settings": _roundtrip(unit.settings()),
        "model": unit.model, "kind": unit.kind, "dataset": unit.dataset, "protocol": unit.protocol, "horizon": unit.horizon,
        "window": unit.window, "budget": unit.budget, "budget_label": unit.budget_label,
        "cpu_budget": is_cpu_budget(unit.budget), "full_budget": not is_cpu_budget(unit.budget) and not ov,
        "overrides": ov, "model_overrides": dict(unit.model_overrides), "seed": unit.seed,
        "budget_resolved": budget_resolved,
        **run_part,
        "wall_time_s": round(wall, 1), "peak_memory": peak, "environment": env,
        "git_commit": env.get("git_commit"), "git_dirty": env.get("git_dirty"),
        "machine": _with_attempts({**machine_info(accelerator), "gemm_gflops": speed}, run_part.get("attempts")),
        "accelerator": accelerator, "devices": devices,
        "isolated": isolated, "finished_at": _now(),
    }
    from .. import __version__

    result["stgnn_diag_version"] = __version__
    _write_json(udir / RESULT_JSON, _roundtrip(result))
    (udir / ERROR_JSON).unlink(missing_ok=True)
    return result


# -- reuse ---------------------------------------------------------------------------------------
def find_reusable(unit: Unit, sources: Sequence[Union[str, Path]]) -> Optional[Path]:
    """The first ``<source>/<unit id>/`` holding a finished result made with exactly ``unit``'s settings.

    A unit is defined by its settings (model, overrides, protocol, horizon, window, budget, seed) and by what
    its budget preset resolves to (a result trained before the preset changed is not reused), so such a
    result is a run of this very unit: experiments that share units (the ecosystem comparison's best variant and
    baselines are Table 1 units) need not train them twice. On the CPU a rerun would repeat it exactly (training
    is deterministic there); a unit trained on a GPU keeps its machine in the copy, and the table says so.
    """
    want = _roundtrip(unit.settings())
    for src in sources:
        path = _unit_dir(Path(src), unit) / RESULT_JSON
        if path.is_file():
            stored = load_result(path)
            if result_settings(stored) == want and not budget_changes(unit, stored) and not model_changes(unit, stored):
                return path.parent
    return None


def reuse_unit(unit: Unit, source: Path, results_dir: Path) -> Dict[str, Any]:
    """Copy the finished unit folder ``source`` (without checkpoints) into ``results_dir``; the copy's
    ``result.json`` says where it came from (``reused_from``). Returns the result."""
    udir = _unit_dir(results_dir, unit)
    if udir.exists():
        shutil.rmtree(udir)  # a "new" unit's folder holds nothing worth keeping (no result, no checkpoint)
    shutil.copytree(source, udir, ignore=shutil.ignore_patterns("checkpoints", ERROR_JSON))
    result = load_result(udir / RESULT_JSON)
    result["reused_from"] = os.path.relpath(source, results_dir)
    _write_json(udir / RESULT_JSON, result)
    return result


# -- the grid --------------------------------------------------------------------------------------
def _record_error(udir: Path, unit: Unit, message: str, detail: str = "") -> None:
    _write_json(udir / ERROR_JSON, {"unit_id": unit.unit_id, "error": message, "detail": detail[-8000:],
                                    "at": _now()})


def _restore_sigint() -> None:
    # Lightning ignores SIGINT after a Ctrl-C during fit; give it back to Python
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _run_isolated(unit: Unit, results_dir: Path, *, data_root, accelerator, devices, progress) -> int:
    cmd = [sys.executable, "-m", "stgnn_diag.bench.worker", "--unit", json.dumps(unit.to_dict()),
           "--results", str(results_dir), "--accelerator", str(accelerator), "--devices", str(devices)]
    if data_root:
        cmd += ["--data-root", str(data_root)]
    if not progress:
        cmd.append("--no-progress")
    return _run_worker(cmd)


class _Terminated(Exception):
    """The bench received SIGTERM while its worker ran."""


def _run_worker(cmd: Sequence[str], grace_s: float = 120.0) -> int:
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


def run_grid(grid: Union[GridSpec, Iterable[Unit]], results_dir: Union[str, Path], *, data_root=None,
             isolate: bool = False, accelerator: str = "cpu", devices: Any = 1, progress: bool = True,
             fail_fast: bool = False, dry_run: bool = False, reuse: Sequence[Union[str, Path]] = (),
             log: Optional[Callable[[str], None]] = None) -> GridRun:
    """Run every unit of ``grid`` that has no result yet, in order.

    Args:
        grid: a :class:`GridSpec` (validated and expanded here) or a list of units.
        results_dir: one folder per unit (``<unit id>/result.json``).
        data_root: folder holding ``metr_la/`` (default: ``$STGNN_DIAG_DATA``, ...).
        isolate: run each unit in its own process (``python -m stgnn_diag.bench.worker``).
        accelerator, devices: passed to Lightning; one device per unit (``devices`` must be 1).
        progress: a tqdm bar over units plus each run's own bars.
        fail_fast: stop at the first failed unit (default: record ``error.json`` and go on).
        dry_run: only report each unit's state (``reusable`` for a new unit that ``reuse`` holds).
        reuse: other results folders: a new unit finished there with the same settings is copied, not run
            (:func:`find_reusable`).
        log: where status lines go (default: ``tqdm.write``).

    Returns:
        :class:`GridRun`; ``interrupted`` is true after Ctrl-C (the in-flight unit is marked
        ``interrupted`` and resumes next time; the rest are ``pending``).

    Raises:
        GridError: invalid grid, or a stored result / run folder made with other settings.
    """
    from tqdm.auto import tqdm

    if devices != 1:
        # Lightning's DDP launcher re-executes the command line on every rank: the whole grid would rerun
        raise GridError(f"A bench unit trains on one device (devices={devices!r} asked); use `stgnn-diag train "
                        f"--devices N --strategy ddp` for multi-device runs.")
    units = grid.units() if isinstance(grid, GridSpec) else list(grid)
    results_dir = Path(results_dir)
    log = log or tqdm.write
    out = GridRun()
    restored = restore_units(results_dir)  # finished units kept only in units.tar.gz are skipped, not rerun
    if restored:
        log(f"unpacked {len(restored)} finished unit(s) from {results_dir / ARCHIVE}")
    # check every stored result before running anything: a mismatch fails now, not hours later
    states = {}
    for u in units:
        states[u.unit_id] = unit_state(results_dir, u)
        if states[u.unit_id] == "done":
            _check_stored_settings(u, load_result(_unit_dir(results_dir, u) / RESULT_JSON),
                                   _unit_dir(results_dir, u) / RESULT_JSON)
        elif states[u.unit_id] in ("trained", "partial", "stale") and u.kind == "model":
            _check_run_config(u, _unit_dir(results_dir, u) / RUN_DIR)
    for src in reuse:  # a source's finished units may be kept in its archive only
        restore_units(src)
    sources = {u.unit_id: find_reusable(u, reuse) for u in units if states[u.unit_id] == "new"} if reuse else {}
    if dry_run:
        for u in units:
            state = "reusable" if sources.get(u.unit_id) else states[u.unit_id]
            out.outcomes.append(Outcome(u, "planned", state))
        return out
    results_dir.mkdir(parents=True, exist_ok=True)
    ignore = results_dir / ".gitignore"
    current = ignore.read_text() if ignore.exists() else ""
    if current != RESULTS_GITIGNORE and (not current or current.startswith("# written by stgnn-diag bench")):
        ignore.write_text(RESULTS_GITIGNORE)  # new, or ours from an older version; a user's own file is kept
    bar = tqdm(units, desc="bench units", unit="unit", disable=not progress, dynamic_ncols=True)
    stop = False
    for i, u in enumerate(bar):
        if stop:
            out.outcomes.append(Outcome(u, "pending", states[u.unit_id]))
            continue
        state = states[u.unit_id]
        udir = _unit_dir(results_dir, u)
        if state == "done":
            out.outcomes.append(Outcome(u, "skipped", state, result=load_result(udir / RESULT_JSON)))
            continue
        if sources.get(u.unit_id):
            log(f"[{i + 1}/{len(units)}] {u.unit_id}: reuse {sources[u.unit_id]}")
            out.outcomes.append(Outcome(u, "reused", state, result=reuse_unit(u, sources[u.unit_id], results_dir)))
            continue
        action = {"new": "run", "stale": "start over", "partial": "resume from checkpoint",
                  "trained": "complete from finished run"}[state]
        log(f"[{i + 1}/{len(units)}] {u.unit_id}: {action}" + (" (isolated process)" if isolate else ""))
        status = "resumed" if state in ("partial", "trained") else "done"
        try:
            if isolate:
                rc = _run_isolated(u, results_dir, data_root=data_root, accelerator=accelerator, devices=devices,
                                   progress=progress)
                if rc == 130:  # the worker alone was interrupted (its checkpoint is kept): stop as for Ctrl-C
                    raise KeyboardInterrupt
                if rc == BUSY_EXIT:
                    raise RunBusyError(f"{udir / RUN_DIR} is in use by another training process")
                if rc == 0 and (udir / RESULT_JSON).is_file():
                    out.outcomes.append(Outcome(u, status, state, result=load_result(udir / RESULT_JSON)))
                else:
                    why = (f"killed by signal {-rc}" + (" (SIGKILL: out of memory?)" if rc == -signal.SIGKILL else "")
                           if rc < 0 else f"exit status {rc}")
                    if rc == 0:
                        why = "the worker exited without writing result.json"
                    if not (udir / ERROR_JSON).is_file() or rc < 0:
                        _record_error(udir, u, f"isolated unit failed: {why}")
                    msg = json.loads((udir / ERROR_JSON).read_text()).get("error", why)
                    out.outcomes.append(Outcome(u, "failed", state, error=msg))
                    log(f"    FAILED: {msg}")
                    if fail_fast:
                        stop = True
            else:
                res = run_unit(u, results_dir, data_root=data_root, accelerator=accelerator, devices=devices,
                               progress=progress)
                out.outcomes.append(Outcome(u, status, state, result=res))
        except (KeyboardInterrupt, SystemExit) as e:
            # train() re-raises Lightning's sys.exit(1) after Ctrl-C as KeyboardInterrupt; other code may exit
            if isinstance(e, SystemExit) and not isinstance(e.code, int):
                raise
            _restore_sigint()
            out.outcomes.append(Outcome(u, "interrupted", state))
            out.interrupted = True
            stop = True
            log(f"interrupted: {u.unit_id} keeps its checkpoints and resumes on the next run")
        except GridError:
            raise
        except RunBusyError as e:  # another process trains this unit: its folder is left as it is
            out.outcomes.append(Outcome(u, "busy", state, error=str(e)))
            log(f"    BUSY (left to the other process, nothing recorded): {e}")
        except Exception as e:  # noqa: BLE001  a failed unit must not take the grid down
            msg = f"{type(e).__name__}: {e}"
            _record_error(udir, u, msg, traceback.format_exc())
            out.outcomes.append(Outcome(u, "failed", state, error=msg))
            log(f"    FAILED: {msg}  (details in {udir / ERROR_JSON})")
            if fail_fast:
                stop = True
    bar.close()
    return out
