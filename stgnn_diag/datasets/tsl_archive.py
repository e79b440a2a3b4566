"""Build the DCRNN layout of a data set from tsl's public archive of it.

tsl (torch-spatiotemporal 0.9.5, ``tsl/datasets/metr_la.py``, ``pems_bay.py``) downloads one zip per data
set (:data:`TSL_METR_LA_URL`, :data:`TSL_PEMS_BAY_URL`) holding the DCRNN speed file (``metr_la.h5``,
``pems_bay.h5``), DCRNN's raw road distances ``from,to,cost`` (``distances_la.csv``, ``distances_bay.csv``),
the sensor locations and, for METR-LA, the node-order id list. It ships no ``adj_mx.pkl``:
:func:`build_from_tsl_archive` recomputes it with DCRNN's recipe (Gaussian kernel, sigma = std of the finite
distances, weights < 0.1 dropped; :func:`~stgnn_diag.datasets.graph.gaussian_kernel_adjacency`).

No sha256 of an archive is published, so it is verified *trust on first use*: the digest of the first
download is recorded in ``<folder>/.tsl_archive.json`` and every later download must match it (or the
``sha256`` argument, when given); the digests of the files built from it are recorded in
``<folder>/.sha256.json`` and checked on every load. The archive is unpacked and converted in a temporary
folder, and only the files the data folder lacks are moved into it: an existing file (e.g. DCRNN's own
``adj_mx.pkl``) is never replaced by a rebuild. The built files are checked for consistency (shapes, ids)
when the data set loads them. The speed file is the h5 (pandas + PyTables needed to read it).
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
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Optional

from .._io import write_bytes, write_json
from .download import download_file, record_digests, sha256_file
from .graph import distance_matrix, gaussian_kernel_adjacency
from .layout import Layout
from .readers import parse_locations
from .root import PathLike

#: The archive tsl 0.9.5 downloads for ``tsl.datasets.MetrLA``.
TSL_METR_LA_URL = "https://drive.switch.ch/index.php/s/Z8cKHAVyiDqkzaG/download"
#: The archive tsl 0.9.5 downloads for ``tsl.datasets.PemsBay``.
TSL_PEMS_BAY_URL = "https://drive.switch.ch/index.php/s/5NPcgGFAIJ4oFcT/download"

#: The digest of the first download of the archive, in the data folder.
RECORD = ".tsl_archive.json"


@dataclass(frozen=True)
class TslArchive:
    """One of tsl's archives: where it is and its members.

    Attributes:
        url: where tsl downloads it.
        speed: the DCRNN speed h5; distances: ``from,to,cost`` csv; locations: sensor locations csv;
        sensor_ids: comma-separated node-order ids, or ``None`` (the ids are then the h5's columns).
    """

    url: str
    speed: str
    distances: str
    locations: str
    sensor_ids: Optional[str] = None

    @property
    def members(self) -> tuple:
        return tuple(m for m in (self.speed, self.distances, self.locations, self.sensor_ids) if m is not None)


METR_LA_ARCHIVE = TslArchive(TSL_METR_LA_URL, "metr_la.h5", "distances_la.csv", "sensor_locations_la.csv",
                             "sensor_ids_la.txt")
PEMS_BAY_ARCHIVE = TslArchive(TSL_PEMS_BAY_URL, "pems_bay.h5", "distances_bay.csv", "sensor_locations_bay.csv")


def _locations_csv(text: str, ids) -> bytes:
    """The locations of ``ids`` (in that order) as ``index,sensor_id,latitude,longitude``."""
    loc_ids, latlon = parse_locations(text, "sensor locations")
    table = dict(zip(loc_ids, latlon.tolist()))
    missing = [s for s in ids if s not in table]
    if missing:
        raise ValueError(f"the archive's sensor locations lack {len(missing)} sensors, e.g. {missing[:3]}")
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["index", "sensor_id", "latitude", "longitude"])
    for k, s in enumerate(ids):
        w.writerow([k, s, *table[s]])
    return out.getvalue().encode()


def _h5_columns(data: bytes, tmp: Path) -> list:
    """The column names (sensor ids) of a pandas h5 file given as bytes."""
    import pandas as pd

    path = Path(tmp) / "speed.h5"
    path.write_bytes(data)
    return [str(c) for c in pd.read_hdf(path).columns]


def build_from_tsl_archive(zip_path: PathLike, folder: PathLike, layout: Layout, archive: TslArchive,
                           threshold: float = 0.1) -> Path:
    """Write a data set's DCRNN layout into ``folder`` from tsl's zip of it.

    Creates the layout's speed h5, ``sensor_graph/<adjacency pkl>`` (DCRNN recipe on the distances), the
    id list (when the layout has one) and the locations csv.

    Args:
        zip_path: the downloaded archive.
        folder: data set folder to fill (e.g. ``<root>/metr_la``).
        layout: the files to write; archive: the members to read.
        threshold: kernel weights below it are dropped (DCRNN: 0.1).

    Returns:
        ``folder``.

    Raises:
        ValueError: the archive lacks a member or its files disagree.
    """
    folder = Path(folder)
    with zipfile.ZipFile(zip_path) as z:
        by_name: Dict[str, str] = {Path(n).name: n for n in z.namelist()}
        missing = [m for m in archive.members if m not in by_name]
        if missing:
            raise ValueError(f"{zip_path} is not tsl's archive of {layout.folder}: missing {missing}")
        read = lambda m: z.read(by_name[m])  # noqa: E731
        speed = read(archive.speed)
        if archive.sensor_ids is not None:
            ids = [s.strip() for s in read(archive.sensor_ids).decode().strip().split(",") if s.strip()]
        else:
            with tempfile.TemporaryDirectory() as tmp:
                ids = _h5_columns(speed, Path(tmp))
        rows = list(csv.reader(io.StringIO(read(archive.distances).decode())))
        start = 1 if rows and not _is_number(rows[0][-1]) else 0
        edges = ((_id(r[0]), _id(r[1]), float(r[2])) for r in rows[start:] if len(r) >= 3)
        adj = gaussian_kernel_adjacency(distance_matrix(edges, ids), threshold=threshold)
        locations = _locations_csv(read(archive.locations).decode(), ids)
        write_bytes(folder / layout.speed_h5, speed)
    payload = pickle.dumps([ids, {s: k for k, s in enumerate(ids)}, adj], protocol=2)
    write_bytes(folder / layout.adj_pkl, payload)
    if layout.sensor_ids is not None:
        write_bytes(folder / layout.sensor_ids, ",".join(ids).encode())
    write_bytes(folder / layout.locations, locations)
    return folder


def _id(s: str) -> str:
    """A sensor id as the speed file spells it (``"400001.0"`` in some distance files -> ``"400001"``)."""
    s = s.strip()
    return s[:-2] if s.endswith(".0") and s[:-2].isdigit() else s


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def download_tsl_archive(
    folder: PathLike,
    url: str,
    layout: Layout,
    archive: TslArchive,
    *,
    sha256: Optional[str] = None,
    progress: bool = True,
    timeout: float = 120.0,
) -> Path:
    """Download one of tsl's archives and build the DCRNN layout from it (see the module doc).

    Args:
        folder: the data set folder to fill.
        url: archive URL (:data:`TSL_METR_LA_URL`, :data:`TSL_PEMS_BAY_URL`).
        layout: the files to write; archive: the members to read.
        sha256: optional expected digest of the zip (none is published).

    Returns:
        ``folder``.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    record = folder / RECORD
    expected = sha256 or (json.loads(record.read_text()).get("sha256") if record.is_file() else None)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".tsl-download-") as tmp:
        zip_path = Path(tmp) / f"{layout.folder}_tsl.zip"
        download_file(url, zip_path, expected, overwrite=True, progress=progress, timeout=timeout)
        if not record.is_file():
            write_json(record, {"url": url, "sha256": sha256_file(zip_path),
                                "recorded": time.strftime("%Y-%m-%d %H:%M:%S"),
                                "note": "trust on first use: later downloads must match"})
        built = build_from_tsl_archive(zip_path, Path(tmp) / layout.folder, layout, archive)
        moved = move_missing(built, folder)
    record_digests(folder, moved, source=url)
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
