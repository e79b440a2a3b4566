"""Each model against its own shortest window: seed-by-seed differences and their paired test, hand-computed."""
import pytest

from stgnn_diag.bench.aggregation import aggregate, build_tables, collect
from stgnn_diag.bench.report import write_report
from stgnn_diag.bench.windows import window_gains, window_gains_markdown

from .synthetic import make_result, write_results


def _tables(tmp_path):
    rs = []
    for s in range(3):
        rs.append(make_result("tas_attn_none", s, {"mae@3": 3.0, "mae@6": 3.3, "mae@12": 4.0 + 0.1 * s}))
        # T = 48: step 12 better by 0.10, 0.12, 0.08 (separated); step 3 worse by 0.1, -0.1, 0.0 (not)
        rs.append(make_result("tas_attn_none", s, {"mae@3": 3.0 + (0.1, -0.1, 0.0)[s], "mae@6": 3.3,
                                                   "mae@12": 4.0 + 0.1 * s - (0.10, 0.12, 0.08)[s]}, window=48))
    rs.append(make_result("tts_attn_none", 0, {"mae@12": 5.0}, window=48))  # no shortest-window row: left out
    rs.append(make_result("historical_average", None, {"mae@12": 6.0}, kind="baseline"))
    return build_tables(aggregate(collect(write_results(tmp_path / "r", *rs)))), tmp_path / "r"


def test_differences_are_taken_seed_by_seed_against_the_shortest_window(tmp_path):
    tables, _ = _tables(tmp_path)
    (g,) = window_gains(tables)
    assert (g.model, g.window, g.base_window) == ("tas_attn_none", 48, 12)
    d12, d3 = g.diffs["mae@12"], g.diffs["mae@3"]
    assert d12.n == 3 and d12.mean == pytest.approx(-0.10) and d12.std == pytest.approx(0.02)
    assert d3.mean == pytest.approx(0.0, abs=1e-12) and d3.std == pytest.approx(0.1)
    # t = 0.10 / (0.02 / sqrt(3)) = 8.7 > 4.30: separated; step 3: mean 0, not
    assert g.separated["mae@12"] and not g.separated["mae@3"] and not g.separated["mae@6"]


def test_the_section_is_in_the_report(tmp_path):
    tables, folder = _tables(tmp_path)
    md = window_gains_markdown(tables)
    assert "| `tas_attn_none` | `cpu-small` | 48 vs 12 | 3 | +0.000 ± 0.100 | +0.000 | -0.100 ± 0.020* |" in md
    assert "tts_attn_none" not in md and "historical_average" not in md
    assert md in write_report(folder).text
    one = build_tables(aggregate(collect(write_results(tmp_path / "one", make_result("tas_attn_none", 0, {})))))
    assert window_gains_markdown(one) == ""  # one window: no section
