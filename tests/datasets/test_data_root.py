"""Data-root resolution order: explicit root > $STGNN_DIAG_DATA > default folder > download."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from stgnn_diag.datasets import files, resolve_data_root
from stgnn_diag.datasets import root as root_mod


@pytest.fixture
def roots(tmp_path, make_tiny, monkeypatch):
    """Three complete tiny roots (explicit / env / default) and an isolated environment."""
    out = {}
    for seed, name in enumerate(("explicit", "env", "default")):
        make_tiny(tmp_path / name / "metr_la", seed=seed)
        out[name] = tmp_path / name
    monkeypatch.setenv("STGNN_DIAG_DATA", str(out["env"]))
    monkeypatch.delenv("STGNN_DIAG_DATA_URL", raising=False)
    monkeypatch.setattr(root_mod, "default_data_root", lambda: out["default"])
    return out


def test_explicit_root_wins(roots):
    assert resolve_data_root(roots["explicit"]) == roots["explicit"]
    assert resolve_data_root(str(roots["explicit"])) == roots["explicit"]


def test_env_var_beats_default(roots):
    assert resolve_data_root() == roots["env"]


def test_default_when_no_env(roots, monkeypatch):
    monkeypatch.delenv("STGNN_DIAG_DATA")
    assert resolve_data_root() == roots["default"]


def test_download_into_empty_default(roots, monkeypatch, tmp_path, http_folder, make_tiny):
    served, url = http_folder
    make_tiny(served / "metr_la", seed=5)
    # the tiny files are not the pinned ones: the checksum refuses them, nothing is kept
    monkeypatch.delenv("STGNN_DIAG_DATA")
    empty = tmp_path / "empty_default"
    monkeypatch.setattr(root_mod, "default_data_root", lambda: empty)
    monkeypatch.setenv("STGNN_DIAG_DATA_URL", url + "/metr_la")
    with pytest.raises(ValueError, match="sha256 mismatch"):
        resolve_data_root(progress=False)
    assert not any(p.is_file() for p in empty.rglob("*"))


@pytest.mark.realdata
def test_download_when_missing_real_files(monkeypatch, tmp_path, http_folder, link_metr_la):
    served, url = http_folder
    link_metr_la(served / "metr_la", names=files.DOWNLOAD_FILES)
    monkeypatch.delenv("STGNN_DIAG_DATA", raising=False)
    empty = tmp_path / "default"
    monkeypatch.setattr(root_mod, "default_data_root", lambda: empty)
    monkeypatch.setenv("STGNN_DIAG_DATA_URL", url + "/metr_la")
    assert resolve_data_root(progress=False) == empty
    assert files.LAYOUT.is_complete(empty / "metr_la")


def test_missing_without_download_is_clear(tmp_path, monkeypatch):
    monkeypatch.delenv("STGNN_DIAG_DATA_URL", raising=False)
    with pytest.raises(FileNotFoundError) as info:
        resolve_data_root(tmp_path / "nothing", download=False)
    msg = str(info.value)
    assert "STGNN_DIAG_DATA" in msg and "metr-la.npz" in msg and "the root argument" in msg
    assert "download=True" in msg


def test_without_a_mirror_the_public_tsl_archive_is_used(tmp_path, monkeypatch, http_folder, make_tiny):
    """No base URL: resolve_data_root falls back to tsl's archive (served here on 127.0.0.1)."""
    from stgnn_diag.datasets import MetrLA, tsl_archive
    from stgnn_diag.datasets.download import DownloadError
    from stgnn_diag.datasets.root import DataNotFoundError
    from .test_sensor_graph import _tsl_zip

    monkeypatch.delenv("STGNN_DIAG_DATA_URL", raising=False)
    served, url = http_folder
    data, _ = _tsl_zip(served / "download", make_tiny, tmp_path)
    monkeypatch.setattr(MetrLA, "public_archive", replace(tsl_archive.METR_LA_ARCHIVE, url=f"{url}/download"))
    (tmp_path / "fresh").mkdir()
    (tmp_path / "offline").mkdir()
    root = resolve_data_root(tmp_path / "fresh", progress=False)
    assert MetrLA(root, download=False).sensor_ids == data["ids"]
    offline = replace(tsl_archive.METR_LA_ARCHIVE, url="http://127.0.0.1:9/download")
    monkeypatch.setattr(MetrLA, "public_archive", offline)
    with pytest.raises(DataNotFoundError, match=r"could not be downloaded.*export STGNN_DIAG_DATA=") as err:
        resolve_data_root(tmp_path / "offline", progress=False)
    assert isinstance(err.value.__cause__, DownloadError) and "metr-la.npz" in str(err.value)
    assert list((tmp_path / "offline").iterdir()) == []  # no zip, and no empty metr_la/ left behind


