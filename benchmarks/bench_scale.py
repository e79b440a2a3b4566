"""Cost against the size of the graph and the length of the window: one training step and one inference batch.

For each model, node count ``N`` and window ``T`` (each measured in its own fresh process): seconds of one
training step (forward, masked MAE, backward, an AdamW step), seconds of one inference batch (``eval`` +
``no_grad``), and the measuring process's peak resident memory with the part the model adds (parameters,
gradients, optimizer state and activations). The graphs are synthetic with METR-LA's out-degree distribution:
``N`` sensors placed uniformly in a square, each linked to as many of its nearest neighbours as a METR-LA sensor
drawn at random has out-edges, weighted by a Gaussian kernel of the distance, self-loops included (the DCRNN
recipe); inputs are random, with a calendar ``u``.

Then, per model and window, the fitted growth exponent of time and memory in ``N`` (least squares on log-log,
over the node counts between ``--fit-from`` and ``--fit-to``) and, per model and node count, in ``T``. A
configuration whose memory or step time, extrapolated from the smaller node counts of the same model, would
exceed ``--max-mem-gb`` / ``--max-step-s`` is skipped and marked so (it would not fit this machine), instead of
taking the machine down.

Usage::

    python benchmarks/bench_scale.py                                   # defaults below, CPU
    python benchmarks/bench_scale.py --nodes 207 716 2352 --windows 12 --models tas_attn_none tts_attn_none
    python benchmarks/bench_scale.py --device cuda --batch 32          # a GPU
    python benchmarks/bench_scale.py --out scale/                      # scale.csv, scale.json, scale.png
    MALLOC_MMAP_MAX_=0 python benchmarks/bench_scale.py --out scale/   # large tensors from the heap (see below)
    python benchmarks/bench_scale.py --models tas_attn_none 'tas_attn_none[adaptive=lowrank]'   # with overrides

On large graphs the figures depend on glibc's allocator: every tensor above its 32 MiB mmap cap is mapped and
faulted in afresh, unless ``MALLOC_MMAP_MAX_=0`` serves it from the heap (faster, more resident memory; see
:mod:`stgnn_diag.training.malloc`). The setting is recorded with the machine.

With ``--out``, the tables are rewritten after every configuration, and a second run into the same folder on
the same machine keeps the configurations already measured there (``--fresh`` measures this run's again):
an interrupted run loses one configuration at most, and new models or windows add to the tables.

The default models are one per architecture (the zoo's variants (a)-(e) of an arrangement share its cost):
``tas_attn_none``, ``tts_attn_none``, ``tas_template_none``, ``tts_template_none``, ``paper_tas`` and tsl's
STID, Graph WaveNet, AGCRN and DCRNN; ``--all-entries`` adds every other native entry.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import multiprocessing as mp
import os
import platform
import resource
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

DEFAULT_MODELS = ["tas_attn_none", "tts_attn_none", "tas_template_none", "tts_template_none", "paper_tas",
                  "tsl:STIDModel", "tsl:GraphWaveNetModel", "tsl:AGCRNModel", "tsl:DCRNNModel"]
DEFAULT_NODES = [207, 716, 2352, 8600, 20000]
DEFAULT_WINDOWS = [12, 96, 288]
#: Out-degrees (self-loop excluded) of METR-LA's sensor graph when the data is not at hand: its mean is 7.3.
FALLBACK_DEGREES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 16]


def _rss_now_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (2 ** 20 if sys.platform == "darwin" else 2 ** 10)


def metr_la_out_degrees(data_root: Optional[str]) -> List[int]:
    """Out-degrees (without the self-loop) of METR-LA's sensor graph, or :data:`FALLBACK_DEGREES`."""
    try:
        from stgnn_diag.datasets import MetrLA

        adj = MetrLA(data_root, download=False, progress=False).adj
    except (OSError, ValueError):
        return list(FALLBACK_DEGREES)
    import numpy as np

    off = adj.copy()
    np.fill_diagonal(off, 0)
    return [int(d) for d in (off != 0).sum(1)]


