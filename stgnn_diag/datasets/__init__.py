"""Datasets, evaluation protocols and windowing for stgnn_diag.

Public API::

    get_dataset(name="metr_la", root=None, **kwargs) ; list_datasets() ; register_dataset(cls)
    MetrLA(root=None, *, download=True, base_url=None, speed_format="auto", progress=True) ; PemsBay(...)
    LagHopTask(root=None, *, hop=2, lag=3, graph="ring", ...)   a synthetic task whose true Jacobian is known
    LargeSTSynthetic(root=None, *, n_nodes=8600, days=365, ...)   LargeST's shape, generated, memory-mapped
    SensorDataset, Layout            the base of a data set and its file layout
    resolve_data_root(root=None, *, dataset="metr_la", download=True, base_url=None, progress=True) -> Path
    make_splits(dataset, protocol="dcrnn", window=12, horizon=12, *, stride=1, max_windows=None) -> Splits
    WindowDataset, Splits, StandardScaler, PROTOCOLS
    download_layout(folder, layout, base_url=None, ...), download_file(url, dest, sha256=None, ...)
    download_tsl_archive(folder, url, layout, archive, ...), build_from_tsl_archive(zip_path, folder, layout, archive)
"""
from .._lazy import lazy_exports

#: Exported name -> the submodule defining it (imported on first use: the registry's names load without torch).
_WHERE = {
    "SensorDataset": "base",
    "EXOG_SIZE": "covariates",
    "calendar_covariates": "covariates",
    "day_of_week": "covariates",
    "time_of_day": "covariates",
    "ChecksumError": "download",
    "DownloadError": "download",
    "download_file": "download",
    "download_layout": "download",
    "sha256_file": "download",
    "dense_to_edge_index": "graph",
    "distance_matrix": "graph",
    "gaussian_kernel_adjacency": "graph",
    "Layout": "layout",
    "MetrLA": "metr_la",
    "LagHopTask": "synthetic",
    "LargeSTSynthetic": "largest_synthetic",
    "LARGEST_SOURCE": "largest_synthetic",
    "PemsBay": "pems_bay",
    "PROTOCOLS": "protocols",
    "Splits": "protocols",
    "make_splits": "protocols",
    "DEFAULT_DATASET": "registry",
    "check_dataset_name": "registry",
    "dataset_class": "registry",
    "dataset_dir": "registry",
    "dataset_slug": "registry",
    "split_name": "registry",
    "get_dataset": "registry",
    "list_datasets": "registry",
    "recorded_dataset": "registry",
    "register_dataset": "registration",
    "resolve_data_root": "registry",
    "ENV_ROOT": "root",
    "ENV_URL": "root",
    "default_data_root": "root",
    "DataNotFoundError": "root",
    "StandardScaler": "scaler",
    "METR_LA_ARCHIVE": "tsl_archive",
    "PEMS_BAY_ARCHIVE": "tsl_archive",
    "TSL_METR_LA_URL": "tsl_archive",
    "TSL_PEMS_BAY_URL": "tsl_archive",
    "TslArchive": "tsl_archive",
    "build_from_tsl_archive": "tsl_archive",
    "download_tsl_archive": "tsl_archive",
    "WindowDataset": "windows",
    "window_starts": "windows",
}
_SUBMODULES = ("base", "covariates", "download", "files", "graph", "largest_synthetic", "layout", "metr_la", "pems_bay", "protocols",
               "readers", "registration", "registry", "root", "scaler", "tsl_archive", "windows")
__getattr__, __dir__ = lazy_exports(__name__, _WHERE, _SUBMODULES)

__all__ = list(_WHERE)
