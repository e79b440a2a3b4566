"""Keep freed activation memory in the process (glibc), so CPU training and scoring stop paying page faults.

glibc serves every allocation above its mmap threshold (128 KiB, adapting up to 32 MiB) with a
fresh ``mmap`` and returns it to the kernel on ``free``. A forward / backward pass at METR-LA's
shapes allocates and frees tens of activation tensors of 1-20 MiB each, so every batch maps and
faults in the same memory again: on 2 cores scoring the test split spent as much time in the
kernel as in user code. Raising the mmap and trim thresholds keeps that memory in the heap for the
next batch. Nothing changes numerically; other platforms and allocators are left alone.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import sys

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_DONE = False


def keep_freed_memory(threshold_bytes: int = 32 << 20) -> bool:
    """Set glibc's mmap and trim thresholds to ``threshold_bytes`` once per process (32 MiB, the largest
    mmap threshold glibc accepts on 64-bit systems: larger blocks are still mapped).

    Returns True when the thresholds were set (Linux with glibc), False otherwise.
    """
    global _DONE
    if _DONE:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl or another libc without mallopt
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    threshold = min(int(threshold_bytes), 32 << 20)
    _DONE = bool(mallopt(_M_MMAP_THRESHOLD, threshold)) and bool(mallopt(_M_TRIM_THRESHOLD, threshold))
    return _DONE
