"""Memory of training on a LargeST-size series: the data's own size plus a few batches?

Generates (once) ``largest_synthetic`` at ``--nodes`` sensors over ``--days`` days, then trains one zoo entry on
it with ``stgnn-diag train`` (first ``--max-windows`` windows of each split, one epoch), and prints: the series
file's size, the generation time, the peak resident memory of the training process (``ru_maxrss``: it counts the
pages of the memory-mapped file the process has read, so it includes the series), the seconds per training step
and the time a whole epoch of the training split would take at that rate. Writes ``largest_memory.json`` into
``--out``.

Usage::

    python benchmarks/largest_memory.py --nodes 8600 --days 365 --model tas_attn_none --max-windows 640 \\
        --root /tmp/largest --out models/results/scale-cpu
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=8600)
    p.add_argument("--days", type=int, default=365)
    p.add_argument("--model", default="tas_attn_none")
    p.add_argument("--max-windows", type=int, default=640)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--root", type=Path, required=True, help="where the series is generated (several GB)")
    p.add_argument("--out", type=Path, default=Path("."))
    args = p.parse_args(argv)

    from stgnn_diag.datasets import get_dataset, make_splits

    t0 = time.perf_counter()
    data = get_dataset("largest_synthetic", root=args.root, n_nodes=args.nodes, days=args.days)
    generate_s = time.perf_counter() - t0
    size_gb = data.speed_path.stat().st_size / 1e9
    splits = make_splits(data, "dcrnn")
    train_windows = len(splits.train)
    del splits, data

    name = f"largest_synthetic[n_nodes={args.nodes},days={args.days}]"
    run = args.root / "runs" / f"{args.model}-n{args.nodes}-d{args.days}"
    cmd = [sys.executable, "-m", "stgnn_diag.cli", "train", "--model", args.model, "--dataset", name,
           "--data-root", str(args.root), "--out", str(run), "--overwrite", "--max-epochs", "1",
           "--max-windows", str(args.max_windows), "--batch-size", str(args.batch_size), "--no-baselines"]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - t0
    peak_gb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024 / 1e9
    metrics = json.loads((run / "metrics.json").read_text())
    steps = metrics["global_steps"]
    step_s = metrics["train_time_s"] / max(steps, 1)
    epoch_steps = train_windows // args.batch_size
    row = {"model": args.model, "nodes": args.nodes, "days": args.days, "steps_in_series": args.days * 288,
           "series_gb": round(size_gb, 2), "generate_s": round(generate_s, 1), "peak_rss_gb": round(peak_gb, 2),
           "peak_over_series": round(peak_gb / size_gb, 2), "train_steps": steps, "batch_size": args.batch_size,
           "step_s": round(step_s, 2), "epoch_steps": epoch_steps, "epoch_h": round(epoch_steps * step_s / 3600, 1),
           "run_wall_s": round(wall, 1), "mae@12": metrics["metrics"]["mae@12"],
           "commit": metrics.get("environment", {}).get("git_commit")}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "largest_memory.json").write_text(json.dumps(row, indent=1))
    for k, v in row.items():
        print(f"{k:>18}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
