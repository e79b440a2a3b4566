"""Build the DCRNN layout from tsl's public METR-LA archive.

tsl (torch-spatiotemporal 0.9.5, ``tsl/datasets/metr_la.py``) downloads
:data:`TSL_METR_LA_URL`, a zip holding ``metr_la.h5`` (the DCRNN speed file), ``distances_la.csv``
(DCRNN's raw road distances ``from,to,cost``, i.e. ``distances_la_2012.csv``),
``sensor_locations_la.csv`` and ``sensor_ids_la.txt``. It ships no ``adj_mx.pkl``:
:func:`build_from_tsl_archive` recomputes it with DCRNN's recipe (Gaussian kernel, sigma = std of
the finite distances, weights < 0.1 dropped; :func:`~stgnn_diag.datasets.graph.gaussian_kernel_adjacency`).

No sha256 of the archive is published, so it is verified *trust on first use*: the digest of the first
download is recorded in ``<folder>/.tsl_archive.json`` and every later download must match it (or the
``sha256`` argument, when given). The archive is unpacked and converted in a temporary folder, and only the
files the data folder lacks are moved into it: an existing file (e.g. DCRNN's own ``adj_mx.pkl``) is never
replaced by a rebuild. The built files are checked for consistency (shapes, ids) when
:class:`~stgnn_diag.datasets.MetrLA` loads them. The speed file is ``metr-la.h5`` (pandas + PyTables
needed to read it).
"""
from __future__ import annotations

import csv
import io
import json
import os
import pickle
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Dict, Optional

from .._io import write_bytes
from . import files
from .download import download_file, sha256_file
from .graph import distance_matrix, gaussian_kernel_adjacency
from .root import PathLike

#: The archive tsl 0.9.5 downloads for ``tsl.datasets.MetrLA``.
TSL_METR_LA_URL = "https://drive.switch.ch/index.php/s/Z8cKHAVyiDqkzaG/download"

#: The digest of the first download of the archive, in the data folder.
RECORD = ".tsl_archive.json"

_MEMBERS = ("metr_la.h5", "distances_la.csv", "sensor_locations_la.csv", "sensor_ids_la.txt")


def _locations_csv(text: str, ids) -> bytes:
    rows = [r for r in csv.reader(io.StringIO(text)) if r]
    header = [c.strip().lower() for c in rows[0]]
    if {"sensor_id", "latitude", "longitude"} <= set(header):
        recs = [dict(zip(header, r)) for r in rows[1:]]
        table = {str(r["sensor_id"]).strip(): (r["latitude"], r["longitude"]) for r in recs}
    else:  # headerless: [index,] sensor_id, latitude, longitude
        table = {str(r[-3]).strip(): (r[-2], r[-1]) for r in rows}
    missing = [s for s in ids if s not in table]
    if missing:
        raise ValueError(f"sensor_locations_la.csv lacks {len(missing)} sensors, e.g. {missing[:3]}")
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["index", "sensor_id", "latitude", "longitude"])
    for k, s in enumerate(ids):
        w.writerow([k, s, *table[s]])
    return out.getvalue().encode()


def build_from_tsl_archive(zip_path: PathLike, folder: PathLike, threshold: float = 0.1) -> Path:
    """Write the DCRNN layout into ``folder`` from tsl's METR-LA zip.

    Creates ``metr-la.h5``, ``sensor_graph/adj_mx.pkl`` (DCRNN recipe on ``distances_la.csv``),
    ``sensor_graph/graph_sensor_ids.txt`` and ``sensor_graph/graph_sensor_locations.csv``.

    Args:
        zip_path: the downloaded archive.
        folder: METR-LA folder to fill (e.g. ``<root>/metr_la``).
        threshold: kernel weights below it are dropped (DCRNN: 0.1).

    Returns:
        ``folder``.

    Raises:
        ValueError: the archive lacks a member or its files disagree.
    """
    folder = Path(folder)
    with zipfile.ZipFile(zip_path) as z:
        by_name: Dict[str, str] = {Path(n).name: n for n in z.namelist()}
        missing = [m for m in _MEMBERS if m not in by_name]
        if missing:
            raise ValueError(f"{zip_path} is not tsl's METR-LA archive: missing {missing}")
        read = lambda m: z.read(by_name[m])  # noqa: E731
        ids = [s.strip() for s in read("sensor_ids_la.txt").decode().strip().split(",") if s.strip()]
        rows = list(csv.reader(io.StringIO(read("distances_la.csv").decode())))
        start = 1 if rows and not _is_number(rows[0][-1]) else 0
        edges = ((r[0], r[1], float(r[2])) for r in rows[start:] if len(r) >= 3)
        adj = gaussian_kernel_adjacency(distance_matrix(edges, ids), threshold=threshold)
        locations = _locations_csv(read("sensor_locations_la.csv").decode(), ids)
        write_bytes(folder / files.SPEED_H5, read("metr_la.h5"))
    payload = pickle.dumps([ids, {s: k for k, s in enumerate(ids)}, adj], protocol=2)
    write_bytes(folder / files.ADJ_PKL, payload)
    write_bytes(folder / files.SENSOR_IDS, ",".join(ids).encode())
    write_bytes(folder / files.LOCATIONS, locations)
    return folder


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def download_tsl_metr_la(
    folder: PathLike,
    url: str = TSL_METR_LA_URL,
    *,
    sha256: Optional[str] = None,
    progress: bool = True,
    timeout: float = 120.0,
) -> Path:
    """Download tsl's archive and build the DCRNN layout from it (see the module doc).

    Args:
        folder: METR-LA folder to fill.
        url: archive URL (default: tsl's).
        sha256: optional expected digest of the zip (none is published).

    Returns:
        ``folder``.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    record = folder / RECORD
    expected = sha256 or (json.loads(record.read_text()).get("sha256") if record.is_file() else None)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".tsl-download-") as tmp:
        zip_path = Path(tmp) / "metr_la_tsl.zip"
        download_file(url, zip_path, expected, overwrite=True, progress=progress, timeout=timeout)
        if not record.is_file():
            record.write_text(json.dumps({"url": url, "sha256": sha256_file(zip_path),
                                          "recorded": time.strftime("%Y-%m-%d %H:%M:%S"),
                                          "note": "trust on first use: later downloads must match"}, indent=2))
        built = build_from_tsl_archive(zip_path, Path(tmp) / "metr_la")
        move_missing(built, folder)
    return folder


def move_missing(src: Path, dest: Path) -> list:
    """Move the files of ``src`` that ``dest`` lacks into ``dest`` (same relative paths); an existing file
    in ``dest`` is never replaced. Returns the relative paths moved."""
    moved = []
    for path in sorted(p for p in Path(src).rglob("*") if p.is_file()):
        rel = path.relative_to(src)
        target = Path(dest) / rel
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
        moved.append(str(rel))
    return moved
