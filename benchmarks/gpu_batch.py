"""Spend a time-limited GPU lease on the issue-#6 grids: bench units in parallel until a deadline, then pack.

One GPU, a fixed number of minutes (a rented or lent machine). The script runs, in order:

1. ``--jacobian``: ``benchmarks/bench_jacobian.py --device cuda --warm`` (issue #4's timing), alone on the GPU.
2. ``--speed``: ``benchmarks/bench_speed_cost.py --device cuda`` for our models, alone on the GPU.
3. The training pool, until ``--deadline-s`` after the start:

   * ``--paper-models`` (e.g. T&S (b) and (e)) on the authors' schedule (budget ``paper``; ``--paper-seeds``,
     default 0, one unit a seed). When the 150 epochs cannot finish before the deadline, a probe times one
     training step on the GPU first and the schedule is shortened to the largest of ``EPOCH_MENU`` that fits
     (warm-up and cosine decay over the shorter run; the budget label says ``paper+eE``: never mistaken for the
     full budget). With ``--paper-full`` the schedule is never shortened: the units train the full 150 epochs
     over as many leases as it takes (see "A full-budget run over several leases" below). ``--paper-set
     KEY=VALUE`` (repeatable) overrides the models' settings (``hidden_size=64``), as bench's ``--set`` does;
     the units' folders carry the overrides' hash (``__m<hash>``);
   * ``--workers`` processes working through the ``cpu-15min`` units that are not done yet: Table 1
     (``models/results/table1-cpu``, horizon 12, seeds 0-2), the seed-0 units behind the shipped weights of
     the template entries (``models/results/templates-cpu``), then the long horizon
     (``models/results/horizon36-cpu``, horizon 36, seeds 0-1). The budget is a number of steps, so a unit
     trained on the GPU follows the same schedule as one trained on the CPU; its result records the machine.
     The forecasters (``tas_attn_*`` / ``tts_attn_*``) carry their embeddings in their defaults.

   * ``--bench ARGS`` (repeatable): any other ``stgnn-diag bench`` run, its arguments as one string with its
     ``--results`` folder among them (a probe's units on a longer schedule, say); it trains beside the others
     and its folder is packed as theirs are (checkpoints of the units it leaves unfinished).

   At the deadline every unit still training is interrupted (SIGINT: the unit finishes its step and
   checkpoints it, so ``stgnn-diag bench`` resumes it anywhere, on a CPU too).
4. Packs what the run wrote into ``--out``: ``results.tar.gz`` (unit folders; checkpoints only of
   unfinished units, plus ``last.ckpt`` of the paper-schedule units), ``weights.tar.gz`` (weights-only
   ``last.ckpt`` of the other units that finished), the logs, ``gpu_batch.json``.

Usage (on the GPU machine, from the repository root; ``$STGNN_DIAG_DATA`` points at the data)::

    python benchmarks/gpu_batch.py --out OUT --deadline-s 480 --jacobian --speed \\
        --paper-models tas_attn_none tas_attn_penalty --workers 4

then, on the machine that keeps the repository: ``tar xzf OUT/results.tar.gz`` (and ``tar xzf
OUT/weights.tar.gz``: the checkpoints land in the units' git-ignored ``run/checkpoints/``) and
``stgnn-diag bench --results models/results/table1-cpu --report-only --paper-rows``.
``--dry-run`` lists the queue (and, with ``--paper-models``, the paper-schedule units and their state) and exits.

A full-budget run over several leases
-------------------------------------
The 150 epochs take about 17-21 minutes of an H200 per unit, longer than one 15-minute lease. With
``--paper-full`` each lease trains the units until the deadline; the deadline interrupts them and
``results.tar.gz`` brings back their ``last.ckpt`` (model, optimizer, schedule, early-stopping and loop
state). Extract it here and commit the unit folder, checkpoint included (``git add -f``: checkpoints are
git-ignored; about 2 MB a unit with its optimizer state), so that the next lease, whenever it comes, finds
the checkpoint in the working tree and the same command resumes the units where they stopped. ``--dry-run
--paper-full --paper-models ...`` says how far each unit got. A unit finishes (test pass, ``result.json``)
in the lease that reaches epoch 150 or early stopping.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script from a copy that is not pip-installed (the GPU machine's)
    sys.path.insert(0, str(REPO))
VARIANTS = ["tas_attn_noresid", "tas_attn_none", "tas_attn_mask", "tas_attn_dropout", "tas_attn_penalty",
            "tts_attn_noresid", "tts_attn_none", "tts_attn_mask", "tts_attn_dropout", "tts_attn_penalty"]
TEMPLATES = [v.replace("_attn_", "_template_") for v in VARIANTS]
#: (results folder, horizon, seeds, models) of the cpu-15min experiments, in the order they are worked on.
EXPERIMENTS = [("models/results/table1-cpu", 12, (0, 1, 2), VARIANTS),
               ("models/results/templates-cpu", 12, (0,), TEMPLATES + ["paper_tas"]),
               ("models/results/horizon36-cpu", 36, (0, 1), VARIANTS)]
#: Budget overrides a model's cpu-15min units run with (they enter the unit's budget label). ``paper_tas`` (12
#: post-LN blocks) does not learn at the preset's lr 8e-3: validation MAE after its first epoch 10.1 at 8e-3, 8.3 at
#: 2e-3, 5.2 at 1e-3, 5.1 at 5e-4 (seed 0; models/results/templates-cpu/README.md).
MODEL_OVERRIDES = {"paper_tas": {"lr": 0.001}}
PAPER_RESULTS = "models/results/table1-paper"
EPOCH_MENU = (150, 100, 80, 60, 50, 40, 30, 25, 20, 15, 10, 5)
PAPER_STEPS_PER_EPOCH = 23974 // 128
PAPER_VAL_STEPS = -(-3425 // 128)


def _unit_dir(results: str, model: str, horizon: int, budget: str, seed: int, overrides=None,
              model_overrides=None) -> Path:
    """The folder ``stgnn-diag bench`` gives this unit (canonical protocol, window 12; ``overrides``: budget
    overrides, as ``--lr`` ... pass them; ``model_overrides``: as ``--set KEY=VALUE`` passes them)."""
    from stgnn_diag.bench.unit import Unit
    unit = Unit(model, "model", "dcrnn", horizon, 12, budget, seed, tuple(sorted((overrides or {}).items())),
                tuple(sorted((model_overrides or {}).items())))
    return REPO / results / unit.unit_id


def _cpu15(model: str):
    """``(budget overrides, bench flags)`` of ``model``'s cpu-15min units (:data:`MODEL_OVERRIDES`)."""
    from stgnn_diag.bench.unit import override_flags
    over = MODEL_OVERRIDES.get(model, {})
    return over, override_flags(over)


