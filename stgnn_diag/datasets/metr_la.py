"""The METR-LA traffic-speed data set (DCRNN layout)."""
from __future__ import annotations

from . import files
from .base import SensorDataset
from .registration import register_dataset
from .tsl_archive import METR_LA_ARCHIVE


@register_dataset
class MetrLA(SensorDataset):
    r"""Traffic speed from 207 loop detectors in Los Angeles, 5-minute steps, March-June 2012.

    Published with DCRNN (Li et al., ICLR 2018). Reads the DCRNN file layout
    (:mod:`stgnn_diag.datasets.files`): ``metr-la.npz`` (preferred, numpy only) or ``metr-la.h5`` (pandas +
    PyTables), plus ``sensor_graph/adj_mx.pkl``, ``graph_sensor_ids.txt`` and ``graph_sensor_locations.csv``.
    Files from a mirror are checked against the pinned sha256 of the data README; without a mirror the
    public source is tsl's archive (:mod:`stgnn_diag.datasets.tsl_archive`, trust on first use).
    See :class:`~stgnn_diag.datasets.base.SensorDataset` for the arguments and attributes.

    Shapes:
        time = 34272, nodes = 207, E = 1722 (207 self-loops + 1515 edges); speed in mph; 8.11 % missing.
    """

    key = "metr_la"
    name = "METR-LA"
    layout = files.LAYOUT
    public_archive = METR_LA_ARCHIVE