def test_explicit_root_is_not_swapped_for_env(roots, tmp_path):
    with pytest.raises(FileNotFoundError):
        resolve_data_root(tmp_path / "nothing", download=False)


def test_root_may_be_the_metr_la_folder(roots):
    folder = roots["explicit"] / "metr_la"
    assert resolve_data_root(folder) == folder
    from stgnn_diag.datasets import MetrLA

    assert MetrLA(folder, download=False).folder == folder


def test_default_root_is_repo_datasets_folder():
    repo = Path(__file__).resolve().parents[2]
    assert root_mod.default_data_root() == repo / "datasets"
    gitignore = (repo / "datasets" / ".gitignore").read_text().split()
    assert "*" in gitignore and "!README.md" in gitignore and "!.gitignore" in gitignore


@pytest.mark.realdata
def test_env_var_pointing_at_shared_data(metr_la_root, monkeypatch):
    monkeypatch.setenv("STGNN_DIAG_DATA", str(metr_la_root))
    assert resolve_data_root(download=False) == metr_la_root


def test_a_root_that_does_not_exist_is_named_and_never_created(tmp_path, monkeypatch):
    monkeypatch.setenv("STGNN_DIAG_DATA", str(tmp_path / "shraed" / "data"))  # a typo
    with pytest.raises(FileNotFoundError, match=r"shraed/data \(from \$STGNN_DIAG_DATA\) does not exist"):
        resolve_data_root(progress=False)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        resolve_data_root(tmp_path / "nope", progress=False)
    assert not (tmp_path / "shraed").exists() and not (tmp_path / "nope").exists()


def test_tsl_archive_fills_only_missing_files_and_is_checked_against_its_first_digest(
        tmp_path, monkeypatch, http_folder, make_tiny):
    """A folder that lacks only the locations file keeps its adj_mx.pkl; the archive's first digest is
    recorded and a changed archive is refused later."""
    from stgnn_diag.datasets import files, tsl_archive
    from stgnn_diag.datasets.download import ChecksumError, sha256_file
    from .test_sensor_graph import _tsl_zip

    served, url = http_folder
    _tsl_zip(served / "download", make_tiny, tmp_path)
    folder = tmp_path / "partial" / "metr_la"
    make_tiny(folder, n_steps=300, n_nodes=5)
    (folder / files.LOCATIONS).unlink()
    adj_before = (folder / files.ADJ_PKL).read_bytes()
    tsl_archive.download_tsl_archive(folder, f"{url}/download", files.LAYOUT, tsl_archive.METR_LA_ARCHIVE,
                                     progress=False)
    assert (folder / files.ADJ_PKL).read_bytes() == adj_before  # never replaced by the rebuild
    assert (folder / files.LOCATIONS).is_file() and files.LAYOUT.is_complete(folder)
    record = json.loads((folder / tsl_archive.RECORD).read_text())
    assert record["sha256"] == sha256_file(served / "download")
    assert not [p for p in folder.iterdir() if p.name.startswith(".tsl-download-")]  # the temporary folder is gone
    with open(served / "download", "ab") as f:  # the archive changes on the server
        f.write(b"tampered")
    (folder / files.LOCATIONS).unlink()
    with pytest.raises(ChecksumError, match="sha256 mismatch"):
        tsl_archive.download_tsl_archive(folder, f"{url}/download", files.LAYOUT, tsl_archive.METR_LA_ARCHIVE,
                                         progress=False)
    assert not (folder / files.LOCATIONS).exists() and (folder / files.ADJ_PKL).read_bytes() == adj_before
