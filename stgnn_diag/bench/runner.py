"""Run a benchmark grid unit by unit; every finished unit leaves ``<results>/<unit id>/result.json``.

Rules that make a grid resumable and honest:

* ``result.json`` is written atomically, and only when the unit is complete. A unit that has one is
  skipped (after checking that it was run with the same settings; a mismatch is an error, never a
  silent reuse).
* A trained unit trains in ``<results>/<unit id>/run/`` (:func:`stgnn_diag.training.train`'s run folder:
  checkpoints every epoch and every 25 steps). A unit interrupted mid-training is resumed from
  ``run/checkpoints/last.ckpt`` (``TrainConfig(resume=True)``); a unit whose training finished but whose
  result was not written is completed from ``run/metrics.json`` without training again. Ctrl-C lets the
  in-flight unit finish its training step and save it (:class:`~stgnn_diag.training.interrupt.
  CheckpointOnInterrupt`); a killed grid loses at most the steps since that unit's last checkpoint.
* Baselines are evaluated (:func:`stgnn_diag.training.evaluate`) once per protocol / horizon / budget.
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

import json
import signal
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

from ..training.run_dir import RunBusyError
from .archive import ARCHIVE, restore_units
from .grid import GridSpec
from .unit import GridError, Unit
from .isolation import BUSY_EXIT, restore_sigint, run_isolated
from .staleness import check_run_config, check_stored_settings, find_reusable, reuse_unit
from .store import ERROR_JSON, RESULT_JSON, RUN_DIR, load_result, record_error, unit_dir, unit_state, write_gitignore
from .unit_run import run_unit

__all__ = ["GridRun", "Outcome", "run_grid"]


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
            check_stored_settings(u, load_result(unit_dir(results_dir, u) / RESULT_JSON),
                                   unit_dir(results_dir, u) / RESULT_JSON)
        elif states[u.unit_id] in ("trained", "partial", "stale") and u.kind == "model":
            check_run_config(u, unit_dir(results_dir, u) / RUN_DIR)
    for src in reuse:  # a source's finished units may be kept in its archive only
        restore_units(src)
    sources = {u.unit_id: find_reusable(u, reuse) for u in units if states[u.unit_id] == "new"} if reuse else {}
    if dry_run:
        for u in units:
            state = "reusable" if sources.get(u.unit_id) else states[u.unit_id]
            out.outcomes.append(Outcome(u, "planned", state))
        return out
    results_dir.mkdir(parents=True, exist_ok=True)
    write_gitignore(results_dir)
    bar = tqdm(units, desc="bench units", unit="unit", disable=not progress, dynamic_ncols=True)
    stop = False
    for i, u in enumerate(bar):
        if stop:
            out.outcomes.append(Outcome(u, "pending", states[u.unit_id]))
            continue
        state = states[u.unit_id]
        udir = unit_dir(results_dir, u)
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
                rc = run_isolated(u, results_dir, data_root=data_root, accelerator=accelerator, devices=devices,
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
                        record_error(udir, u, f"isolated unit failed: {why}")
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
            restore_sigint()
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
            record_error(udir, u, msg, traceback.format_exc())
            out.outcomes.append(Outcome(u, "failed", state, error=msg))
            log(f"    FAILED: {msg}  (details in {udir / ERROR_JSON})")
            if fail_fast:
                stop = True
    bar.close()
    return out
