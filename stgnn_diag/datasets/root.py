"""Where a data set's files live: data-root resolution.

Order (the first one that is *given* is the target; it is never silently swapped for another):

1. the explicit ``root`` argument;
2. the environment variable ``STGNN_DIAG_DATA``;
3. the default folder: the repository's top-level ``datasets/`` (in a source checkout), or
   ``$XDG_CACHE_HOME/stgnn_diag`` (default ``~/.cache/stgnn_diag``) for an installed package;
4. if the target lacks the files, a download into ``<target>/<folder>`` (``metr_la``, ``pems_bay``):
   from a mirror of the DCRNN layout when a base URL is given (``base_url`` or ``STGNN_DIAG_DATA_URL``;
   see :func:`stgnn_diag.datasets.download.download_layout`), otherwise from the data set's public
   source (tsl's archive, :mod:`stgnn_diag.datasets.tsl_archive`; only missing files are added). A root
   from 1. or 2. that does not exist is an error naming it (a typo creates nothing), unless ``base_url``
   asks for a download.

A *data root* is the folder that CONTAINS the data set folders (so ``STGNN_DIAG_DATA=/work/shared/data``
works); a folder that directly holds one data set's files (``metr-la.npz``, ``sensor_graph/``) is
accepted too. Use :func:`stgnn_diag.datasets.resolve_data_root` (by data set name) to call this.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Optional, Union

from .layout import Layout

ENV_ROOT = "STGNN_DIAG_DATA"
ENV_URL = "STGNN_DIAG_DATA_URL"

PathLike = Union[str, os.PathLike]

#: ``fetch(folder, base_url or None, progress)``: download a data set's missing files into ``folder``.
Fetch = Callable[[Path, Optional[str], bool], None]


class DataNotFoundError(FileNotFoundError):
    """A data set is not where it was looked for and could not be downloaded there (the message says where
    it looked, what is missing, why the download failed and how to point the library at the files)."""


def default_data_root() -> Path:
    """The default data root.

    Returns:
        ``<repo>/datasets`` when this package runs from a source checkout (a ``setup.cfg`` or
        ``pyproject.toml`` next to the ``stgnn_diag`` folder), else ``$XDG_CACHE_HOME/stgnn_diag``
        (``~/.cache/stgnn_diag`` when the variable is unset).
    """
    repo = Path(__file__).resolve().parents[2]
    if (repo / "setup.cfg").is_file() or (repo / "pyproject.toml").is_file():
        return repo / "datasets"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "stgnn_diag"


def layout_dir(root: PathLike, layout: Layout) -> Path:
    """The data set folder for a data root: ``root`` itself if it is one (named like the layout's folder,
    or holding its speed file or a ``sensor_graph/``), else ``root / layout.folder`` (may not exist yet)."""
    root = Path(root).expanduser()
    return root if layout.looks_like(root) else root / layout.folder


def _target_root(root: Optional[PathLike]) -> tuple:
    if root is not None:
        return Path(root).expanduser(), "the root argument"
    env = os.environ.get(ENV_ROOT)
    if env:
        return Path(env).expanduser(), f"${ENV_ROOT}"
    return default_data_root(), "the default data folder"


def find_data_root(root: Optional[PathLike], layout: Layout, fetch: Fetch, *, title: str, download: bool = True,
                   base_url: Optional[str] = None, progress: bool = True) -> Path:
    """Find (or download) a data set and return its data root (see the module doc for the order).

    Args:
        root: explicit data root; takes precedence over ``$STGNN_DIAG_DATA`` and the default.
        layout: the data set's files.
        fetch: downloads the missing files (called with the base URL, or ``None`` for the public source).
        title: the data set's display name, for messages (``"METR-LA"``).
        download: download the files into the target when they are missing.
        base_url: URL of a folder serving the DCRNN layout (overrides ``$STGNN_DIAG_DATA_URL``).
        progress: show a tqdm progress bar while downloading.

    Returns:
        The data root (a folder for which :func:`layout_dir` holds the complete file set).

    Raises:
        FileNotFoundError: files missing and no download possible (says what is missing and what to do);
            or a root given by argument / environment that does not exist. :class:`DataNotFoundError`
            (a ``FileNotFoundError``) when the download failed; no folder it created is left behind.
    """
    target, source = _target_root(root)
    folder = layout_dir(target, layout)
    if layout.is_complete(folder):
        return target
    # a typo in $STGNN_DIAG_DATA or root= must not create folders and start a download there; an explicit
    # mirror (base_url=...) is a request to download, into a new folder too
    if download and base_url is None and source != "the default data folder" and not target.exists():
        raise FileNotFoundError(f"The data root {target} (from {source}) does not exist. Point it at the folder "
                                f"that contains {layout.folder}/ (e.g. STGNN_DIAG_DATA=../shared/data), or create "
                                f"it to download {title} into it.")
    if download:
        url = base_url or os.environ.get(ENV_URL)
        created = [p for p in (folder, *folder.parents) if not p.exists()]
        try:
            fetch(folder, url, progress)
        except OSError as err:  # DownloadError (no network, HTTP error) and disk errors
            for p in created:  # leave no empty folders behind (the deepest first)
                if p.is_dir() and not any(p.iterdir()):
                    p.rmdir()
            missing = ", ".join(layout.missing_files(folder))
            raise DataNotFoundError(
                f"{title} is not in {folder} (chosen from {source}; missing: {missing}) and could not be "
                f"downloaded: {err}. If you have the files, point ${ENV_ROOT} (or --data-root / root=...) at the "
                f"folder that contains {layout.folder}/ (e.g. export STGNN_DIAG_DATA=../shared/data); "
                f"see datasets/README.md.") from err
        return target
    missing = ", ".join(layout.missing_files(folder))
    raise FileNotFoundError(
        f"{title} data not found in {folder} (chosen from {source}); missing: {missing}. "
        f"Point ${ENV_ROOT} (or root=...) at a folder containing {layout.folder}/ (e.g. "
        f"STGNN_DIAG_DATA=../shared/data), copy the DCRNN files there (see datasets/README.md), "
        f"or pass download=True to fetch them."
    )
