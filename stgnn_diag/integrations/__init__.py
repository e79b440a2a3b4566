"""Integrations with the ecosystem: tsl (torch-spatiotemporal), PyG Temporal and PyG.

Importing this package imports neither tsl nor PyG Temporal. Submodules (see ``docs/ecosystem.md``):

* ``namespaces``: the zoo's ``tsl:`` / ``pygt:`` entries (lazy; registered by :mod:`stgnn_diag.zoo`).
* ``tsl_data``: METR-LA as a tsl ``SpatioTemporalDataset`` / ``SpatioTemporalDataModule``.
* ``tsl_engine``: zoo models in ``tsl.engines.Predictor``; checkpoint loading on torch >= 2.6.
* ``tsl_models``: tsl's forecasting models behind our forward contract (``TSLModel``).
* ``pygt_data``: ``METRLADatasetLoader`` files and ``StaticGraphTemporalSignal`` <-> our data.
* ``pygt``: PyG Temporal models behind our forward contract (one name table, one module per kind).
* ``pygt_layouts``: the one place where PyG Temporal's tensor layouts are converted.
* ``pygt_snapshots``: ``SnapshotModel``, our models in a PyG Temporal snapshot loop.
* ``pyg_batch``: windows as PyG ``Data``; a ``Batch`` of several graphs through our models.
* ``calendar_codes``: our calendar covariates as GMAN / STID integer codes.

The modules that need tsl or PyG Temporal check for them first and raise
:class:`~stgnn_diag.integrations._require.MissingDependencyError` with the install command.
"""