def synthetic_graph(n: int, degrees: Sequence[int], seed: int = 0):
    """``(edge_index [2, E], edge_weight [E])`` of ``n`` nodes with out-degrees drawn from ``degrees``: node ``v``
    sends to its ``k_v`` nearest neighbours (kernel weights ``exp(-(d / sigma)^2)``, ``sigma`` the distances'
    std) and to itself (weight 1)."""
    import numpy as np
    import torch
    from scipy.spatial import cKDTree

    rng = np.random.default_rng(seed)
    pos = rng.random((n, 2))
    k = np.minimum(rng.choice(np.asarray(degrees), size=n), n - 1)
    dist, idx = cKDTree(pos).query(pos, k=int(k.max()) + 1)  # column 0 is the node itself
    keep = np.arange(dist.shape[1])[None, :] <= k[:, None]
    src = np.repeat(np.arange(n)[:, None], dist.shape[1], 1)[keep]
    dst, d = idx[keep], dist[keep]
    sigma = d[d > 0].std() if (d > 0).any() else 1.0
    w = np.exp(-(d / sigma) ** 2)
    return torch.as_tensor(np.stack([src, dst]), dtype=torch.long), torch.as_tensor(w, dtype=torch.float32)


def parse_model_spec(spec: str):
    """``"tas_attn_none[adaptive=lowrank,k=2]"`` -> ``("tas_attn_none", {"adaptive": "lowrank", "k": 2})``: a zoo
    name with model overrides (values parsed as ``stgnn-diag bench --set`` parses them)."""
    from stgnn_diag._values import split_bracketed

    return split_bracketed(spec, "model")


def measure(name: str, n: int, window: int, batch: int, steps: int, device: str, threads: int,
            degrees: Sequence[int]) -> Dict:
    """One model at ``n`` nodes and window ``window`` (runs in a fresh process); the figures as a dict."""
    import torch

    torch.set_num_threads(threads)
    from stgnn_diag import create_model
    from stgnn_diag.metrics import masked_mae
    from stgnn_diag.training.malloc import keep_freed_memory

    keep_freed_memory()
    dev = torch.device(device)
    ei, ew = (t.to(dev) for t in synthetic_graph(n, degrees))
    g = torch.Generator().manual_seed(0)
    x = torch.randn(batch, window, n, 1, generator=g).to(dev)
    y = (50 + 10 * torch.randn(batch, 12, n, 1, generator=g)).to(dev)
    tod = (torch.arange(window) % 288).float() / 288
    u = torch.zeros(batch, window, 8)
    u[..., 0], u[..., 1] = tod, 1.0  # a Monday
    u = u.to(dev)
    rss_before = _rss_now_mb()
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    torch.manual_seed(0)
    entry, overrides = parse_model_spec(name)
    model = create_model(entry, **{"n_nodes": n, "window": window, "horizon": 12, "exog_size": 8, **overrides}).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    def timed(fn) -> float:
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        return time.perf_counter() - t0

    def train_step():
        opt.zero_grad(set_to_none=True)
        masked_mae(model(x, ei, ew, u=u) * 10 + 50, y).backward()
        opt.step()

    model.train()
    timed(train_step)  # warm-up
    train_s = min(timed(train_step) for _ in range(steps))
    model.eval()
    with torch.no_grad():
        timed(lambda: model(x, ei, ew, u=u))
        infer_s = min(timed(lambda: model(x, ei, ew, u=u)) for _ in range(steps))
    peak = _peak_rss_mb()
    return {"model": name, "nodes": n, "window": window, "batch": batch, "edges": int(ei.size(1)),
            "parameters": sum(p.numel() for p in model.parameters()), "train_step_s": train_s,
            "infer_batch_s": infer_s, "peak_rss_mb": peak, "model_delta_mb": peak - rss_before,
            "cuda_max_allocated_mb": torch.cuda.max_memory_allocated() / 2 ** 20 if dev.type == "cuda" else None,
            "status": "ok"}


