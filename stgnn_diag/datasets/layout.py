"""The DCRNN file layout of a sensor data set, as data: which files, where, and their pinned digests.

A data set folder (``<root>/<layout.folder>/``) in this layout holds::

    <speed npz>                     the speed matrix for numpy (preferred)
    <speed h5>                      the same data for pandas + PyTables (fallback)
    sensor_graph/<adjacency pkl>    DCRNN adjacency (pickle, latin1): [ids, id -> index, adj [n, n]]
    sensor_graph/<sensor ids txt>   comma-separated ids in node order (optional: METR-LA has it)
    sensor_graph/<locations csv>    sensor_id, latitude, longitude (with or without header / index)

:class:`Layout` names those files for one data set; :mod:`stgnn_diag.datasets.files` (METR-LA) and
:mod:`stgnn_diag.datasets.pems_bay` declare theirs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Optional, Tuple


@dataclass(frozen=True)
class Layout:
    """The files of one data set in the DCRNN layout.

    Attributes:
        folder: the data set's folder inside a data root (``"metr_la"``).
        speed_npz / speed_h5: the speed file, numpy's or pandas' (one of them must exist).
        adj_pkl: the DCRNN adjacency pickle (relative path).
        locations: the sensor locations csv (relative path).
        sensor_ids: the node-order id list (relative path), or ``None`` when the data set has none (the
            ids then come from the speed file and are checked against the adjacency's).
        sha256: pinned digests (relative path -> hex) of the published files; empty when none are
            published (the digests are then recorded at the first download and checked on every load).
    """

    folder: str
    speed_npz: str
    speed_h5: str
    adj_pkl: str
    locations: str
    sensor_ids: Optional[str] = None
    sha256: Dict[str, str] = field(default_factory=dict)

    @property
    def graph_files(self) -> Tuple[str, ...]:
        """Files that must exist besides one speed file."""
        return tuple(f for f in (self.adj_pkl, self.sensor_ids, self.locations) if f is not None)

    @property
    def download_files(self) -> Tuple[str, ...]:
        """Files a mirror of the layout serves (the npz speed file and the graph files)."""
        return (self.speed_npz,) + self.graph_files

    def speed_file(self, folder: Path) -> Optional[Path]:
        """The speed file to read in ``folder``: the npz if present, else the h5, else ``None``."""
        for name in (self.speed_npz, self.speed_h5):
            if (Path(folder) / name).is_file():
                return Path(folder) / name
        return None

    def missing_files(self, folder: Path) -> list:
        """The required files (relative paths) absent from ``folder``."""
        folder = Path(folder)
        missing = [] if self.speed_file(folder) is not None else [f"{self.speed_npz} (or {self.speed_h5})"]
        return missing + [name for name in self.graph_files if not (folder / name).is_file()]

    def is_complete(self, folder: Path) -> bool:
        """Whether ``folder`` holds a speed file and all graph files."""
        return not self.missing_files(folder)

    def looks_like(self, folder: Path) -> bool:
        """Whether ``folder`` is itself a data set folder of this layout (not a data root above it)."""
        folder = Path(folder)
        return folder.name == self.folder or self.speed_file(folder) is not None or (folder / "sensor_graph").is_dir()
