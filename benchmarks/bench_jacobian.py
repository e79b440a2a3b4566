"""Full Jacobian [12, 207, 12, 207] of a TTS and a T&S model on one METR-LA window: ours vs autograd.

For each model (registered zoo entries, hidden 64, untrained: the timing and the comparison do not
depend on the weights) the script computes, in the same process and on the same window,

* ours: :func:`stgnn_diag.sensitivity.spatiotemporal_jacobian` (``method="auto"``, raw blocks);
* baseline: ``torch.autograd.functional.jacobian(lambda x: model(x, edge_index, edge_weight), x)``,
  the over-squashing paper's method (one backward pass per output entry),

and prints both wall times, the speed-up, the peak memory of each call, and the largest absolute and
relative difference. It also prints the work model (``StructuredJacobian.work``): how many ``d``-vectors each
engine carries through the sub-layers. Their ratio is the structural part of the speed-up; the rest is how
fast each engine treats a vector (batched products against autograd's one-output-at-a-time passes).

Each call runs in its own fresh process (same window, same seed, so the same weights), so its peak memory
(resident-set growth above the level at the start of the call, sampled every 2 ms) is not hidden by memory an
earlier call left with the allocator.

Usage: ``python benchmarks/bench_jacobian.py [--threads N] [--window 0] [--models tts_attn_none tas_attn_none]
[--device cuda] [--warm]``
(data root: ``--data-root`` or ``$STGNN_DIAG_DATA``).
"""
from __future__ import annotations

import argparse
import gc
import multiprocessing as mp
import threading
import time

import torch

import stgnn_diag
from stgnn_diag.sensitivity import StructuredJacobian, dataset_window, spatiotemporal_jacobian


class PeakRSS:
    """Resident-set size growth above the level at entry, sampled in a thread (Linux /proc)."""

    def __init__(self, interval: float = 0.002):
        self.interval, self.peak, self._stop = interval, 0, threading.Event()

    @staticmethod
    def rss() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self.rss() - self.base)
            time.sleep(self.interval)

    def __enter__(self):
        gc.collect()
        self.base = self.rss()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, self.rss() - self.base)

    @property
    def mb(self) -> float:
        return self.peak / 2**20


class PeakCUDA:
    """Peak CUDA memory allocated during the block, above the level at entry (torch's allocator)."""

    def __init__(self, device):
        self.device, self.peak = device, 0

    def __enter__(self):
        torch.cuda.synchronize(self.device)
        self.base = torch.cuda.memory_allocated(self.device)
        torch.cuda.reset_peak_memory_stats(self.device)
        return self

    def __exit__(self, *exc):
        torch.cuda.synchronize(self.device)  # the timer stops after the GPU has finished
        self.peak = torch.cuda.max_memory_allocated(self.device) - self.base

    @property
    def mb(self) -> float:
        return self.peak / 2**20


def _warm_up(which: str, model, x, ei, ew, budget_mb: float) -> None:
    """Untimed: what the first call of a method pays once (kernels, cuSPARSE / cuBLAS handles, allocator).

    Ours runs whole (it is short); autograd runs its first 16 backward passes, which touch every kernel
    the 2,484 passes of the timed call use."""
    if which == "ours":
        spatiotemporal_jacobian(model, x, ei, ew, norm=None, budget_mb=budget_mb)
        return
    z = x.unsqueeze(0).clone().requires_grad_(True)
    y = model(z, ei, ew).reshape(-1)
    for i in range(16):
        torch.autograd.grad(y[i], z, retain_graph=True)


def _measure(which: str, name: str, hidden: int, window: int, data_root, threads: int, budget_mb: float,
             device: str, warm: bool, queue):
    """Child process: build the model (seed 0) and the window, time one Jacobian, send it back.

    On CUDA one untimed forward pass first initialises the context and the libraries (cuBLAS), for both
    methods alike; with ``warm`` each method also runs :func:`_warm_up` first. The peak is the device memory
    allocated during the timed call (``PeakCUDA``)."""
    torch.set_num_threads(threads)
    dev = torch.device(device)
    w = dataset_window(window, "test", root=data_root)
    x, ei, ew = w.x.to(dev), w.edge_index.to(dev), w.edge_weight.to(dev)
    torch.manual_seed(0)
    model = stgnn_diag.create_model(name, n_nodes=w.n_nodes, hidden_size=hidden).eval().to(dev)
    meter = PeakRSS() if dev.type == "cpu" else PeakCUDA(dev)
    if dev.type == "cuda":
        with torch.no_grad():
            model(x.unsqueeze(0), ei, ew)
    if warm:
        _warm_up(which, model, x, ei, ew, budget_mb)
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    with meter as mem:
        t0 = time.perf_counter()
        if which == "ours":
            j, info = spatiotemporal_jacobian(model, x, ei, ew, norm=None, budget_mb=budget_mb, return_info=True)
            j, how = j[:, :, 0, :, :, 0], info["method"]
        else:
            j = torch.autograd.functional.jacobian(lambda z: model(z, ei, ew), x.unsqueeze(0))
            j, how = j[0, :, :, 0, 0, :, :, 0], "autograd.functional.jacobian"
    dt = time.perf_counter() - t0
    queue.put((j.cpu().numpy(), dt, mem.mb, how, sum(q.numel() for q in model.parameters())))


