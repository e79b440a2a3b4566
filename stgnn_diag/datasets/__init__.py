"""Datasets, evaluation protocols and windowing for stgnn_diag.

Public API::

    MetrLA(root=None, *, download=True, base_url=None, speed_format="auto", progress=True)
    resolve_data_root(root=None, *, download=True, base_url=None, progress=True) -> Path
    make_splits(dataset, protocol="dcrnn", window=12, horizon=12, *, stride=1, max_windows=None) -> Splits
    WindowDataset, Splits, StandardScaler, PROTOCOLS
    download_metr_la(folder, base_url=None, ...), download_file(url, dest, sha256=None, ...)
    download_tsl_metr_la(folder, url=TSL_METR_LA_URL, ...), build_from_tsl_archive(zip_path, folder)
"""
from .covariates import EXOG_SIZE, calendar_covariates, day_of_week, time_of_day
from .download import ChecksumError, DownloadError, download_file, download_metr_la, sha256_file
from .graph import dense_to_edge_index, distance_matrix, gaussian_kernel_adjacency
from .metr_la import MetrLA
from .protocols import PROTOCOLS, Splits, make_splits
from .root import ENV_ROOT, ENV_URL, dataset_dir, default_data_root, resolve_data_root
from .scaler import StandardScaler
from .tsl_archive import TSL_METR_LA_URL, build_from_tsl_archive, download_tsl_metr_la
from .windows import WindowDataset, window_starts

__all__ = [
    "MetrLA",
    "resolve_data_root",
    "default_data_root",
    "dataset_dir",
    "ENV_ROOT",
    "ENV_URL",
    "make_splits",
    "Splits",
    "PROTOCOLS",
    "WindowDataset",
    "window_starts",
    "StandardScaler",
    "download_file",
    "download_metr_la",
    "sha256_file",
    "ChecksumError",
    "DownloadError",
    "TSL_METR_LA_URL",
    "build_from_tsl_archive",
    "download_tsl_metr_la",
    "dense_to_edge_index",
    "distance_matrix",
    "gaussian_kernel_adjacency",
    "calendar_covariates",
    "time_of_day",
    "day_of_week",
    "EXOG_SIZE",
]
