"""The committed experiments: every published table agrees with its results.csv, the archive holds the units the
CSV lists, and the zoo units are runs of the entries as they build today (their bench commands find them done)."""
import csv
import json
import re
import statistics
from pathlib import Path

import pytest

from stgnn_diag.bench.archive import iter_archived_results
from stgnn_diag.bench.unit import Unit
from stgnn_diag.bench.staleness import model_changes

RESULTS = Path(__file__).resolve().parents[2] / "models" / "results"
EXPERIMENTS = sorted(p.name for p in RESULTS.iterdir() if (p / "tables.csv").is_file())  # written by stgnn-diag bench
HEADING = re.compile(r"^### .* · protocol `(\w+)` · horizon (\d+)(?: · window (\d+))? · budget `([^`]+)`$")


def _units(folder):
    return list(csv.DictReader(open(RESULTS / folder / "results.csv")))


def _published_tables(folder):
    """``{(protocol, horizon, window, budget label): {row name: {column title: cell}}}`` parsed from README.md."""
    tables, key, header = {}, None, None
    for line in (RESULTS / folder / "README.md").read_text().splitlines():
        m = HEADING.match(line)
        if m:
            key, header = (m[1], int(m[2]), int(m[3] or 12), m[4]), None
            tables[key] = {}
        elif key and line.startswith("| model |"):
            header = [c.strip() for c in line.strip("|").split("|")]
        elif key and header and line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            name = cells[0].split("`")[1]
            tables[key][name] = dict(zip(header, cells))
    return tables


def test_the_expected_experiments_are_committed():
    for name in ("table1-cpu", "horizon36-cpu", "templates-cpu", "ecosystem-steps-cpu", "equal-time-cpu",
                 "ten-epochs"):
        assert name in EXPERIMENTS


@pytest.mark.parametrize("folder", EXPERIMENTS)
def test_every_published_table_cell_is_the_mean_of_its_units(folder):
    """Recomputed here from the per-unit CSV (mean and sample std over seeds), independently of the bench."""
    units = _units(folder)
    tables = _published_tables(folder)
    assert tables, f"{folder}/README.md has no table"
    checked = 0
    for (protocol, horizon, window, label), rows in tables.items():
        for name, cells in rows.items():
            group = [u for u in units if u["row"] == name and u["protocol"] == protocol and int(u["horizon"]) == horizon
                     and int(u["window"]) == window and u["budget_label"] == label]
            assert group, f"{folder}: row {name!r} of table {label} has no unit in results.csv"
            assert int(cells["n"]) == len(group)
            for title, cell in cells.items():
                m = re.match(r"(MAE|RMSE|MAPE%)@(\w+)$", title)
                if not m:
                    continue
                col = {"MAE": "mae", "RMSE": "rmse", "MAPE%": "mape"}[m[1]] + "@" + m[2]
                values = [float(u[col]) for u in group]
                text = cell.strip("*")
                want = f"{statistics.mean(values):.3f}"
                if len(values) > 1:
                    want += f" ± {statistics.stdev(values):.3f}"
                assert text == want, f"{folder} {label} {name} {col}: table {text}, results.csv {want}"
                checked += 1
    assert checked >= 12


@pytest.mark.parametrize("folder", EXPERIMENTS)
def test_the_archive_holds_every_unit_of_results_csv(folder):
    archived = {uid: json.loads(raw) for uid, raw in iter_archived_results(RESULTS / folder)}
    units = _units(folder)
    assert {u["unit_id"] for u in units} == set(archived)
    for u in units:
        assert float(u["mae@3"]) == pytest.approx(archived[u["unit_id"]]["metrics"]["mae@3"], rel=1e-12)


def _unit(r: dict) -> Unit:
    s = r["settings"]
    return Unit(r["model"], "model", r["protocol"], r["horizon"], r.get("window", 12), r["budget"], r["seed"],
                tuple(sorted((s.get("overrides") or {}).items())),
                tuple(sorted((s.get("model_overrides") or {}).items())), r.get("dataset", "metr_la"))


@pytest.mark.parametrize("folder", EXPERIMENTS)
def test_every_committed_zoo_result_is_a_run_of_todays_entry(folder):
    results = [json.loads(raw) for _, raw in iter_archived_results(RESULTS / folder)]
    models = [r for r in results if r.get("kind") == "model" and ":" not in r["model"]]
    assert results, f"no results in {folder}"
    stale = {r["unit_id"]: model_changes(_unit(r), r) for r in models}
    assert not {k: v for k, v in stale.items() if v}