def run_isolated(*args):
    """Run :func:`_measure` in a fresh (spawned) process; returns ``(J, seconds, peak MB, label, n_params)``."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_measure, args=(*args, queue))
    proc.start()
    j, dt, mb, how, n_par = queue.get()
    proc.join()
    if proc.exitcode != 0:
        raise RuntimeError(f"the measured process failed with exit code {proc.exitcode}")
    return torch.from_numpy(j), dt, mb, how, n_par


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="+", default=["tts_attn_none", "tas_attn_none"])
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--window", type=int, default=0, help="test window index")
    p.add_argument("--threads", type=int, default=torch.get_num_threads())
    p.add_argument("--budget-mb", type=float, default=256.0, help="chunk memory budget of our engine")
    p.add_argument("--device", default="cpu", help="cpu or cuda (peak memory: resident set on cpu, "
                   "allocated device memory on cuda)")
    p.add_argument("--warm", action="store_true", help="time each method after an untimed warm-up (a whole "
                   "call of ours, 16 backward passes of autograd): what a process computing many Jacobians sees; "
                   "meaningful on a GPU, where first calls initialise kernels and library handles")
    p.add_argument("--data-root")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    w = dataset_window(args.window, "test", root=args.data_root)
    x, ei, ew = w.x, w.edge_index, w.edge_weight
    where = (f"{args.threads} thread(s)" if args.device == "cpu"
             else f"{torch.cuda.get_device_name(torch.device(args.device))}")
    print(f"METR-LA test window {w.index}: x {tuple(x.shape)}, {ei.shape[1]} edges; torch {torch.__version__}, "
          f"{args.device}: {where}; {'warm (after an untimed warm-up)' if args.warm else 'cold (first call)'}\n")
    rows = []
    for name in args.models:
        common = (name, args.hidden, args.window, args.data_root, args.threads, args.budget_mb, args.device,
                  args.warm)
        j_ours, t_ours, m_ours, how, n_par = run_isolated("ours", *common)
        print(f"{name} ({n_par} parameters): ours ({how}) {t_ours:.1f} s, peak +{m_ours:.0f} MB", flush=True)
        j_ref, t_ref, m_ref, _, _ = run_isolated("baseline", *common)
        print(f"{name}: torch.autograd.functional.jacobian {t_ref:.1f} s, peak +{m_ref:.0f} MB", flush=True)
        diff = float((j_ours - j_ref).abs().max())
        scale = float(j_ref.abs().max())
        torch.manual_seed(0)  # the same weights as in the measured processes
        model = stgnn_diag.create_model(name, n_nodes=w.n_nodes, hidden_size=args.hidden).eval()
        work = StructuredJacobian(model, x.unsqueeze(0), ei, ew).work()
        rows.append((name, tuple(j_ref.shape), t_ours, t_ref, m_ours, m_ref, diff, diff / scale, work))
        del j_ours, j_ref
        gc.collect()
    print("\n| model | Jacobian | ours s | autograd s | speed-up | ours peak MB | autograd peak MB | "
          "max abs diff | max diff / max abs | d-vectors ours / autograd (M) | structural ratio | "
          "per-vector ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, shape, to, tr, mo, mr, d, rel, wk in rows:
        print(f"| {name} | {list(shape)} | {to:.1f} | {tr:.1f} | {tr / to:.1f}x | {mo:.0f} | {mr:.0f} | "
              f"{d:.2e} | {rel:.2e} | {wk['ours'] / 1e6:.1f} / {wk['reverse'] / 1e6:.1f} | {wk['ratio']:.1f}x | "
              f"{tr / to / wk['ratio']:.1f}x |")
    print("\ntargets: speed-up >= 20x, peak memory <= 2048 MB, max diff / max abs <= 1e-5")
    print("speed-up = structural ratio (fewer vectors, from the graph's reach) x per-vector ratio (how much faster "
          "one vector goes through a sub-layer)")


if __name__ == "__main__":
    main()
