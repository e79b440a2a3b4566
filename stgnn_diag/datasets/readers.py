"""Readers for the individual files of the DCRNN layout, with clear errors.

Every reader returns plain numpy / Python objects; the cross-file checks live in
:class:`stgnn_diag.datasets.base.SensorDataset`.
"""
from __future__ import annotations

import csv
import io
import pickle
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np

# Classes a DCRNN ``adj_mx.pkl`` may reference (numpy arrays inside a list); anything else is refused.
_PICKLE_ALLOWED = {
    ("numpy", "dtype"),
    ("numpy", "ndarray"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"),
    ("_codecs", "encode"),  # bytes in protocol-2 pickles written by Python 3
}


class _ArrayUnpickler(pickle.Unpickler):
    """Unpickler limited to numpy arrays and builtin containers (no arbitrary code)."""

    def find_class(self, module, name):
        if (module, name) in _PICKLE_ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} from an adjacency pickle")


def _corrupt(path: Path, what: str) -> ValueError:
    return ValueError(
        f"{path} looks corrupt or is not the DCRNN-layout file: {what}. "
        f"Replace it with a fresh copy (the pinned sha256 of each file is in datasets/README.md)."
    )


def read_speed_npz(path: Path) -> Tuple[np.ndarray, np.ndarray, List[str]]:
    """Read a speed npz (``metr-la.npz``; numpy only).

    Returns:
        ``(speed, timestamps, sensor_ids)``.

    Shapes:
        speed: ``[time, nodes]`` float64 (mph, 0 = missing);
        timestamps: ``[time]`` datetime64[ns]; sensor_ids: ``nodes`` strings.
    """
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            missing = {"speed", "timestamps", "sensor_ids"} - set(z.files)
            if missing:
                raise _corrupt(path, f"keys {sorted(missing)} absent (has {sorted(z.files)})")
            speed = np.asarray(z["speed"], dtype=np.float64)
            timestamps = np.asarray(z["timestamps"]).astype("datetime64[ns]")
            ids = [str(s) for s in z["sensor_ids"]]
    except ValueError as err:
        if "allow_pickle" in str(err):  # an object array: reading it would unpickle, i.e. run code
            raise _corrupt(path, "it holds object arrays, which are read only by unpickling (refused); save "
                                 "speed as float, timestamps as datetime64 and sensor_ids as str arrays") from None
        if str(err).startswith(str(path)):
            raise
        raise _corrupt(path, f"its arrays cannot be converted ({err})") from None
    except Exception as err:  # zipfile.BadZipFile, OSError, EOFError, ...
        raise _corrupt(path, f"cannot be read by numpy.load ({type(err).__name__}: {err})") from err
    return speed, timestamps, ids


def read_speed_h5(path: Path) -> Tuple[np.ndarray, np.ndarray, List[str]]:
    """Read a DCRNN speed h5 (``metr-la.h5``: a pandas DataFrame); needs pandas and PyTables.

    Returns:
        ``(speed, timestamps, sensor_ids)`` as in :func:`read_speed_npz`.

    Raises:
        ImportError: pandas or PyTables is not installed (says how to install them).
    """
    path = Path(path)
    try:
        import pandas as pd
        import tables  # noqa: F401  (pandas needs it for read_hdf)
    except ImportError as err:
        raise ImportError(
            f"Reading {path.name} needs pandas and PyTables ({err}). Install them with "
            f"`pip install pandas tables` (extra `stgnn-diag[hdf5]`), or provide the data set's npz copy, "
            f"which needs numpy only."
        ) from err
    try:
        df = pd.read_hdf(path)
    except Exception as err:
        raise _corrupt(path, f"pandas.read_hdf failed ({type(err).__name__}: {err})") from err
    if not isinstance(df, pd.DataFrame) or not isinstance(df.index, pd.DatetimeIndex):
        raise _corrupt(path, "expected a DataFrame indexed by a DatetimeIndex")
    speed = df.to_numpy(dtype=np.float64)
    timestamps = df.index.to_numpy().astype("datetime64[ns]")
    ids = [str(c) for c in df.columns]
    return speed, timestamps, ids


