"""Keep freed activation memory in the process (glibc), so CPU training and scoring stop paying page faults.

glibc serves every allocation above its mmap threshold (128 KiB, adapting up to 32 MiB) with a
fresh ``mmap`` and returns it to the kernel on ``free``. A forward / backward pass allocates and frees
tens of activation tensors of megabytes each, so without this every batch maps and faults in the same
memory again and a small CPU spends as much time in the kernel as in user code. Raising the mmap and
trim thresholds keeps that memory in the heap for the next batch.

glibc caps the mmap threshold at 32 MiB, so on large graphs every larger activation is still mapped and
faulted in afresh, and a CPU training step grows faster than the nodes. glibc's own ``MALLOC_MMAP_MAX_=0``
(an environment variable read when the process starts) serves those from the heap too, at the price of a
higher peak resident memory, since the heap keeps what it served; it is left to the user (the figures are in
models/results/scale-cpu). Nothing changes numerically; other platforms and allocators are left alone.

numpy asks the kernel for transparent huge pages (``madvise``) on its large arrays, and on small VMs each such
fault is slow (reading a data set and cutting its splits then spends most of its time in the kernel); that
advice is switched off with the thresholds.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import sys

_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
_DONE = False


def keep_freed_memory(mmap_threshold: int = 32 << 20, trim_threshold: int = 2**31 - 1,
                      top_pad: int = 256 << 20) -> bool:
    """Set glibc's allocation thresholds once per process: blocks up to ``mmap_threshold`` (32 MiB, the
    largest glibc accepts on 64-bit systems) come from the heap, which grows ``top_pad`` at a time and
    is not trimmed below ``trim_threshold``; and stop numpy's huge-page advice (module docstring).

    Under glibc's defaults, scoring a split with large batches spends most of its time in the kernel
    (mapping and faulting in freed activations again); with these settings that system time nearly vanishes.

    Returns True when the thresholds were set (Linux with glibc), False otherwise.
    """
    global _DONE
    if _DONE:
        return True
    if not sys.platform.startswith("linux"):
        return False
    _no_numpy_huge_pages()
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl or another libc without mallopt
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    settings = [(_M_MMAP_THRESHOLD, min(int(mmap_threshold), 32 << 20)),
                (_M_TRIM_THRESHOLD, min(int(trim_threshold), 2**31 - 1)), (_M_TOP_PAD, min(int(top_pad), 2**31 - 1))]
    _DONE = all(bool(mallopt(option, int(value))) for option, value in settings)
    return _DONE


def _no_numpy_huge_pages() -> None:
    """Stop numpy from advising huge pages for its large arrays (see the module docstring)."""
    import numpy as np

    core = getattr(np, "_core", None) or np.core
    setter = getattr(core.multiarray, "_set_madvise_hugepage", None)
    if setter is not None:
        setter(False)
