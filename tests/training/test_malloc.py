"""The process memory settings of CPU training and scoring (glibc thresholds, numpy's huge-page advice)."""
import os
import subprocess
import sys

import pytest

CHECK = """
import numpy as np
from stgnn_diag.training.malloc import keep_freed_memory
get = np._core.multiarray._get_madvise_hugepage
np._core.multiarray._set_madvise_hugepage(True)
assert get()
ok = keep_freed_memory()
print(ok, get())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc and numpy's madvise are Linux-only")
def test_keep_freed_memory_also_stops_numpys_huge_page_advice():
    # a fresh process: the settings are process-wide and set once
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False"]


def test_evaluate_sets_them_before_the_data_set_is_read(monkeypatch, tmp_path):
    from stgnn_diag.training import predictor, scoring

    calls = []
    monkeypatch.setattr(predictor, "keep_freed_memory", lambda: calls.append("memory"))

    def fake_dataset(*a, **k):
        calls.append("dataset")
        raise RuntimeError("stop here")

    monkeypatch.setattr(predictor, "get_dataset", fake_dataset)
    with pytest.raises(RuntimeError, match="stop here"):
        scoring.evaluate("historical_average", data_root=tmp_path, progress=False)
    assert calls[:2] == ["memory", "dataset"]



HEAP = """
import numpy as np
from stgnn_diag.training.malloc import keep_freed_memory

def heap_mb():
    for line in open("/proc/self/maps"):
        if line.rstrip().endswith("[heap]"):
            a, b = (int(x, 16) for x in line.split()[0].split("-"))
            return (b - a) / 2 ** 20
    return 0.0

assert keep_freed_memory()
before = heap_mb()
big = np.ones(200 * 2 ** 20 // 8)  # 200 MiB, far above glibc's largest mmap threshold
print(heap_mb() - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's heap is Linux-only")
@pytest.mark.parametrize("mmap_max,heap_grows", [(None, False), ("0", True)])
def test_a_block_above_the_mmap_cap_comes_from_the_heap_only_with_malloc_mmap_max_0(mmap_max, heap_grows):
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_MMAP_MAX_"}
    if mmap_max is not None:
        env["MALLOC_MMAP_MAX_"] = mmap_max  # glibc reads it at start-up; keep_freed_memory leaves it alone
    grown = float(subprocess.run([sys.executable, "-c", HEAP], capture_output=True, text=True, check=True,
                                 env=env).stdout)
    assert (grown >= 200) == heap_grows
