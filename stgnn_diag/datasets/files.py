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

from typing import Dict

from .layout import Layout

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

#: METR-LA's layout.
LAYOUT = Layout(folder=DATASET_DIR, speed_npz=SPEED_NPZ, speed_h5=SPEED_H5, adj_pkl=ADJ_PKL, locations=LOCATIONS,
                sensor_ids=SENSOR_IDS, sha256=SHA256)

#: Files fetched by :func:`stgnn_diag.datasets.download.download_layout` (the h5 is optional).
DOWNLOAD_FILES = LAYOUT.download_files

#: Files that must exist besides one speed file (``metr-la.npz`` or ``metr-la.h5``).
GRAPH_FILES = LAYOUT.graph_files
