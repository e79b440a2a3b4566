"""Atomic file writes: the one way stgnn_diag puts a file in place (results, weights, data, downloads).

A file is written to a temporary name beside its destination, flushed to disk, and only then renamed
over the destination (``os.replace`` is atomic on POSIX and Windows). An interruption or an error at
any point leaves the destination as it was (absent, or the previous version) and no temporary file.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Union

PathLike = Union[str, Path]


def _fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (POSIX; a no-op where directories cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(dest: PathLike, write: Callable[[str], None]) -> Path:
    """Create or replace ``dest`` with what ``write(tmp_path)`` writes to a temporary file beside it.

    ``write`` may raise (e.g. a failed checksum): then ``dest`` is untouched and the temporary file is
    removed. Parent folders are created. Returns ``dest``.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    os.close(fd)
    try:
        write(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(dest.parent)
    return dest


def write_bytes(dest: PathLike, data: bytes) -> Path:
    """:func:`atomic_write` of ``data``."""
    return atomic_write(dest, lambda tmp: Path(tmp).write_bytes(data))


def write_json(dest: PathLike, data: Any) -> Path:
    """:func:`atomic_write` of ``data`` as indented JSON with sorted keys (non-JSON values as ``str``)."""
    return atomic_write(dest, lambda tmp: Path(tmp).write_text(
        json.dumps(data, indent=2, sort_keys=True, default=str) + "\n"))
