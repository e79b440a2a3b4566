"""One compressed archive per results folder: the per-unit raw files, packed and unpacked.

An experiment folder keeps its outputs (``README.md``, ``results.csv``, ``plots/``) in the open and every unit's
raw files (``result.json``, ``run/config.json``, ``run/metrics.csv``, Lightning's ``logs/``, ...) in
``units.tar.gz``. :func:`pack_units` writes the archive from the unit folders (units that are only in the archive
stay in it); :func:`restore_units` puts back the folders of archived units that are missing, so that a fresh
clone's ``stgnn-diag bench`` finds them done and skips them, and ``--report-only`` can rebuild every table.

The archive is deterministic (sorted members, no timestamps, no owners): packing the same units twice gives
the same bytes, so regenerating a page does not change a committed file.
"""
from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path
from typing import Dict, Iterator, List, Tuple, Union

__all__ = ["ARCHIVE", "archived_units", "iter_archived_results", "pack_units", "restore_units", "unit_folders"]

#: The archive's file name inside a results folder.
ARCHIVE = "units.tar.gz"

_RESULT = "result.json"
_SKIP_DIRS = {"checkpoints", "__pycache__"}
_SKIP_NAMES = {".lock"}


def unit_folders(results_dir: Union[str, Path]) -> List[Path]:
    """The unit folders of ``results_dir``: its sub-folders holding a ``result.json`` or an ``error.json``."""
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        return []
    return sorted(p for p in results_dir.iterdir()
                  if p.is_dir() and ((p / _RESULT).is_file() or (p / "error.json").is_file()))


def _unit_files(unit: Path) -> Iterator[Path]:
    for p in sorted(unit.rglob("*")):
        rel = p.relative_to(unit)
        if p.is_file() and not _SKIP_DIRS.intersection(rel.parts) and p.name not in _SKIP_NAMES \
                and p.suffix != ".ckpt":
            yield p


def _read_archive(path: Path) -> Dict[str, bytes]:
    if not path.is_file():
        return {}
    out = {}
    with tarfile.open(path, "r:gz") as tar:
        for m in tar.getmembers():
            if m.isfile():
                out[m.name] = tar.extractfile(m).read()
    return out


def archived_units(results_dir: Union[str, Path]) -> List[str]:
    """The unit ids held in ``<results_dir>/units.tar.gz`` (empty without an archive)."""
    path = Path(results_dir) / ARCHIVE
    if not path.is_file():
        return []
    with tarfile.open(path, "r:gz") as tar:
        return sorted({m.name.split("/", 1)[0] for m in tar.getmembers() if "/" in m.name})


def iter_archived_results(results_dir: Union[str, Path]) -> Iterator[Tuple[str, bytes]]:
    """``(unit id, result.json bytes)`` for every unit of the archive, read without extracting anything."""
    path = Path(results_dir) / ARCHIVE
    with tarfile.open(path, "r:gz") as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            if m.isfile() and m.name.count("/") == 1 and m.name.endswith("/" + _RESULT):
                yield m.name.split("/", 1)[0], tar.extractfile(m).read()


def pack_units(results_dir: Union[str, Path]) -> Path:
    """Write ``<results_dir>/units.tar.gz`` from the unit folders (without checkpoints and locks).

    A unit present as a folder replaces its archived copy entirely; archived units without a folder are kept.

    Returns:
        The archive's path.
    """
    results_dir = Path(results_dir)
    path = results_dir / ARCHIVE
    members = _read_archive(path)
    folders = unit_folders(results_dir)
    present = {u.name for u in folders}
    members = {k: v for k, v in members.items() if k.split("/", 1)[0] not in present}
    for unit in folders:
        for f in _unit_files(unit):
            members[f"{unit.name}/{f.relative_to(unit).as_posix()}"] = f.read_bytes()
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for name in sorted(members):
                info = tarfile.TarInfo(name)
                info.size, info.mode, info.mtime = len(members[name]), 0o644, 0
                tar.addfile(info, io.BytesIO(members[name]))
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(buf.getvalue())
    tmp.replace(path)
    return path


def restore_units(results_dir: Union[str, Path]) -> List[str]:
    """Extract every archived unit that has no folder (a folder already there, finished or holding a partial run,
    is left as it is: what is on disk is newer than the archive). Members are extracted with tarfile's ``data`` filter:
    no absolute paths, no links out of the folder, no device files.

    Returns:
        The unit ids restored.
    """
    results_dir = Path(results_dir)
    path = results_dir / ARCHIVE
    if not path.is_file():
        return []
    restored = []
    with tarfile.open(path, "r:gz") as tar:
        members = tar.getmembers()
        wanted = {m.name.split("/", 1)[0] for m in members if "/" in m.name}
        wanted = {u for u in wanted if not (results_dir / u).exists()}
        todo = [m for m in members if m.name.split("/", 1)[0] in wanted]
        if todo:
            tar.extractall(results_dir, members=todo, filter="data")
            restored = sorted(wanted)
    return restored
