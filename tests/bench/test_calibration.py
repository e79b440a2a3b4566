"""The compute figure stored with every trained unit: a real measurement, and the comparison rule."""
import time

import pytest
import torch

from stgnn_diag.bench.calibration import SPEED_TOLERANCE, gemm_gflops, same_compute, speed_spread


def test_gemm_gflops_agrees_with_timing_the_product_by_hand():
    size = 512
    a, b = torch.randn(size, size), torch.randn(size, size)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - t0)
    by_hand = 2 * size ** 3 / best / 1e9
    measured = gemm_gflops(size=size)
    assert measured > 0 and by_hand / 4 < measured < by_hand * 4  # same quantity (timings on a shared machine vary)


def test_same_compute_rule():
    assert SPEED_TOLERANCE == 1.3
    assert same_compute([40.0, 52.0]) and not same_compute([40.0, 52.1])
    assert same_compute([None, 40.0]) and same_compute([]) and same_compute([None, None, 12.0])
    assert speed_spread([None, 50.0, 40.0, 45.0]) == (40.0, 50.0) and speed_spread([40.0]) == (None, None)
    with pytest.raises(ValueError):  # a corrupt record is an error, not "not recorded"
        same_compute([40.0, "fast"])