def exponent(xs: Sequence[float], ys: Sequence[float]) -> Optional[float]:
    """Slope of ``log y`` against ``log x`` (least squares), or None for fewer than two points."""
    pts = [(math.log(a), math.log(b)) for a, b in zip(xs, ys) if a > 0 and b and b > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx if sxx else None


def extrapolate(rows: List[Dict], key: str, at: int, axis: str = "nodes") -> Optional[float]:
    """``key`` at ``axis = at`` (``"nodes"`` or ``"window"``) from the two largest measured values of ``axis`` in
    ``rows`` (a power law through them, at least linear)."""
    pts = sorted((r[axis], r[key]) for r in rows if r.get("status") == "ok" and r.get(key))
    if not pts:
        return None
    if len(pts) == 1:
        return pts[0][1] * at / pts[0][0]  # linear: the optimistic guess
    (n1, v1), (n2, v2) = pts[-2], pts[-1]
    e = max(1.0, math.log(v2 / v1) / math.log(n2 / n1)) if v1 > 0 and v2 > 0 else 1.0
    return v2 * (at / n2) ** e


def predict(rows: List[Dict], key: str, model: str, n: int, window: int) -> Optional[float]:
    """``key`` of ``model`` at ``(n, window)``: from the smaller node counts at this window, else from the shorter
    windows at this node count (None when neither was measured)."""
    by_n = extrapolate([r for r in rows if (r["model"], r["window"]) == (model, window) and r["nodes"] < n], key, n)
    if by_n is not None:
        return by_n
    return extrapolate([r for r in rows if (r["model"], r["nodes"]) == (model, n) and r["window"] < window], key,
                       window, axis="window")


def _child(conn, fn, args) -> None:
    try:
        conn.send(("ok", fn(*args)))
    except Exception as e:  # noqa: BLE001  a failure (an unsupported window, a bad option) is a row
        conn.send(("failed", f"failed: {type(e).__name__}: {(str(e).splitlines() or [''])[0][:160]}"))
    finally:
        conn.close()


def run_in_fresh_process(ctx, fn, args: tuple, timeout_s: float) -> Tuple[bool, Any]:
    """``fn(*args)`` in a fresh process of ``ctx``: ``(True, its value)``, or ``(False, the status)`` when it
    raised, ran past ``timeout_s`` (killed) or died (its exit code; SIGKILL is most likely the kernel's
    out-of-memory killer). A process of our own rather than a pool: its exit code is ours to read."""
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn, args))
    proc.start()
    send.close()
    try:
        if not recv.poll(timeout_s):
            proc.kill()
            return False, f"timeout after {timeout_s:g} s"
        try:
            kind, value = recv.recv()
        except EOFError:  # the process ended without a word
            proc.join()
            if proc.exitcode == -9:
                return False, "failed: the measuring process was killed (SIGKILL: out of memory, most likely)"
            return False, f"failed: the measuring process died (exit code {proc.exitcode})"
        return kind == "ok", value
    finally:
        proc.join()
        recv.close()


def fit_table(rows: List[Dict], lo: int, hi: int) -> List[Dict]:
    """Growth exponents of step time and memory in ``N`` (per model, window and batch, nodes in ``[lo, hi]``)
    and in ``T`` (per model, node count and batch)."""
    out = []
    ok = [r for r in rows if r["status"] == "ok"]
    for (model, window, batch) in sorted({(r["model"], r["window"], r["batch"]) for r in ok}):
        sel = sorted((r for r in ok if (r["model"], r["window"], r["batch"]) == (model, window, batch)
                      and lo <= r["nodes"] <= hi), key=lambda r: r["nodes"])
        out.append({"model": model, "axis": "N", "at": f"T={window}, B={batch}", "points": len(sel),
                    "range": f"{sel[0]['nodes']}-{sel[-1]['nodes']}" if sel else "-",
                    "time_exponent": exponent([r["nodes"] for r in sel], [r["train_step_s"] for r in sel]),
                    "memory_exponent": exponent([r["nodes"] for r in sel], [r["model_delta_mb"] for r in sel])})
    for (model, n, batch) in sorted({(r["model"], r["nodes"], r["batch"]) for r in ok}):
        sel = sorted((r for r in ok if (r["model"], r["nodes"], r["batch"]) == (model, n, batch)),
                     key=lambda r: r["window"])
        if len(sel) > 1:
            out.append({"model": model, "axis": "T", "at": f"N={n}, B={batch}", "points": len(sel),
                        "range": f"{sel[0]['window']}-{sel[-1]['window']}",
                        "time_exponent": exponent([r["window"] for r in sel], [r["train_step_s"] for r in sel]),
                        "memory_exponent": exponent([r["window"] for r in sel], [r["model_delta_mb"] for r in sel])})
    return out


