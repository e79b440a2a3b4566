"""Verified, atomic downloads (urllib only) of a data set's files.

Every file is streamed into a temporary file in its destination folder, checked against its pinned
sha256, and only then put in place (:func:`stgnn_diag._io.atomic_write`). On any failure (network
error, hash mismatch) the temporary file is deleted and an existing destination file is left as
it was: nothing half-written remains.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Dict, Iterable, Optional

from .._io import atomic_write, write_json
from .layout import Layout
from .root import ENV_URL, PathLike

_CHUNK = 1 << 20
_USER_AGENT = "stgnn-diag-downloader"


class ChecksumError(ValueError):
    """A downloaded file does not have its pinned sha256."""


class DownloadError(OSError):
    """A file could not be fetched (HTTP error, unreachable server, ...)."""


def sha256_file(path: PathLike, chunk_size: int = _CHUNK) -> str:
    """Hex sha256 of a file, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk_size), b""):
            h.update(block)
    return h.hexdigest()


def download_file(
    url: str,
    dest: PathLike,
    sha256: Optional[str] = None,
    *,
    overwrite: bool = False,
    progress: bool = True,
    timeout: float = 60.0,
    chunk_size: int = _CHUNK,
) -> Path:
    """Download ``url`` to ``dest`` atomically, verifying its sha256.

    Args:
        url: ``http(s)://`` or ``file://`` URL.
        dest: destination path (parent folders are created).
        sha256: expected hex digest; ``None`` skips verification (not recommended).
        overwrite: download even if ``dest`` already exists with the right hash. A failed
            download never touches an existing ``dest``.
        progress: show a tqdm progress bar.
        timeout: socket timeout in seconds.

    Returns:
        ``dest`` as a :class:`~pathlib.Path`.

    Raises:
        ChecksumError: (a ``ValueError``) the downloaded bytes have another sha256; says which
            file, the expected and the obtained digest. No file is left behind.
        DownloadError: (an ``OSError``) the server could not be reached or answered an error.
    """
    dest = Path(dest)
    if dest.is_file() and not overwrite:
        if sha256 is None or sha256_file(dest) == sha256:
            return dest

    def fetch(tmp: str) -> None:
        digest = hashlib.sha256()
        request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
        try:
            response = urllib.request.urlopen(request, timeout=timeout)
        except urllib.error.HTTPError as err:
            raise DownloadError(f"downloading {dest.name} from {url} failed: HTTP {err.code} {err.reason}") from err
        except (urllib.error.URLError, OSError) as err:
            reason = getattr(err, "reason", err)
            raise DownloadError(f"downloading {dest.name} from {url} failed: {reason}") from err
        with response, open(tmp, "wb") as out:
            total = response.headers.get("Content-Length")
            bar = _progress_bar(dest.name, int(total) if total and total.isdigit() else None, progress)
            try:
                for block in iter(lambda: response.read(chunk_size), b""):
                    out.write(block)
                    digest.update(block)
                    bar.update(len(block))
            finally:
                bar.close()
        got = digest.hexdigest()
        if sha256 is not None and got != sha256.lower():
            raise ChecksumError(
                f"sha256 mismatch for {dest.name} downloaded from {url}: expected {sha256}, got {got}. "
                f"The download was discarded (nothing written to {dest}); the server copy is corrupt "
                f"or a different release."
            )

    return atomic_write(dest, fetch)


def _progress_bar(name: str, total: Optional[int], enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=name,
                disable=not enabled, leave=False)


def download_layout(
    folder: PathLike,
    layout: Layout,
    base_url: Optional[str] = None,
    *,
    names: Optional[Iterable[str]] = None,
    overwrite: bool = False,
    progress: bool = True,
    timeout: float = 60.0,
) -> Path:
    """Download a data set's files (DCRNN layout) from a mirror into ``folder``.

    A file with a pinned sha256 (``layout.sha256``) is verified against it. A layout with no published
    digests is trusted on first use: the digests of the first download are recorded in
    ``<folder>/.sha256.json`` (:func:`record_digests`) and checked on every later load
    (:func:`check_recorded_digests`).

    Args:
        folder: the data set folder to fill (e.g. ``<root>/metr_la``).
        layout: the data set's files.
        base_url: URL of a folder serving the layout; defaults to ``$STGNN_DIAG_DATA_URL``.
        names: relative paths to fetch (default: ``layout.download_files``; add the h5 to fetch it too).
        overwrite: re-download files that are already present and valid.

    Returns:
        ``folder`` as a :class:`~pathlib.Path`.

    Raises:
        ValueError: no base URL, or (for a pinned layout) a name without a pinned hash.
        ChecksumError / DownloadError: see :func:`download_file`.
    """
    base_url = base_url or os.environ.get(ENV_URL)
    names = tuple(layout.download_files if names is None else names)
    if not base_url:
        raise ValueError(
            f"no download source: pass base_url=... or set ${ENV_URL} to a URL serving the DCRNN "
            f"layout ({', '.join(layout.download_files)})")
    folder = Path(folder)
    if layout.sha256:
        unknown = [rel for rel in names if rel not in layout.sha256]
        if unknown:
            raise ValueError(f"no pinned sha256 for {unknown[0]!r}; known files: {sorted(layout.sha256)}")
    recorded = read_recorded_digests(folder)
    fetched = []
    for rel in names:
        expected = layout.sha256.get(rel) or recorded.get(rel)
        was_there = (folder / rel).is_file()
        download_file(base_url.rstrip("/") + "/" + rel, folder / rel, expected, overwrite=overwrite,
                      progress=progress, timeout=timeout)
        if not was_there or overwrite:
            fetched.append(rel)
    if not layout.sha256:
        record_digests(folder, fetched, source=base_url)
    return folder


#: The digests of files downloaded without a published pin (trust on first use), in the data set folder.
DIGEST_RECORD = ".sha256.json"


def read_recorded_digests(folder: PathLike) -> Dict[str, str]:
    """The digests recorded at the first download into ``folder`` (relative path -> hex); ``{}`` if none."""
    path = Path(folder) / DIGEST_RECORD
    return json.loads(path.read_text()).get("sha256", {}) if path.is_file() else {}


def record_digests(folder: PathLike, names: Iterable[str], *, source: str) -> None:
    """Record the sha256 of ``names`` (relative paths in ``folder``) unless already recorded: later loads
    check them (:func:`check_recorded_digests`)."""
    folder = Path(folder)
    digests = read_recorded_digests(folder)
    new = {rel: sha256_file(folder / rel) for rel in names if rel not in digests and (folder / rel).is_file()}
    if not new:
        return
    write_json(folder / DIGEST_RECORD, {
        "sha256": {**digests, **new}, "source": source, "recorded": time.strftime("%Y-%m-%d %H:%M:%S"),
        "note": "trust on first use: no digest is published for these files; every load checks them"})


def check_recorded_digests(folder: PathLike) -> None:
    """Raise :class:`ChecksumError` if a file recorded at its first download has changed since.

    A file of the record that is absent is not checked (the loader says what is missing)."""
    folder = Path(folder)
    for rel, expected in read_recorded_digests(folder).items():
        path = folder / rel
        if path.is_file():
            got = sha256_file(path)
            if got != expected:
                raise ChecksumError(
                    f"{path} changed since its first download: sha256 {got}, recorded {expected} (in "
                    f"{folder / DIGEST_RECORD}). Replace it with the downloaded file, or delete the record "
                    f"entry if you changed it on purpose.")