def set_folders(table1: str, templates: str, horizon36: str, paper: str) -> None:
    """Where the experiments' units go (paths relative to the repository root, as ``--results`` takes them)."""
    global EXPERIMENTS, PAPER_RESULTS
    EXPERIMENTS = [(table1, 12, (0, 1, 2), VARIANTS), (templates, 12, (0,), TEMPLATES + ["paper_tas"]),
                   (horizon36, 36, (0, 1), VARIANTS)]
    PAPER_RESULTS = paper


def queue_units():
    """The cpu-15min units without a ``result.json``: ``[(results, model, horizon, seed)]``, seed-major. Units kept
    only in an experiment's ``units.tar.gz`` are unpacked first, so they count as done."""
    from stgnn_diag.bench.archive import restore_units

    todo = []
    for results, horizon, seeds, models in EXPERIMENTS:
        restore_units(REPO / results)
        for seed in seeds:
            for model in models:
                if not (_unit_dir(results, model, horizon, "cpu-15min", seed, _cpu15(model)[0]) / "result.json").exists():
                    todo.append((results, model, horizon, seed))
    return todo


def bench_cmd(results: str, model: str, horizon: int, seed: int, budget: str, extra=(), accelerator="gpu"):
    if budget == "cpu-15min":
        extra = [*_cpu15(model)[1], *extra]
    return [sys.executable, "-m", "stgnn_diag.cli", "bench", "--models", model, "--seeds", str(seed),
            "--budgets", budget, "--protocols", "dcrnn", "--horizons", str(horizon), "--accelerator", accelerator,
            "--results", results, "--no-report", "--no-progress", *extra]