def plot(rows: List[Dict], path: Path) -> Optional[Path]:
    """Step time and memory against N (log-log), one line per model, window and batch."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    ok = [r for r in rows if r["status"] == "ok"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for (model, window, batch) in sorted({(r["model"], r["window"], r["batch"]) for r in ok}):
        sel = sorted((r for r in ok if (r["model"], r["window"], r["batch"]) == (model, window, batch)),
                     key=lambda r: r["nodes"])
        if len(sel) < 2:  # a single point (a spot check at another batch) is in the tables only
            continue
        for ax, key in zip(axes, ("train_step_s", "model_delta_mb")):
            ax.plot([r["nodes"] for r in sel], [r[key] for r in sel], marker="o", label=f"{model} T={window} B={batch}")
    for ax, title in zip(axes, ("training step (s)", "memory the model adds (MB)")):
        ax.set(xscale="log", yscale="log", xlabel="nodes N", title=title)
        ax.grid(True, which="both", alpha=0.3)
    axes[1].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def markdown_tables(rows: List[Dict], fits: List[Dict], batch: int = 4, window: int = 12,
                    nodes: Optional[Sequence[int]] = None) -> str:
    """Two markdown tables: step time and model memory per model against N (at ``batch`` and ``window``; the node
    counts ``nodes``, by default those every model was measured at) with the exponents in N, and step time per
    model against T (at the smallest N measured at several windows)."""
    ok = [r for r in rows if int(r["batch"]) == batch]
    models = sorted({r["model"] for r in ok if int(r["window"]) == window})
    ns = sorted(nodes or set.intersection(*({int(r["nodes"]) for r in ok if r["model"] == m and int(r["window"]) == window}
                                            for m in models)))
    ex = {f["model"]: f for f in fits if f["axis"] == "N" and f["at"] == f"T={window}, B={batch}"}
    out = ["| model | " + " | ".join(f"N = {n:,}" for n in ns) + " | time exponent | memory exponent |",
           "|---|" + "---|" * (len(ns) + 2)]
    for m in models:
        cells = []
        for n in ns:
            r = [x for x in ok if (x["model"], int(x["nodes"]), int(x["window"])) == (m, n, window)]
            if not r:
                cells.append("-")
            elif r[0]["status"] == "ok":
                cells.append(f"{r[0]['train_step_s']:.3g} s, {r[0]['model_delta_mb'] / 1024:.2g} GB")
            else:
                cells.append(r[0]["status"])
        e = ex.get(m, {})
        out.append(f"| `{m}` | " + " | ".join(cells) + f" | {_fmt(e.get('time_exponent'))} | "
                   f"{_fmt(e.get('memory_exponent'))} |")
    multi = sorted({int(r["nodes"]) for r in ok if len({int(x["window"]) for x in ok if x["nodes"] == r["nodes"]
                                                         and x["model"] == r["model"]}) > 1})
    if multi:
        n = multi[0]
        at = [r for r in ok if int(r["nodes"]) == n]
        ts = sorted({int(r["window"]) for r in at})
        et = {f["model"]: f for f in fits if f["axis"] == "T" and f["at"] == f"N={n}, B={batch}"}
        out += ["", f"| model (N = {n:,}) | " + " | ".join(f"T = {t}" for t in ts) + " | time exponent in T |",
                "|---|" + "---|" * (len(ts) + 1)]
        for m in sorted(et):
            cells = []
            for t in ts:
                r = [x for x in at if (x["model"], int(x["window"])) == (m, t)]
                cells.append("-" if not r else f"{r[0]['train_step_s']:.3g} s" if r[0]["status"] == "ok" else r[0]["status"])
            out.append(f"| `{m}` | " + " | ".join(cells) + f" | {_fmt(et[m].get('time_exponent'))} |")
    return "\n".join(out)


def _fmt(v, digits=3) -> str:
    return "-" if v is None else f"{v:.{digits}g}" if isinstance(v, float) else str(v)


CSV_KEYS = ["model", "nodes", "window", "batch", "edges", "parameters", "train_step_s", "infer_batch_s",
            "peak_rss_mb", "model_delta_mb", "cuda_max_allocated_mb", "status"]


def _key(row: Dict) -> tuple:
    return row["model"], int(row["nodes"]), int(row["window"]), int(row["batch"])


def load_rows(out: Path, machine: Dict) -> Dict[tuple, Dict]:
    """The rows of ``out/scale.json`` by (model, nodes, window, batch); empty if there is none. Raises
    ``SystemExit`` if they were measured on another machine (their figures would not compare)."""
    path = out / "scale.json"
    if not path.is_file():
        return {}
    saved = json.loads(path.read_text())
    if saved.get("machine") != machine:
        raise SystemExit(f"{path} was measured on {saved.get('machine')}, not on {machine}: "
                         f"give another --out, or --fresh to measure everything again")
    return {_key(r): r for r in saved.get("rows", [])}


def write_tables(out: Path, rows: List[Dict], machine: Dict, args, fits: Optional[List[Dict]] = None) -> None:
    """``scale.csv`` and ``scale.json`` (rows, exponents, machine, argv) in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    rows = sorted(rows, key=lambda r: (r["model"], int(r["window"]), int(r["nodes"])))
    fits = fit_table(rows, args.fit_from, args.fit_to) if fits is None else fits
    with open(out / "scale.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_KEYS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    (out / "scale.json").write_text(json.dumps({"machine": machine, "rows": rows, "exponents": fits,
                                                "argv": sys.argv[1:]}, indent=1))


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="+", default=DEFAULT_MODELS)
    p.add_argument("--all-entries", action="store_true", help="add every native zoo entry to --models")
    p.add_argument("--nodes", nargs="+", type=int, default=DEFAULT_NODES)
    p.add_argument("--windows", nargs="+", type=int, default=DEFAULT_WINDOWS)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--steps", type=int, default=2, help="timed steps after one warm-up (the fastest is reported)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--max-mem-gb", type=float, default=16.0, help="skip a configuration predicted to need more")
    p.add_argument("--max-step-s", type=float, default=120.0, help="skip a configuration predicted to be slower")
    p.add_argument("--timeout-s", type=float, default=900.0, help="give up on one measurement after this long")
    p.add_argument("--fit-from", type=int, default=716)
    p.add_argument("--fit-to", type=int, default=8600)
    p.add_argument("--data-root", help="for METR-LA's degree distribution (default: $STGNN_DIAG_DATA)")
    p.add_argument("--out", type=Path, help="folder for scale.csv, scale.json (rows, exponents, machine), scale.png")
    p.add_argument("--fresh", action="store_true", help="measure this run's configurations again, even those --out "
                   "already holds (its other rows stay)")
    args = p.parse_args(argv)

    import torch

    models = list(args.models)
    if args.all_entries:
        from stgnn_diag import list_models

        models += [m for m in list_models() if m not in models]
    degrees = metr_la_out_degrees(args.data_root)
    machine = {"machine": platform.machine(), "cpu_cores": os.cpu_count(), "threads": args.threads,
               "device": args.device, "torch": torch.__version__,
               # glibc's allocator setting changes both figures on large graphs (stgnn_diag.training.malloc)
               "malloc_mmap_max": os.environ.get("MALLOC_MMAP_MAX_"),
               "gpu": torch.cuda.get_device_name(0) if args.device.startswith("cuda") and torch.cuda.is_available()
               else None}
    print(f"batch {args.batch}, horizon 12, synthetic graphs with METR-LA's out-degrees (mean "
          f"{sum(degrees) / len(degrees):.1f}); {machine}", flush=True)
    kept = load_rows(args.out, machine) if args.out else {}
    rows: List[Dict] = []
    ctx = mp.get_context("spawn")
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        def tqdm(x, **_):
            return x
    plan = [(m, w, n) for m in models for w in args.windows for n in sorted(args.nodes)]
    for model, window, n in tqdm(plan, desc="scale", unit="config"):
        done = [r for r in rows if (r["model"], r["window"]) == (model, window)]
        mem = predict(rows, "peak_rss_mb", model, n, window)
        step = predict(rows, "train_step_s", model, n, window)
        base = {"model": model, "nodes": n, "window": window, "batch": args.batch}
        if not args.fresh and _key(base) in kept and kept[_key(base)]["status"] == "ok":
            rows.append(kept.pop(_key(base)))
            continue
        kept.pop(_key(base), None)
        if any(r["status"] != "ok" for r in done):
            rows.append({**base, "status": "skipped: a smaller N did not fit"})
            continue
        if (mem and mem > args.max_mem_gb * 1024) or (step and step > args.max_step_s):
            rows.append({**base, "status": f"skipped: predicted {_fmt(mem and mem / 1024)} GB, {_fmt(step)} s/step"})
            continue
        ok, value = run_in_fresh_process(ctx, measure, (model, n, window, args.batch, args.steps, args.device,
                                                         args.threads, degrees), args.timeout_s)
        rows.append(value if ok else {**base, "status": value})
        if args.out:
            write_tables(args.out, rows + list(kept.values()), machine, args)
    rows += list(kept.values())  # what the folder held beyond this plan stays in its tables
    fits = fit_table(rows, args.fit_from, args.fit_to)
    print("\n| model | N | T | train step s | inference s | peak RSS MB | model MB | status |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['nodes']} | {r['window']} | {_fmt(r.get('train_step_s'))} | "
              f"{_fmt(r.get('infer_batch_s'))} | {_fmt(r.get('peak_rss_mb'), 5)} | {_fmt(r.get('model_delta_mb'), 5)} "
              f"| {r['status']} |")
    print("\n| model | axis | at | range | points | time exponent | memory exponent |")
    print("|---|---|---|---|---|---|---|")
    for f in fits:
        print(f"| {f['model']} | {f['axis']} | {f['at']} | {f['range']} | {f['points']} | "
              f"{_fmt(f['time_exponent'])} | {_fmt(f['memory_exponent'])} |")
    print("\n" + markdown_tables(rows, fits, batch=args.batch))
    if args.out:
        write_tables(args.out, rows, machine, args, fits)
        png = plot(rows, args.out / "scale.png")
        print(f"\nwrote {args.out / 'scale.csv'}, {args.out / 'scale.json'}" + (f", {png}" if png else ""))
    return 0 if any(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
