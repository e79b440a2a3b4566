"""The results the README points to are runs of the zoo as it builds today: its bench commands find them done
(an option added to the models since must not turn them into other units)."""
import json
from pathlib import Path

import pytest

from stgnn_diag.bench.grid import Unit
from stgnn_diag.bench.runner import model_changes

RESULTS = Path(__file__).resolve().parents[2] / "models" / "results"
FOLDERS = ("table1-cpu", "horizon36-cpu", "templates-cpu", "ecosystem-cpu", "ecosystem-steps-cpu", "equal-time-cpu")


def _unit(r: dict) -> Unit:
    s = r["settings"]
    return Unit(r["model"], "model", r["protocol"], r["horizon"], r.get("window", 12), r["budget"], r["seed"],
                tuple(sorted((s.get("overrides") or {}).items())),
                tuple(sorted((s.get("model_overrides") or {}).items())), r.get("dataset", "metr_la"))


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_committed_zoo_result_is_a_run_of_todays_entry(folder):
    results = [json.loads(f.read_text()) for f in sorted((RESULTS / folder).glob("*/result.json"))]
    models = [r for r in results if r.get("kind") == "model" and ":" not in r["model"]]
    assert results, f"no results in {folder}"
    stale = {r["unit_id"]: model_changes(_unit(r), r) for r in models}
    assert not {k: v for k, v in stale.items() if v}