def read_adj_pkl(path: Path) -> Tuple[List[str], Dict[str, int], np.ndarray]:
    """Read DCRNN's ``adj_mx.pkl`` (pickle, latin1; only numpy arrays are allowed inside).

    Returns:
        ``(sensor_ids, sensor_id_to_ind, adj)``.

    Shapes:
        adj: ``[nodes, nodes]`` float32, ``adj[i, j]`` = weight of the edge ``i -> j``.
    """
    path = Path(path)
    try:
        with open(path, "rb") as f:
            obj = _ArrayUnpickler(f, encoding="latin1").load()
    except Exception as err:
        raise _corrupt(path, f"cannot be unpickled ({type(err).__name__}: {err})") from err
    if not (isinstance(obj, (list, tuple)) and len(obj) == 3):
        raise _corrupt(path, "expected [sensor_ids, sensor_id_to_ind, adj_mx]")
    ids, id_to_ind, adj = obj
    adj = np.asarray(adj)
    if adj.ndim != 2 or adj.shape[0] != adj.shape[1] or adj.shape[0] != len(ids):
        raise _corrupt(path, f"adjacency of shape {adj.shape} for {len(ids)} sensor ids")
    if not np.issubdtype(adj.dtype, np.number):
        raise _corrupt(path, f"adjacency of dtype {adj.dtype}, not numbers")
    bad = ~np.isfinite(adj)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise _corrupt(path, f"the adjacency holds {int(np.isnan(adj).sum())} NaN and {int(np.isinf(adj).sum())} "
                             f"Inf weights (the first at [{i}, {j}]); edge weights must be finite, 0 for no edge")
    if (adj < 0).any():
        raise _corrupt(path, f"the adjacency holds {int((adj < 0).sum())} negative weights (min {adj.min():g}); "
                             f"edge weights must be >= 0, 0 for no edge")
    return [str(s) for s in ids], {str(k): int(v) for k, v in dict(id_to_ind).items()}, adj.astype(np.float32)


def read_sensor_ids(path: Path) -> List[str]:
    """Read ``graph_sensor_ids.txt`` (comma-separated ids, node order)."""
    text = Path(path).read_text().strip()
    ids = [s.strip() for s in text.split(",") if s.strip()]
    if not ids:
        raise _corrupt(Path(path), "no sensor ids")
    return ids


def parse_locations(text: str, where: str) -> Tuple[List[str], np.ndarray]:
    """Sensor locations from csv text: ``[index,]sensor_id,latitude,longitude`` with a header naming
    ``sensor_id``, ``latitude`` and ``longitude`` (METR-LA's file), or without a header, the last three
    columns being id, latitude, longitude (PEMS-BAY's ``graph_sensor_locations_bay.csv``).

    Returns:
        ``(sensor_ids, latlon)`` in file order; latlon ``[nodes, 2]`` float64 (degrees).

    Raises:
        ValueError: ``where`` is named, with what was expected.
    """
    rows = [r for r in csv.reader(io.StringIO(text)) if r]
    if not rows:
        raise ValueError(f"{where}: no rows")
    header = [c.strip().lower() for c in rows[0]]
    if {"sensor_id", "latitude", "longitude"} <= set(header):
        cols = [header.index("sensor_id"), header.index("latitude"), header.index("longitude")]
        rows = rows[1:]
    else:
        cols = [-3, -2, -1]
    try:
        ids = [str(r[cols[0]]).strip() for r in rows]
        latlon = np.array([[float(r[cols[1]]), float(r[cols[2]])] for r in rows], dtype=np.float64)
    except (IndexError, ValueError) as err:
        raise ValueError(f"{where}: expected [index,]sensor_id,latitude,longitude ({err})") from err
    return ids, latlon.reshape(len(ids), 2)


def read_locations(path: Path) -> Tuple[List[str], np.ndarray]:
    """Read a sensor locations csv (see :func:`parse_locations`).

    Returns:
        ``(sensor_ids, latlon)`` in file order.

    Shapes:
        latlon: ``[nodes, 2]`` float64 (latitude, longitude in degrees).
    """
    path = Path(path)
    try:
        return parse_locations(path.read_text(), str(path))
    except (ValueError, OSError) as err:
        raise _corrupt(path, str(err)) from err
