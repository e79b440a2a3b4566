"""Speed and cost of zoo models side by side at the METR-LA shape, in one run on this machine.

Per model (each measured in its own fresh process, one after the other, so memory figures do not
mix): parameter count; training throughput (windows/s: forward, masked MAE in mph, backward, gradient
clipping and an AdamW step on real METR-LA training windows, batch ``--batch``, 12 in / 12 out, 207
sensors, the real sensor graph); inference latency per window (``eval`` + ``no_grad``, at batch
``--batch`` and at batch 1); peak memory; and an extrapolated time for one full-protocol epoch (the
canonical DCRNN split: every training window once plus one pass over the validation windows, at the
measured rates).

The measuring process sets glibc's allocation thresholds as training and scoring do
(:mod:`stgnn_diag.training.malloc`), so its figures are the engine's, without a page-fault cost per batch.

Memory: on CPU, ``peak RSS`` is the measuring process's peak resident set size
(``getrusage(RUSAGE_SELF).ru_maxrss``: Python, torch, the data set and the model together) and
``model Δ`` is that peak minus the resident memory just before the model was built (parameters,
gradients, AdamW state and activations of the training step). On a GPU the figure is
``torch.cuda.max_memory_allocated`` (tensors only).

The default run is short (6 models, batch 8, 1 warm-up and 2 timed steps each; about 2 minutes on
2 CPU cores) and its figures are rough: on a shared 2-core machine timings vary by ±15 % or more, and
throughput at batch 8 is lower than at the budgets' batch sizes (32, 128). Medians of the timed
steps are reported; raise ``--batch`` / ``--steps`` for firmer figures.

Usage::

    python benchmarks/bench_speed_cost.py
    python benchmarks/bench_speed_cost.py --models tts_attn_penalty paper_tas --batch 32 --steps 5
    python benchmarks/bench_speed_cost.py --device cuda --batch 128 --steps 20      # a GPU
    python benchmarks/bench_speed_cost.py --json models/results/speed-cost/cpu-2core.json
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import multiprocessing as mp
import os
import platform
import resource
import statistics
import sys
import time
from typing import Dict, List, Optional

DEFAULT_MODELS = ["tts_attn_penalty", "tas_attn_penalty", "tas_template_penalty", "paper_tas", "tsl:GraphWaveNetModel", "pygt:TGCN2"]


def _rss_now_mb() -> Optional[float]:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20
    except (OSError, ValueError):
        return None


def _peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (2 ** 20 if sys.platform == "darwin" else 2 ** 10)


def measure(name: str, batch: int, steps: int, warmup: int, hidden_size: Optional[int], device: str,
            threads: int, data_root: Optional[str], overrides: Optional[Dict] = None) -> Dict:
    """Measure one model (runs in a fresh process). Returns the figures as a dict."""
    import torch

    torch.set_num_threads(threads)
    from stgnn_diag import create_model
    from stgnn_diag.training.malloc import keep_freed_memory

    keep_freed_memory()  # as `stgnn-diag train` / `evaluate` run: freed activations stay in the heap
    from stgnn_diag.datasets import MetrLA, make_splits
    from stgnn_diag.metrics import masked_mae
    from stgnn_diag.zoo import get_entry

    splits = make_splits(MetrLA(data_root, progress=False), "dcrnn", window=12, horizon=12)
    dev = torch.device(device)
    exog = 1 if get_entry(name).defaults.get("exog_size") == 1 else 8  # as `train` chooses
    b = {k: v.to(dev) for k, v in splits.train[slice(0, batch)].items()}
    x, u, y = b["x"], b["u"][..., :exog], b["y"]
    one = {k: v[:1] for k, v in b.items()}
    ei, ew = splits.edge_index.to(dev), splits.edge_weight.to(dev)
    mean, std = float(splits.scaler.mean), float(splits.scaler.std)
    rss_before = _rss_now_mb()
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    kw = dict(n_nodes=splits.n_nodes, horizon=12, window=12, exog_size=exog)
    if hidden_size is not None:
        kw["hidden_size"] = hidden_size
    kw.update(overrides or {})
    torch.manual_seed(0)
    model = create_model(name, **kw).to(dev)
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    def train_step():
        opt.zero_grad(set_to_none=True)
        loss = masked_mae(model(x, ei, ew, u=u) * std + mean, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()

    model.train()
    times = []
    for i in range(warmup + steps):
        sync()
        t0 = time.perf_counter()
        train_step()
        sync()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    train_step_s = statistics.median(times)
    model.eval()
    inf, inf1 = [], []
    with torch.no_grad():
        for i in range(warmup + steps):
            sync()
            t0 = time.perf_counter()
            model(x, ei, ew, u=u)
            sync()
            t1 = time.perf_counter()
            model(one["x"], ei, ew, u=one["u"][..., :exog])
            sync()
            if i >= warmup:
                inf.append(t1 - t0)
                inf1.append(time.perf_counter() - t1)
    n_train, n_val, _ = splits.sizes()
    train_wps = batch / train_step_s
    infer_wps = batch / statistics.median(inf)
    peak = _peak_rss_mb()
    return {"model": name, "overrides": dict(overrides or {}), "parameters": params, "train_windows_per_s": train_wps,
            "infer_ms_per_window": 1000 / infer_wps, "infer_ms_batch1": 1000 * statistics.median(inf1),
            "peak_rss_mb": peak, "model_delta_mb": None if rss_before is None else peak - rss_before,
            "cuda_max_allocated_mb": (torch.cuda.max_memory_allocated() / 2 ** 20) if dev.type == "cuda" else None,
            "epoch_train_s": n_train / train_wps, "epoch_val_s": n_val / infer_wps,
            "n_train": n_train, "n_val": n_val}


def _fmt_time(s: float) -> str:
    return f"{s / 60:.1f} min" if s >= 90 else f"{s:.0f} s"


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="+", default=DEFAULT_MODELS, help="zoo names (ours, tsl:, pygt:)")
    p.add_argument("--batch", type=int, default=8, help="windows per batch (training and inference)")
    p.add_argument("--steps", type=int, default=2, help="timed steps per measurement (median reported)")
    p.add_argument("--warmup", type=int, default=1, help="untimed steps first")
    p.add_argument("--hidden-size", type=int, help="width for every model (default: each entry's own)")
    p.add_argument("--device", default="cpu", help="cpu or cuda")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1: steadier figures on a "
                   "shared machine; raise it on a dedicated one)")
    p.add_argument("--data-root", help="folder holding metr_la/ (default: $STGNN_DIAG_DATA, then datasets/)")
    p.add_argument("--set-for", action="append", nargs=2, default=[], metavar=("PATTERN", "KEY=VALUE"),
                   help="model override for the models matching PATTERN (repeatable), as in `stgnn-diag bench`")
    p.add_argument("--json", help="also write the figures, settings and machine to this JSON file")
    args = p.parse_args(argv)

    import torch

    gpu = torch.cuda.get_device_name(0) if args.device.startswith("cuda") and torch.cuda.is_available() else None
    where = f"{args.device} ({gpu})" if gpu else args.device
    print(f"METR-LA shape: batch {args.batch}, 12 -> 12 steps, 207 sensors, real graph; {args.steps} timed steps "
          f"after {args.warmup} warm-up; device {where}; {args.threads} torch thread(s); "
          f"{platform.machine()}, {os.cpu_count()} CPU cores; torch {torch.__version__}")
    from stgnn_diag.bench.calibration import gemm_gflops

    torch.set_num_threads(args.threads)
    speed = gemm_gflops("cuda" if gpu else "cpu")  # this machine's compute, to compare runs across machines
    print(f"width: {'hidden_size ' + str(args.hidden_size) if args.hidden_size else 'each entry own default'}; "
          f"matrix-product speed {speed:g} GFLOP/s (stgnn_diag.bench.calibration)\n")
    from stgnn_diag.bench.grid import overrides_for
    from stgnn_diag._values import parse_key_values

    patterns = {}
    for pattern, kv in args.set_for:
        patterns.setdefault(pattern, {}).update(parse_key_values([kv]))
    rows, failed = [], []
    ctx = mp.get_context("spawn")
    for name in args.models:
        overrides = overrides_for(patterns, name)
        with cf.ProcessPoolExecutor(max_workers=1, mp_context=ctx) as ex:
            fut = ex.submit(measure, name, args.batch, args.steps, args.warmup, args.hidden_size, args.device,
                            args.threads, args.data_root, overrides)
            try:
                rows.append(fut.result())
                r = rows[-1]
                print(f"  measured {name}: {r['train_windows_per_s']:.1f} train windows/s", flush=True)
            except Exception as e:  # noqa: BLE001  one model failing does not stop the table
                failed.append((name, f"{type(e).__name__}: {e}"))
                print(f"  {name}: FAILED ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})",
                      flush=True)
    if not rows:
        return 1
    mem_head = "GPU max alloc MB" if rows[0]["cuda_max_allocated_mb"] is not None else "peak RSS MB (model Δ)"
    print(f"\n| model | params | train windows/s | infer ms/window (b={args.batch}) | infer ms (b=1) | {mem_head} "
          f"| est. full epoch (train + val) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        delta = f" ({r['model_delta_mb']:+.0f})" if r["model_delta_mb"] is not None else ""
        mem = (f"{r['cuda_max_allocated_mb']:.0f}" if r["cuda_max_allocated_mb"] is not None else
               f"{r['peak_rss_mb']:.0f}{delta}")
        total = r["epoch_train_s"] + r["epoch_val_s"]
        label = r["model"] + (" (" + ", ".join(f"{k}={v}" for k, v in r["overrides"].items()) + ")"
                              if r.get("overrides") else "")
        print(f"| {label} | {r['parameters']:,} | {r['train_windows_per_s']:.1f} | {r['infer_ms_per_window']:.2f} "
              f"| {r['infer_ms_batch1']:.1f} | {mem} | {_fmt_time(total)} ({_fmt_time(r['epoch_train_s'])} + "
              f"{_fmt_time(r['epoch_val_s'])}) |")
    n_train, n_val = rows[0]["n_train"], rows[0]["n_val"]
    print(f"\nFull-protocol epoch = the {n_train:,} canonical DCRNN training windows at the measured training rate "
          f"+ the {n_val:,} validation windows at the measured inference rate (batch {args.batch}); data loading, "
          f"logging and checkpoints not included. The paper budget (150 epochs, batch 128) is about 150x that.")
    for name, err in failed:
        print(f"failed: {name}: {err}")
    if args.json:
        import json
        from pathlib import Path

        from stgnn_diag.training.provenance import environment

        out = {"settings": {k: v for k, v in vars(args).items() if k != "json"}, "rows": rows,
               "failed": [{"model": n, "error": e} for n, e in failed],
               "machine": {"machine": platform.machine(), "cpu_count": os.cpu_count(), "gpu": gpu,
                           "gemm_gflops": speed},
               "environment": environment(), "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=2, default=str))
        print(f"wrote {args.json}")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