def bench_cmd_args(args: str, accelerator: str = "gpu"):
    """The command of a ``--bench`` run: ``stgnn-diag bench`` with ``args`` (shell-split) on ``accelerator``."""
    return [sys.executable, "-m", "stgnn_diag.cli", "bench", *shlex.split(args), "--accelerator", accelerator,
            "--no-report", "--no-progress"]


def paper_unit(model: str, seed: int = 0, overrides=None, model_overrides=None) -> Path:
    """The folder of ``model``'s paper-schedule unit of ``seed`` (horizon 12, canonical protocol; ``overrides``:
    budget overrides such as ``{"max_epochs": 20}``; ``model_overrides``: ``--paper-set``'s, such as
    ``{"hidden_size": 64}``)."""
    return _unit_dir(PAPER_RESULTS, model, 12, "paper", seed, overrides, model_overrides)


def paper_state(unit: Path) -> str:
    """``done``, ``new``, or how far an interrupted unit got (the step its ``last.ckpt`` resumes at)."""
    if (unit / "result.json").exists():
        return "done"
    ckpt = unit / "run" / "checkpoints" / "last.ckpt"
    if not ckpt.exists():
        return "new"
    from stgnn_diag.training.safe_load import load_file

    state = load_file(ckpt)  # weights_only=True: a committed checkpoint is a file anyone may be handed
    total = 150 * PAPER_STEPS_PER_EPOCH
    return (f"partial: resumes at step {state.get('global_step')} of {total} (epoch {state.get('epoch')} of 150; "
            f"early stopping may end it sooner)")


def probe_step_seconds(model_name: str, batch: int = 128, steps: int = 30, device: str = "cuda",
                       warmup: int = 10, model_overrides=None) -> float:
    """Seconds per training step (forward, masked-MAE-like loss, backward, clip, AdamW) on ``device``."""
    import torch

    import stgnn_diag
    from stgnn_diag.datasets import MetrLA

    data = MetrLA()
    ei, ew = data.edge_index.to(device), data.edge_weight.float().to(device)
    torch.manual_seed(0)
    model = stgnn_diag.create_model(model_name, n_nodes=data.n_nodes, horizon=12, window=12, exog_size=8,
                                  **(model_overrides or {})).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4)
    x = torch.randn(batch, 12, data.n_nodes, 1, device=device)
    u = torch.rand(batch, 12, data.n_nodes, 8, device=device)
    y = torch.randn(batch, 12, data.n_nodes, 1, device=device)
    sync = torch.cuda.synchronize if torch.device(device).type == "cuda" else (lambda: None)

    def step():
        loss = (model(x, ei, ew, u=u) - y).abs().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()

    for _ in range(warmup):
        step()
    sync()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    sync()
    return (time.perf_counter() - t0) / steps


def paper_epochs(step_s: float, seconds: float, slowdown: float) -> int:
    """The largest of ``EPOCH_MENU`` whose training (``slowdown`` x the probed step, validation included)
    fits in ``seconds``; 0 when none does."""
    epoch_s = (PAPER_STEPS_PER_EPOCH + PAPER_VAL_STEPS / 3) * step_s * slowdown
    return next((e for e in EPOCH_MENU if e * epoch_s <= seconds), 0)


class Pool:
    """Child processes, each leading its own process group (a signal reaches all of its processes)."""

    def __init__(self, logs: Path):
        self.logs, self.procs = logs, []

    def start(self, name: str, cmd) -> None:
        log = open(self.logs / f"{name}.log", "ab")
        log.write((" ".join(cmd) + "\n").encode())
        log.flush()
        env = {**os.environ, "OMP_NUM_THREADS": "2"}  # many processes on one machine: no CPU oversubscription
        p = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env)
        self.procs.append((name, p))

    def running(self, prefix="") -> int:
        """Processes still running whose name starts with ``prefix`` (a string or a tuple of them)."""
        return sum(1 for n, p in self.procs if p.poll() is None and n.startswith(prefix))

    def stop_all(self, grace_s: float) -> None:
        for _, p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGINT)
        end = time.time() + grace_s
        while time.time() < end and self.running():
            time.sleep(0.5)
        for _, p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()

    def report(self):
        """``[{"name", "returncode"}]``: 0 done, 130 interrupted at the deadline, 1 failed (see the logs)."""
        return [{"name": n, "returncode": p.returncode} for n, p in self.procs]


