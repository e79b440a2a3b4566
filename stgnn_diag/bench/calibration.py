"""A machine's compute speed in one figure, stored with every trained unit.

An equal-time comparison (``--max-time``) is only fair between units that had the same compute: the
same machine, the same number of torch threads, no other work on their cores. Two 2-core development
machines of this project differed by 1.9x (tsl STID reached 6,357 steps in 15 minutes on one and
12,083 on the other), with the same CPU name in ``/proc/cpuinfo``. So each trained unit measures the
throughput of a fixed matrix product in its own process, with its own threads, before and after it trains,
and keeps the better figure (``machine.gemm_gflops`` in ``result.json``): what the machine and the thread
count can do, not a moment's load (three processes on two cores gave one unit 127 GFLOP/s and its
neighbours 175-185 at the start). :mod:`~stgnn_diag.bench.aggregation` refuses to average or table
equal-time results whose figures differ by more than :data:`SPEED_TOLERANCE`; the report's
time-to-accuracy plot says so in its axis label and the report under it.
"""
from __future__ import annotations

import time
from typing import Iterable, Optional, Tuple

#: Largest ratio between two units' ``gemm_gflops`` that still counts as the same compute: well above the
#: spread of repeated measurements on one machine with one process per core, well below the 1.9x between
#: two of this project's machines.
SPEED_TOLERANCE = 1.3


def gemm_gflops(device: str = "cpu", size: int = 1024, repeats: int = 10) -> float:
    """GFLOP/s of a float32 ``[size, size] @ [size, size]`` product with this process's torch threads:
    the best of ``repeats`` timed products after one warm-up (about 0.3 s on one CPU core; the best, so that
    a moment of other work on the core does not count)."""
    import torch

    dev = torch.device(device)
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(size, size, generator=gen).to(dev)
    b = torch.randn(size, size, generator=gen).to(dev)

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    torch.mm(a, b)
    sync()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        torch.mm(a, b)
        sync()
        best = min(best, time.perf_counter() - t0)
    return round(2 * size ** 3 / best / 1e9, 1)


def speed_spread(speeds: Iterable[Optional[float]]) -> Tuple[Optional[float], Optional[float]]:
    """``(slowest, fastest)`` of the recorded figures (None where fewer than two were recorded)."""
    known = [float(s) for s in speeds if s]
    if len(known) < 2:
        return None, None
    return min(known), max(known)


def same_compute(speeds: Iterable[Optional[float]], tolerance: float = SPEED_TOLERANCE) -> bool:
    """True when every recorded figure is within ``tolerance`` of every other (units without one,
    recorded before the figure existed, are not checked)."""
    lo, hi = speed_spread(speeds)
    return lo is None or hi / lo <= tolerance


def mismatch_message(what: str, speeds: Iterable[Optional[float]]) -> str:
    """The error text for ``what`` (results, a table, a plot) trained with different compute."""
    lo, hi = speed_spread(speeds)
    return (f"{what} trained with different compute: the matrix-product speed each unit recorded "
            f"ranges from {lo:g} to {hi:g} GFLOP/s ({hi / lo:.2f}x, more than {SPEED_TOLERANCE}x). Results limited "
            f"by the clock, and training times, compare only on one machine with the same torch threads: rerun them there "
            f"(see stgnn_diag.bench.calibration).")
