"""Where the METR-LA files live: data-root resolution.

Order (the first one that is *given* is the target; it is never silently swapped for another):

1. the explicit ``root`` argument;
2. the environment variable ``STGNN_DIAG_DATA``;
3. the default folder: the repository's top-level ``datasets/`` (in a source checkout), or
   ``$XDG_CACHE_HOME/stgnn_diag`` (default ``~/.cache/stgnn_diag``) for an installed package;
4. if the target lacks the files, a download into ``<target>/metr_la``: from a mirror of the
   DCRNN layout when a base URL is given (``base_url`` or ``STGNN_DIAG_DATA_URL``; see
   :func:`stgnn_diag.datasets.download.download_metr_la`, sha256-checked), otherwise from tsl's
   public archive (:func:`stgnn_diag.datasets.tsl_archive.download_tsl_metr_la`, checked against the
   digest of its first download; only missing files are added). A root from 1. or 2. that does not
   exist is an error naming it (a typo creates nothing), unless ``base_url`` asks for a download.

A *data root* is the folder that CONTAINS ``metr_la/`` (so ``STGNN_DIAG_DATA=/work/shared/data``
works); a folder that directly holds the METR-LA files (``metr-la.npz``, ``sensor_graph/``) is
accepted too.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Union

from .files import DATASET_DIR, is_complete, missing_files, speed_file

ENV_ROOT = "STGNN_DIAG_DATA"
ENV_URL = "STGNN_DIAG_DATA_URL"

PathLike = Union[str, os.PathLike]


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


def dataset_dir(root: PathLike) -> Path:
    """The METR-LA folder for a data root.

    Args:
        root: a data root (containing ``metr_la/``) or the METR-LA folder itself.

    Returns:
        ``root`` itself if it directly holds a speed file or is named ``metr_la``, else
        ``root / "metr_la"`` (which may not exist yet).
    """
    root = Path(root).expanduser()
    if root.name == DATASET_DIR or speed_file(root) is not None or (root / "sensor_graph").is_dir():
        return root
    return root / DATASET_DIR


def _target_root(root: Optional[PathLike]) -> tuple:
    if root is not None:
        return Path(root).expanduser(), "the root argument"
    env = os.environ.get(ENV_ROOT)
    if env:
        return Path(env).expanduser(), f"${ENV_ROOT}"
    return default_data_root(), "the default data folder"


def resolve_data_root(
    root: Optional[PathLike] = None,
    *,
    download: bool = True,
    base_url: Optional[str] = None,
    progress: bool = True,
) -> Path:
    """Find (or download) the METR-LA data and return its data root.

    Args:
        root: explicit data root; takes precedence over ``$STGNN_DIAG_DATA`` and the default.
        download: download the files into the target when they are missing: from a mirror of
            the DCRNN layout when a base URL is given (``base_url`` or ``$STGNN_DIAG_DATA_URL``;
            every file sha256-checked), else from tsl's public archive (see
            :mod:`stgnn_diag.datasets.tsl_archive`; no published digest to check the zip against).
        base_url: URL of a folder serving the DCRNN layout (overrides ``$STGNN_DIAG_DATA_URL``).
        progress: show a tqdm progress bar while downloading.

    Returns:
        The data root (a folder for which :func:`dataset_dir` holds the complete file set).

    Raises:
        FileNotFoundError: files missing and no download possible (says what is missing and what
            to do).
        ValueError: a downloaded file failed its sha256 check.
    """
    target, source = _target_root(root)
    folder = dataset_dir(target)
    if is_complete(folder):
        return target
    # a typo in $STGNN_DIAG_DATA or root= must not create folders and start a download there; an explicit
    # mirror (base_url=...) is a request to download, into a new folder too
    if download and base_url is None and source != "the default data folder" and not target.exists():
        raise FileNotFoundError(f"The data root {target} (from {source}) does not exist. Point it at the folder "
                                f"that contains metr_la/ (e.g. STGNN_DIAG_DATA=../shared/data), or create it to "
                                f"download METR-LA into it.")
    url = base_url or os.environ.get(ENV_URL)
    if download and url:
        from .download import download_metr_la

        download_metr_la(folder, base_url=url, progress=progress)
        return target
    if download:
        # No mirror configured: the public source, tsl's METR-LA archive (the DCRNN speed file plus
        # raw road distances, from which adj_mx is rebuilt with DCRNN's recipe). Needs PyTables.
        from . import tsl_archive

        print(f"METR-LA not found in {folder}; downloading tsl's public archive "
              f"({tsl_archive.TSL_METR_LA_URL}) and building the DCRNN layout there.")
        tsl_archive.download_tsl_metr_la(folder, url=tsl_archive.TSL_METR_LA_URL, progress=progress)
        return target
    missing = ", ".join(missing_files(folder))
    raise FileNotFoundError(
        f"METR-LA data not found in {folder} (chosen from {source}); missing: {missing}. "
        f"Point ${ENV_ROOT} (or root=...) at a folder containing metr_la/ (e.g. "
        f"STGNN_DIAG_DATA=../shared/data), copy the DCRNN files there (see datasets/README.md), "
        f"or pass download=True to fetch them."
    )
