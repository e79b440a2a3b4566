"""Fixtures of the integration tests: real METR-LA windows and PyG Temporal files (no download)."""
from __future__ import annotations

import numpy as np
import pytest
import torch


@pytest.fixture(scope="session")
def metr_batch(dcrnn_splits):
    """Two real METR-LA test windows (207 nodes): ``x [2, 12, 207, 1]`` scaled, ``u [2, 12, 8]``,
    ``y`` / ``mask [2, 12, 207, 1]``, plus the graph."""
    batch = dcrnn_splits.test[np.array([0, 500])]
    batch["edge_index"] = dcrnn_splits.edge_index
    batch["edge_weight"] = dcrnn_splits.edge_weight
    return batch


@pytest.fixture(scope="session")
def pygt_folder(metr_la, tmp_path_factory):
    """PyG Temporal's METR-LA files (``adj_mat.npy``, ``node_values.npy``, empty zip) from our data."""
    from stgnn_diag.integrations.pygt_data import write_metrla_loader_files

    return write_metrla_loader_files(metr_la, tmp_path_factory.mktemp("pygt_metr_la"))


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)

