"""The PEMS-BAY traffic-speed data set (DCRNN layout)."""
from __future__ import annotations

from .base import SensorDataset
from .layout import Layout
from .registration import register_dataset
from .tsl_archive import PEMS_BAY_ARCHIVE

#: PEMS-BAY's files in the DCRNN layout (DCRNN's own names; it publishes no id list, and no digests).
LAYOUT = Layout(folder="pems_bay", speed_npz="pems-bay.npz", speed_h5="pems-bay.h5",
                adj_pkl="sensor_graph/adj_mx_bay.pkl", locations="sensor_graph/graph_sensor_locations_bay.csv")


@register_dataset
class PemsBay(SensorDataset):
    r"""Traffic speed from 325 PeMS sensors in the San Francisco Bay Area, 5-minute steps, January-June 2017.

    Published with DCRNN (Li et al., ICLR 2018). Reads the DCRNN file layout in ``<root>/pems_bay/``:
    ``pems-bay.npz`` (numpy: keys ``speed``, ``timestamps``, ``sensor_ids``, as METR-LA's) or ``pems-bay.h5``
    (pandas + PyTables), ``sensor_graph/adj_mx_bay.pkl`` and ``sensor_graph/graph_sensor_locations_bay.csv``
    (``sensor_id,latitude,longitude``, no header). The node order is the speed file's columns, checked
    against the adjacency's ids.

    No sha256 of these files is published: the digests of the first download (from a mirror, or built from
    tsl's public archive, :data:`~stgnn_diag.datasets.tsl_archive.TSL_PEMS_BAY_URL`) are recorded in
    ``pems_bay/.sha256.json`` and checked on every load (trust on first use). Files copied in by hand have no
    record and are not checked.

    The stored series has 52,116 rows: a few 5-minute steps are absent from the published file. The
    canonical (DCRNN) protocol cuts its windows on the stored rows, as DCRNN does.

    Shapes:
        time = 52116, nodes = 325.
    """

    key = "pems_bay"
    name = "PEMS-BAY"
    layout = LAYOUT
    public_archive = PEMS_BAY_ARCHIVE
