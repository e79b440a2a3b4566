"""A results folder as outputs: the page with its kept notes, the per-unit CSV, the archive of the raw files,
and a grid that finds its archived units done."""
import csv
import io
import shutil
import tarfile

import pytest

from stgnn_diag.bench import runner
from stgnn_diag.bench.archive import ARCHIVE, archived_units, pack_units, restore_units, unit_folders
from stgnn_diag.cli.bench import grid_from_args
from stgnn_diag.bench.index import write_index
from stgnn_diag.bench.page import NOTES_END, NOTES_START, record_command
from stgnn_diag.bench.report import write_report
from stgnn_diag.bench.runner import run_grid
from stgnn_diag.bench.store import RESULT_JSON

from .synthetic import make_result, write_results


def _folder(tmp_path):
    return write_results(tmp_path / "exp", make_result("tts_attn_none", 0, {"mae@3": 2.5}),
                         make_result("tts_attn_none", 1, {"mae@3": 3.5}),
                         make_result("last_value", None, {"mae@3": 4.0}, kind="baseline"))


def test_the_report_writes_the_layout_and_packs_the_units(tmp_path):
    res = _folder(tmp_path)
    (res / unit_folders(res)[1].name / "run" / "checkpoints").mkdir(parents=True)
    (res / unit_folders(res)[1].name / "run" / "checkpoints" / "last.ckpt").write_bytes(b"weights")
    files = write_report(res)
    assert files.markdown == res / "README.md" and files.units_csv == res / "results.csv"
    assert (res / "tables.csv").is_file() and files.archive == res / ARCHIVE
    with tarfile.open(res / ARCHIVE) as tar:
        names = tar.getnames()
    assert sorted(archived_units(res)) == sorted(u.name for u in unit_folders(res))
    assert not any("checkpoints" in n or n.endswith(".ckpt") for n in names)
    rows = list(csv.DictReader(open(res / "results.csv")))
    assert len(rows) == 3  # one per unit, not per table row
    assert sorted(float(r["mae@3"]) for r in rows) == [2.5, 3.5, 4.0]
    assert {r["seed"] for r in rows if r["kind"] == "model"} == {"0", "1"}
    assert "3.000 ± 0.707" in (res / "README.md").read_text()


def test_a_folder_holding_only_its_outputs_rebuilds_the_same_files(tmp_path):
    res = _folder(tmp_path)
    write_report(res)
    before = {n: (res / n).read_bytes() for n in ("README.md", "results.csv", "tables.csv", ARCHIVE)}
    for u in unit_folders(res):
        shutil.rmtree(u)
    assert not unit_folders(res)
    write_report(res)  # unpacks the archive first
    assert len(unit_folders(res)) == 3
    assert {n: (res / n).read_bytes() for n in before} == before  # deterministic: no timestamps in the archive


def test_the_notes_are_kept_and_the_rest_is_rewritten(tmp_path):
    res = _folder(tmp_path)
    (res / "README.md").write_text(f"{NOTES_START}\n# My question\n\nWhat it shows.\n{NOTES_END}\n\nstale table\n")
    record_command(res, "stgnn-diag bench --models tts_attn_none --results exp")
    record_command(res, "stgnn-diag bench --models tts_attn_none --results exp")  # recorded once
    write_report(res)
    text = (res / "README.md").read_text()
    assert text.startswith(f"{NOTES_START}\n# My question\n\nWhat it shows.\n{NOTES_END}")
    assert "stale table" not in text and text.count("stgnn-diag bench --models tts_attn_none") == 1
    assert "## Tables" in text and "](plots/" in text


def test_restore_leaves_a_folder_already_there_alone(tmp_path):
    res = _folder(tmp_path)
    pack_units(res)
    first, second = unit_folders(res)[:2]
    shutil.rmtree(first)
    (second / RESULT_JSON).unlink()  # a unit being rerun: what is on disk is newer than the archive
    assert restore_units(res) == [first.name]
    assert (first / RESULT_JSON).is_file() and not (second / RESULT_JSON).exists()


def test_restore_refuses_members_outside_the_folder(tmp_path):
    res = tmp_path / "exp"
    res.mkdir()
    with tarfile.open(res / ARCHIVE, "w:gz") as tar:
        info = tarfile.TarInfo("unit/../../evil/result.json")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"{}"))
    with pytest.raises(tarfile.FilterError):
        restore_units(res)
    assert not (tmp_path / "evil").exists()


def test_the_index_lists_each_experiment_with_its_headline(tmp_path):
    root = tmp_path / "results"
    res = write_results(root / "exp", make_result("tts_attn_none", 0, {"mae@12": 3.2}),
                        make_result("tas_attn_none", 0, {"mae@12": 3.1}),
                        make_result("historical_average", None, {"mae@12": 2.0}, kind="baseline"))
    (res / "README.md").write_text(f"{NOTES_START}\n# Mine\n\n**Question.** Which is best?\n{NOTES_END}\n")
    write_report(res)
    (root / "summary.md").write_text("# Summary\n\nOld probes.\n")
    text = write_index(root).read_text()
    assert "| [Mine](exp/README.md) | Which is best? | `tas_attn_none`" in text  # a trained row, not the baseline
    assert "MAE 5.000 / 5.000 / 3.100 at steps 3 / 6 / 12" in text
    assert "| [Summary](summary.md) | Old probes. | — |" in text


def test_a_grid_finds_its_archived_units_done(tiny_grid, tmp_path, monkeypatch):
    results, args = tiny_grid
    copy = tmp_path / "results"
    shutil.copytree(results, copy, ignore=shutil.ignore_patterns("checkpoints"))
    assert (copy / ARCHIVE).is_file()  # the bench's report packed it
    for u in unit_folders(copy):
        shutil.rmtree(u)
    monkeypatch.setattr(runner, "run_unit", lambda *a, **k: pytest.fail("run_unit called for an archived unit"))
    out = run_grid(grid_from_args(args).units(), copy, progress=False)
    assert out.outcomes and all(o.status == "skipped" for o in out.outcomes)


def test_the_bench_records_its_command_on_the_page(tmp_path, metr_la_root):
    from stgnn_diag.cli import main

    res = tmp_path / "exp"
    argv = ["bench", "--models", "last_value", "--max-windows", "60", "--results", str(res), "--data-root",
            str(metr_la_root), "--no-progress"]
    assert main(argv) == 0
    assert main(argv) == 0  # the same command again: recorded once
    text = (res / "README.md").read_text()
    assert text.count(f"stgnn-diag bench --models last_value --max-windows 60 --results {res}") == 1
    assert (res / ARCHIVE).is_file() and len(list(csv.DictReader(open(res / "results.csv")))) == 1
