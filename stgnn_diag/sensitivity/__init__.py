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
    build_model(name, checkpoint=None, **overrides) ; dataset_window(index, split="test", dataset="metr_la")

Command line: ``stgnn-diag sensitivity --model NAME [--checkpoint PATH] [--index INDEX] [--window T] [--out DIR]``.
Findings report: ``python -m stgnn_diag.sensitivity.report --out docs/sensitivity``.

Conventions: ``edge_index[0]`` is the source, ``edge_index[1]`` the target; ``hops[u, v]`` counts edges
from input node ``u`` to output node ``v``; lag ``T - 1 - s`` of input step ``s`` (0 = most recent).
"""
from .._lazy import lazy_exports

#: exported name -> the submodule defining it (imported on first use)
_WHERE = {
    "WindowAnalysis": "analysis",
    "analyze_window": "analysis",
    "format_summary": "analysis",
    "write_report": "analysis",
    "AttentionStats": "attention",
    "NoAttentionError": "attention",
    "attention_diagnostics": "attention",
    "attention_layers": "attention",
    "CheckpointFormatError": "checkpoint",
    "build_model": "checkpoint",
    "read_checkpoint": "checkpoint",
    "Window": "data",
    "check_window_index": "data",
    "exog_for": "data",
    "dataset_window": "data",
    "HopSummary": "graph",
    "hop_distances": "graph",
    "summarize_hops": "graph",
    "METHODS": "jacobian",
    "spatiotemporal_jacobian": "jacobian",
    "TrainingModeWarning": "model_state",
    "NORMS": "norms",
    "block_norm": "norms",
    "PathBounds": "paths",
    "PathDecomposition": "paths",
    "attention_paths": "paths",
    "autograd_blocks": "paths",
    "path_bounds": "paths",
    "verify_paths": "paths",
    "HopLagProfile": "profile",
    "hop_lag_profile": "profile",
    "StructuredJacobian": "structured",
    "UnsupportedModel": "structured",
    "SweepResult": "sweep",
    "sequence_length_sweep": "sweep",
}
__all__ = list(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
