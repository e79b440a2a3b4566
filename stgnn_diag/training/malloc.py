"""Keep freed activation memory in the process (glibc), so CPU training and scoring stop paying page faults.

glibc serves every allocation above its mmap threshold (128 KiB, adapting up to 32 MiB) with a
fresh ``mmap`` and returns it to the kernel on ``free``. A forward / backward pass at METR-LA's
shapes allocates and frees tens of activation tensors of 1-20 MiB each, so every batch maps and
faults in the same memory again: on 2 cores scoring the test split spent as much time in the
kernel as in user code. Raising the mmap and trim thresholds keeps that memory in the heap for the
next batch.

glibc caps the mmap threshold at 32 MiB, so on large graphs (an activation of 8,600 nodes x a batch of 4 x 12
steps x 64 channels is 106 MiB) every larger tensor is still mapped and faulted in afresh, and a CPU training
step grows faster than the nodes. glibc's own ``MALLOC_MMAP_MAX_=0`` (an environment variable read when the
process starts) serves those from the heap too: the step is then linear in the nodes, at the price of a higher
peak resident memory, since the heap keeps what it served (models/results/scale-cpu). It is left to the user:
``mmap_max=0`` sets it from here.
Nothing changes numerically; other platforms and allocators are left alone.

numpy asks the kernel for transparent huge pages (``madvise``) on its large arrays; on the 2-core
development VM each such fault is slow: reading METR-LA and cutting its splits spent 1.7 s in the
kernel with numpy's default and 0.15 s without (the same 12 MB npz, a fresh process each). That
advice is switched off with the thresholds.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import sys
from typing import Optional

_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD, _M_MMAP_MAX = -1, -2, -3, -4
_DONE = False


def keep_freed_memory(mmap_threshold: int = 32 << 20, trim_threshold: int = 2**31 - 1,
                      top_pad: int = 256 << 20, mmap_max: Optional[int] = None) -> bool:
    """Set glibc's allocation thresholds once per process: blocks up to ``mmap_threshold`` (32 MiB, the
    largest glibc accepts on 64-bit systems) come from the heap, which grows ``top_pad`` at a time and
    is not trimmed below ``trim_threshold``; with ``mmap_max`` (not by default), at most that many blocks are ever
    mapped (0: larger blocks come from the heap too, as ``MALLOC_MMAP_MAX_=0`` does); and stop numpy's huge-page
    advice (module docstring).

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
    if mmap_max is not None:
        settings.append((_M_MMAP_MAX, max(int(mmap_max), 0)))
    _DONE = all(bool(mallopt(option, int(value))) for option, value in settings)
    return _DONE


def _no_numpy_huge_pages() -> None:
    """Stop numpy from advising huge pages for its large arrays (see the module docstring)."""
    import numpy as np

    core = getattr(np, "_core", None) or np.core
    setter = getattr(core.multiarray, "_set_madvise_hugepage", None)
    if setter is not None:
        setter(False)
