"""Verified, atomic downloads (urllib only) of the METR-LA files.

Every file is streamed into a temporary file in its destination folder, checked against its pinned
sha256, and only then put in place (:func:`stgnn_diag._io.atomic_write`). On any failure (network
error, hash mismatch) the temporary file is deleted and an existing destination file is left as
it was: nothing half-written remains.
"""
from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterable, Optional

from .._io import atomic_write
from . import files
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


def download_metr_la(
    folder: PathLike,
    base_url: Optional[str] = None,
    *,
    names: Iterable[str] = files.DOWNLOAD_FILES,
    overwrite: bool = False,
    progress: bool = True,
    timeout: float = 60.0,
) -> Path:
    """Download the METR-LA files (DCRNN layout) into ``folder``, each verified against its pin.

    Args:
        folder: the METR-LA folder to fill (e.g. ``<root>/metr_la``).
        base_url: URL of a folder serving ``metr-la.npz`` and ``sensor_graph/...``; defaults to
            ``$STGNN_DIAG_DATA_URL``.
        names: relative paths to fetch (default: npz, adj_mx.pkl, sensor ids, locations; add
            ``"metr-la.h5"`` to fetch the HDF5 copy too).
        overwrite: re-download files that are already present and valid.

    Returns:
        ``folder`` as a :class:`~pathlib.Path`.

    Raises:
        ValueError: no base URL, or a name without a pinned hash.
        ChecksumError / DownloadError: see :func:`download_file`.
    """
    base_url = base_url or os.environ.get(ENV_URL)
    if not base_url:
        raise ValueError(
            f"no download source: pass base_url=... or set ${ENV_URL} to a URL serving the DCRNN "
            f"layout ({', '.join(files.DOWNLOAD_FILES)})")
    folder = Path(folder)
    for rel in names:
        if rel not in files.SHA256:
            raise ValueError(f"no pinned sha256 for {rel!r}; known files: {sorted(files.SHA256)}")
        url = base_url.rstrip("/") + "/" + rel
        download_file(url, folder / rel, files.SHA256[rel], overwrite=overwrite, progress=progress,
                      timeout=timeout)
    return folder