def _timed(cmd, timeout_s: float, log: Path) -> dict:
    t0 = time.time()
    # a script under benchmarks/ puts its own folder, not the repository, on sys.path: without this a copy of
    # the tree that is not pip-installed cannot import stgnn_diag (the first Jacobian phase of 2026-11-30 failed so)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    with open(log, "wb") as f:
        try:
            rc = subprocess.run(cmd, cwd=REPO, stdout=f, stderr=subprocess.STDOUT, timeout=timeout_s,
                                env=env).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    return {"cmd": " ".join(cmd[1:]), "returncode": rc, "seconds": round(time.time() - t0, 1)}


def bench_results(args: str) -> str:
    """The ``--results`` folder of a ``--bench`` argument string, parsed by ``stgnn-diag bench``'s own parser (a
    mistyped flag stops the lease before anything trains); required: it is what gets packed."""
    from stgnn_diag.cli import build_parser

    results = build_parser().parse_args(["bench", *shlex.split(args)]).results
    if results is None:
        raise SystemExit(f"--bench {args!r}: name its --results folder (what the run writes is packed from there)")
    return results


def pack(out: Path, since: float, paper_units, extra_folders=()) -> None:
    """``results.tar.gz``: files the run wrote under the results folders (the experiments', the paper units',
    ``extra_folders``); checkpoints only where a unit has no result yet, and ``last.ckpt`` of the paper-schedule
    units."""
    def keep(path: Path) -> bool:
        if path.stat().st_mtime < since:
            return False
        if "checkpoints" not in path.parts:
            return True
        unit = path.parents[2]
        return (not (unit / "result.json").exists() and path.name == "last.ckpt") or (
            path.name == "last.ckpt" and unit.name in paper_units)

    folders = list(dict.fromkeys([REPO / r for r, *_ in EXPERIMENTS] + [REPO / PAPER_RESULTS]
                                 + [REPO / f for f in extra_folders]))
    finished = []  # last.ckpt of the units that finished during the run (left out of results.tar.gz)
    with tarfile.open(out / "results.tar.gz", "w:gz") as tar:
        for folder in folders:
            for path in sorted(folder.rglob("*")) if folder.exists() else []:
                if path.is_file() and keep(path):
                    tar.add(path, arcname=str(path.relative_to(REPO)))
                elif path.is_file() and path.name == "last.ckpt" and path.stat().st_mtime >= since:
                    finished.append(path)
    pack_weights(out / "weights.tar.gz", finished)


#: What a weights-only checkpoint keeps of a Lightning checkpoint (``stgnn-diag sensitivity --checkpoint`` and
#: ``stgnn-diag evaluate`` read it); the optimizer and loop state are dropped: these units are finished.
WEIGHT_KEYS = ("state_dict", "hyper_parameters", "epoch", "global_step", "pytorch-lightning_version")


