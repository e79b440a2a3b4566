"""Over-squashing toolkit: spatio-temporal sensitivity, hop x lag profiles, attention diagnostics.

Public API::

    spatiotemporal_jacobian(model, x, edge_index, edge_weight=None, u=None, *, wrt="input",
                            output="prediction", norm="fro", out_steps=None, out_nodes=None,
                            method="auto", chunk_size=None, budget_mb=256, progress=False,
                            return_info=False) -> [t_out, n_out, t_in, n_in]
    hop_distances(edge_index, num_nodes, directed=True) -> [n, n] (inf = unreachable)
    summarize_hops(hops) -> HopSummary
    hop_lag_profile(sensitivity, hops, *, out_nodes=None, in_nodes=None) -> HopLagProfile
    attention_diagnostics(model, x, edge_index, edge_weight=None, u=None) -> [AttentionStats]
    attention_paths(layer, x, rows=None) -> PathDecomposition   (residual / value / key / query)
    path_bounds(layer, x) -> PathBounds ; verify_paths(layer, x) -> max |paths - autograd|
    sequence_length_sweep(layer=None, *, lengths=(6, ..., 192), modes=...) -> SweepResult
    analyze_window(model, x, edge_index, ...) -> WindowAnalysis ; write_report(...)
    build_model(name, checkpoint=None, **overrides) ; metr_la_window(index, split="test")

Command line: ``stgnn-diag sensitivity --model NAME [--checkpoint PATH] [--window INDEX] [--out DIR]``.
Findings report: ``python -m stgnn_diag.sensitivity.report --out docs/sensitivity``.

Conventions: ``edge_index[0]`` is the source, ``edge_index[1]`` the target; ``hops[u, v]`` counts edges
from input node ``u`` to output node ``v``; lag ``T - 1 - s`` of input step ``s`` (0 = most recent).
"""
from .analysis import WindowAnalysis, analyze_window, format_summary, write_report
from .attention import AttentionStats, NoAttentionError, attention_diagnostics, attention_layers
from .checkpoint import CheckpointFormatError, build_model, read_checkpoint
from .data import Window, check_window_index, exog_for, metr_la_window
from .graph import HopSummary, hop_distances, summarize_hops
from .jacobian import METHODS, spatiotemporal_jacobian
from .model_state import TrainingModeWarning
from .norms import NORMS, block_norm
from .paths import PathBounds, PathDecomposition, attention_paths, autograd_blocks, path_bounds, verify_paths
from .profile import HopLagProfile, hop_lag_profile
from .structured import StructuredJacobian, UnsupportedModel
from .sweep import SweepResult, sequence_length_sweep

__all__ = [
    "spatiotemporal_jacobian", "METHODS", "NORMS", "block_norm", "StructuredJacobian", "UnsupportedModel",
    "TrainingModeWarning", "hop_distances", "summarize_hops", "HopSummary", "hop_lag_profile", "HopLagProfile",
    "attention_diagnostics", "attention_layers", "AttentionStats", "NoAttentionError", "attention_paths",
    "autograd_blocks", "verify_paths", "path_bounds", "PathBounds", "PathDecomposition", "sequence_length_sweep",
    "SweepResult", "analyze_window", "write_report", "format_summary", "WindowAnalysis", "build_model",
    "read_checkpoint", "CheckpointFormatError", "metr_la_window", "check_window_index", "exog_for", "Window",
]
