"""The METR-LA file layout (DCRNN's) and the pinned sha256 of every file.

The layout below is the one found in ``<root>/metr_la/`` (see ``datasets/README.md``)::

    metr_la/
        metr-la.npz                          speed matrix for numpy (preferred)
        metr-la.h5                           the same data for pandas + PyTables (fallback)
        sensor_graph/adj_mx.pkl              DCRNN adjacency (pickle, latin1)
        sensor_graph/graph_sensor_ids.txt    207 comma-separated sensor ids (node order)
        sensor_graph/graph_sensor_locations.csv   index,sensor_id,latitude,longitude
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional

#: Name of the dataset folder inside a data root.
DATASET_DIR = "metr_la"

SPEED_NPZ = "metr-la.npz"
SPEED_H5 = "metr-la.h5"
ADJ_PKL = "sensor_graph/adj_mx.pkl"
SENSOR_IDS = "sensor_graph/graph_sensor_ids.txt"
LOCATIONS = "sensor_graph/graph_sensor_locations.csv"

#: Pinned sha256 of each file (relative path -> hex digest), from the data README.
SHA256: Dict[str, str] = {
    SPEED_NPZ: "3554c3b0b3d108a9f491d41cbc5f3b748dc2833df7860065b68a8a648444d260",
    SPEED_H5: "a7cdadfea04b3d31d8fdc1a0096e7acf4df2b4d7db92f06e3630ab421e4dc80d",
    ADJ_PKL: "a35687c6e15aa228dc45027b0ed2a0ea0f4ec78f573deb992c595092d12f61b3",
    SENSOR_IDS: "3ba026caa2e6263ab0ea54b0fa1b125dbfa7216544cd05313b555e826292b990",
    LOCATIONS: "eb8ea96e07358b45d0e4ba3b89c2673fa20c54af50150249e627389e749ade6f",
}

#: Files fetched by :func:`stgnn_diag.datasets.download.download_metr_la` (the h5 is optional).
DOWNLOAD_FILES = (SPEED_NPZ, ADJ_PKL, SENSOR_IDS, LOCATIONS)

#: Files that must exist besides one speed file (``metr-la.npz`` or ``metr-la.h5``).
GRAPH_FILES = (ADJ_PKL, SENSOR_IDS, LOCATIONS)


def speed_file(folder: Path) -> Optional[Path]:
    """Return the speed file to read in ``folder``: the npz if present, else the h5, else ``None``."""
    for name in (SPEED_NPZ, SPEED_H5):
        if (folder / name).is_file():
            return folder / name
    return None


def missing_files(folder: Path) -> list:
    """List the required files (relative paths) that are absent from a METR-LA folder."""
    folder = Path(folder)
    missing = [] if speed_file(folder) is not None else [f"{SPEED_NPZ} (or {SPEED_H5})"]
    missing += [name for name in GRAPH_FILES if not (folder / name).is_file()]
    return missing


def is_complete(folder: Path) -> bool:
    """Whether ``folder`` holds a speed file and all graph files."""
    return not missing_files(folder)