def pack_weights(dest: Path, checkpoints) -> None:
    """``dest`` (a ``.tar.gz``): weights-only copies of ``checkpoints``, at their paths in the repository.

    A finished unit's checkpoint is not needed to resume, but its weights are what a later look at the trained
    model needs (per-step errors, sensitivity); a unit of ``cpu-15min`` is about 0.2 MB this way.
    """
    import torch

    from stgnn_diag.training.safe_load import load_file

    with tempfile.TemporaryDirectory() as tmp, tarfile.open(dest, "w:gz") as tar:
        for i, path in enumerate(checkpoints):
            ckpt = load_file(path)  # weights_only=True, an explicit allow-list
            small = Path(tmp) / f"{i}.ckpt"
            torch.save({k: ckpt[k] for k in WEIGHT_KEYS if k in ckpt}, small)
            tar.add(small, arcname=str(path.relative_to(REPO)))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="folder for results.tar.gz, logs and gpu_batch.json")
    g = p.add_argument_group("results folders (relative to the repository root)")
    g.add_argument("--table1", default=EXPERIMENTS[0][0], help="Table 1's cpu-15min units (default %(default)s)")
    g.add_argument("--templates", default=EXPERIMENTS[1][0], help="the template entries' and paper_tas's seed-0 "
                   "units (default %(default)s)")
    g.add_argument("--horizon36", default=EXPERIMENTS[2][0], help="the horizon-36 units (default %(default)s)")
    g.add_argument("--paper-results", default=PAPER_RESULTS, help="the paper-schedule units (default %(default)s)")
    p.add_argument("--deadline-s", type=float, required=True, help="stop training this long after the start")
    p.add_argument("--workers", type=int, default=4, help="parallel cpu-15min units")
    p.add_argument("--paper-models", nargs="*", default=[], help="models on the authors' schedule")
    p.add_argument("--paper-seeds", nargs="+", type=int, default=[0], help="seeds of the --paper-models units "
                   "(default 0; issue #14's full-budget target is a mean of three: 0 1 2)")
    p.add_argument("--paper-set", action="append", metavar="KEY=VALUE", help="model override of the "
                   "--paper-models units (repeatable; bench's --set), e.g. hidden_size=64")
    p.add_argument("--paper-full", action="store_true", help="train --paper-models on the full 150 epochs, "
                   "over several leases if need be (interrupted at the deadline, resumed by the next run)")
    p.add_argument("--bench", action="append", default=[], metavar="ARGS", help="another `stgnn-diag bench` "
                   "run to train beside the others: its arguments as one string, --results among them "
                   "(repeatable; --accelerator, --no-report and --no-progress are added)")
    p.add_argument("--slowdown", type=float, default=3.0, help="assumed step-time factor of a paper unit in "
                   "the shared pool (Lightning, data, other processes on the GPU) over the lone probe; 3.0 was "
                   "measured with 4 workers on an H200 (111 ms vs 36.6 ms a step)")
    p.add_argument("--jacobian", action="store_true", help="run benchmarks/bench_jacobian.py --device cuda first")
    p.add_argument("--speed", action="store_true", help="run benchmarks/bench_speed_cost.py --device cuda first")
    p.add_argument("--probe-steps", type=int, default=30, help="timed steps of the paper-schedule probe")
    p.add_argument("--accelerator", default="gpu", help="Lightning accelerator of the units (cpu: a smoke test)")
    p.add_argument("--smoke", action="store_true", help="train a tiny unit on the accelerator first (one minute)")
    p.add_argument("--dry-run", action="store_true", help="print the queue and exit")
    args = p.parse_args(argv)
    from stgnn_diag._values import parse_key_values
    paper_set = parse_key_values(args.paper_set)
    set_folders(args.table1, args.templates, args.horizon36, args.paper_results)
    t_start = time.time()
    queue = queue_units()
    bench_folders = [bench_results(a) for a in args.bench]
    if args.dry_run:
        print(f"{len(queue)} cpu-15min units to run:")
        for u in queue:
            print("  ", *u)
        if args.paper_models:
            label = "paper" if args.paper_full else "paper+eE (E: what fits before the deadline)"
            print(f"paper-schedule units ({label}):")
            for m in args.paper_models:
                for seed in args.paper_seeds:
                    state = paper_state(paper_unit(m, seed, None, paper_set)) if args.paper_full else "new"
                    print(f"   {m} s{seed}: {state}")
        for a in args.bench:
            print("bench run:", " ".join(bench_cmd_args(a, args.accelerator)))
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    logs = Path(tempfile.mkdtemp(prefix="gpu_batch_logs_"))  # packed into one file: OUT keeps few files
    summary = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t_start)), "phases": {}}
    py = sys.executable
    if args.jacobian:
        summary["phases"]["jacobian"] = _timed(
            [py, "benchmarks/bench_jacobian.py", "--device", "cuda", "--budget-mb", "1024", "--warm"], 180,
            out / "jacobian.txt")
    if args.speed:
        summary["phases"]["speed"] = _timed(
            [py, "benchmarks/bench_speed_cost.py", "--device", "cuda", "--batch", "128", "--steps", "20",
             "--warmup", "3", "--threads", "8", "--models", "tas_attn_penalty", "tts_attn_penalty", "paper_tas",
             "--hidden-size", "32", "--json", str(out / "speed_cost_gpu.json")], 120, out / "speed_cost.txt")
    if args.smoke:  # the training path on this GPU and software stack, in a minute, before anything long
        summary["phases"]["smoke"] = _timed(
            [py, "-m", "stgnn_diag.cli", "bench", "--models", "tas_attn_penalty", "--budgets", "cpu-small",
             "--max-epochs", "1", "--max-windows", "600", "--accelerator", args.accelerator, "--no-progress",
             "--results", str(logs / "smoke")], 120, logs / "smoke.log")
    pool = Pool(logs)
    acc = args.accelerator
    for i in range(min(args.workers, len(queue))):  # the workers start loading while the probe runs
        pool.start(f"q{i:02d}_" + queue[i][1] + f"_h{queue[i][2]}_s{queue[i][3]}",
                   bench_cmd(*queue[i], "cpu-15min", accelerator=acc))
    queue = queue[args.workers:]
    paper_units = set()
    if args.paper_models and args.paper_full:  # resumed from last.ckpt where a unit has one
        epochs = 150
        summary["paper_full"] = {f"{m} s{seed}": paper_state(paper_unit(m, seed, None, paper_set))
                                 for m in args.paper_models for seed in args.paper_seeds}
    elif args.paper_models:
        step_s = probe_step_seconds(args.paper_models[0], steps=args.probe_steps, warmup=min(10, args.probe_steps),
                                    device="cuda" if acc == "gpu" else "cpu", model_overrides=paper_set)
        left = args.deadline_s - (time.time() - t_start) - 75  # start-up, the test pass, the interrupt grace
        epochs = paper_epochs(step_s, left, args.slowdown)
        summary["paper_probe"] = {"model": args.paper_models[0], "step_s": round(step_s, 5),
                                  "seconds_left": round(left), "slowdown": args.slowdown, "epochs": epochs}
    if args.paper_models:
        from stgnn_diag.bench.unit import override_flags
        over = {} if epochs == 150 else {"max_epochs": epochs}
        extra = override_flags(over) + [x for kv in args.paper_set or [] for x in ("--set", kv)]
        for m in args.paper_models if epochs else []:
            for seed in args.paper_seeds:
                paper_units.add(paper_unit(m, seed, over, paper_set).name)
                pool.start(f"paper_{m}_s{seed}", bench_cmd(PAPER_RESULTS, m, 12, seed, "paper", extra, accelerator=acc))
    for i, a in enumerate(args.bench):
        pool.start(f"bench{i:02d}", bench_cmd_args(a, acc))
    n_paper = len(paper_units) + len(args.bench)
    while time.time() - t_start < args.deadline_s:
        if pool.running() - pool.running(("paper_", "bench")) < args.workers and queue and \
                args.deadline_s - (time.time() - t_start) > 60:
            results, model, horizon, seed = queue.pop(0)
            pool.start(f"q{len(pool.procs) - n_paper:02d}_{model}_h{horizon}_s{seed}",
                       bench_cmd(results, model, horizon, seed, "cpu-15min", accelerator=acc))
        elif not pool.running():
            break
        time.sleep(1.0)
    pool.stop_all(grace_s=20)
    summary["units"] = pool.report()
    summary["not_started"] = [list(u) for u in queue]
    pack(out, t_start, paper_units, bench_folders)
    with tarfile.open(out / "logs.tar.gz", "w:gz") as tar:
        tar.add(logs, arcname="logs")
    for name in ("jacobian.txt", "speed_cost.txt"):  # the figures, in the command's output too
        if (out / name).exists():
            print(f"== {name}\n" + (out / name).read_text()[-4000:])
    if (logs / "smoke.log").exists():
        print("== smoke.log (end)\n" + (logs / "smoke.log").read_text()[-1500:])
    summary["seconds"] = round(time.time() - t_start, 1)
    (out / "gpu_batch.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps({**summary, "not_started": len(queue)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
