"""The whole analysis of one window: Jacobian, hop x lag profile, attention, summary, files."""
from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

import torch
from torch import Tensor, nn

from .attention import AttentionStats, NoAttentionError, attention_diagnostics
from .graph import HopSummary, hop_distances, summarize_hops
from .jacobian import spatiotemporal_jacobian
from .profile import HopLagProfile, hop_lag_profile


@dataclass
class WindowAnalysis:
    """Everything :func:`analyze_window` measured.

    Attributes:
        sensitivity: ``[horizon, N, T, N]`` block norms of the prediction w.r.t. the input.
        hidden_sensitivity: ``[T, N, T, N]`` block norms of the layer stack's output (``process``)
            w.r.t. the input, or None.
        hops: ``[N, N]`` hop matrix used; hop_summary: its :class:`HopSummary`.
        profile: :class:`HopLagProfile` of ``sensitivity``.
        attention: per-layer :class:`AttentionStats` (empty if the model has none; see ``notes``).
        info: the Jacobian engine's info dict; summary: the headline numbers; notes: caveats.
    """

    sensitivity: Tensor
    hidden_sensitivity: Optional[Tensor]
    hops: Tensor
    hop_summary: HopSummary
    profile: HopLagProfile
    attention: List[AttentionStats]
    info: Dict[str, Any]
    summary: Dict[str, Any] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)


def time_diagonal_share(s: Tensor) -> float:
    """Share of ``[T, N, T, N]`` sensitivity mass with output step == input step."""
    t = min(s.shape[0], s.shape[2])
    diag = sum(float(s[i, :, i, :].sum()) for i in range(t))
    total = float(s.sum())
    return diag / total if total > 0 else math.nan


def analyze_window(model: nn.Module, x: Tensor, edge_index, edge_weight=None, u=None, *, x_mask=None, norm: str = "fro",
                   directed: bool = False, hidden: bool = True, budget_mb: float = 256.0,
                   progress: bool = False) -> WindowAnalysis:
    """Jacobian, hop x lag profile and attention diagnostics of ``model`` on one window.

    Args:
        model: any model with the tsl forward contract (hidden-layer figures need stgnn_diag's
            ``encode`` / ``process`` / ``decode``; attention figures need ``TemporalAttention``).
        x: ``[T, N, F]``; edge_index / edge_weight / u: as the model takes them.
        x_mask: observed readings ``[T, N, F]`` (bool) for a model built with ``input_mask=True``.
        norm: block norm.
        directed: hop distances along edge directions (default: ignoring them, since the diffusion
            convolution passes messages both ways).
        hidden: also compute the layer stack's Jacobian (time-diagonal share: the end-to-end sink).
        budget_mb: memory budget of one Jacobian chunk.
        progress: tqdm bars.

    Shapes:
        x ``[T, N, F]`` -> ``sensitivity [horizon, N, T, N]``, ``hidden_sensitivity [T, N, T, N]``.
    """
    notes: List[str] = []
    sens, info = spatiotemporal_jacobian(model, x, edge_index, edge_weight, u, x_mask=x_mask, norm=norm, budget_mb=budget_mb,
                                         progress=progress, return_info=True)
    if info.get("switched_to_eval"):
        notes.append("the model was in training mode; it was evaluated in eval mode and restored")
    n = x.shape[-2]
    hops = hop_distances(edge_index, n, directed=directed)
    hsum = summarize_hops(hops)
    if hsum.unreachable_pairs:
        notes.append(f"{hsum.unreachable_pairs} ordered node pairs have no path (infinite hop distance"
                     + (f"; isolated nodes {hsum.isolated_nodes}" if hsum.isolated_nodes else "")
                     + "); they form the 'unreachable' row of the hop x lag profile")
    prof = hop_lag_profile(sens, hops)
    hid = None
    staged = all(hasattr(model, a) for a in ("encode", "process", "decode", "check_inputs"))
    if hidden and staged:
        hid = spatiotemporal_jacobian(model, x, edge_index, edge_weight, u, x_mask=x_mask, norm=norm, output="hidden",
                                      budget_mb=budget_mb, progress=progress)
    elif hidden:
        notes.append("no layer-stack Jacobian: the model does not expose encode/process/decode")
    try:
        att = attention_diagnostics(model, x, edge_index, edge_weight, u, x_mask=x_mask)
    except NoAttentionError as e:
        att = []
        notes.append(str(e))
    total = float(sens.sum())
    dead = [t + 1 for t in range(sens.shape[0]) if not bool((sens[t] != 0).any())]
    if dead:
        notes.append(f"output step(s) {dead} depend on no input (their Jacobian is exactly zero): a dead read-out, "
                     f"e.g. an activation inactive at every node for that step; the model predicts a constant there")
    summary: Dict[str, Any] = {
        "engine": info.get("method"),
        "jacobian_seconds": round(info.get("seconds", math.nan), 2),
        "node_diagonal_share": float(prof.hop_share[0]),
        "hop0_over_hop1": prof.hop_ratio(1),
        "hop0_over_hop2": prof.hop_ratio(2),
        "hop0_over_hop3": prof.hop_ratio(3),
        "max_hop_reached": max((h for i, h in enumerate(prof.hops) if math.isfinite(h) and
                                float(prof.mass[i].sum()) > 1e-12 * total), default=0),
        "most_recent_lag_share": float(prof.lag_share[0]),
        "oldest_lag_share": float(prof.lag_share[-1]),
        "uniform_lag_share": 1.0 / x.shape[-3],
        "unreachable_pairs": prof.unreachable_pairs,
        "unreachable_share": prof.unreachable_share,
        "insensitive_output_steps": dead,
    }
    if hid is not None:
        summary["hidden_time_diagonal_share"] = time_diagonal_share(hid)
        summary["hidden_uniform_time_share"] = 1.0 / x.shape[-3]
    if att:
        summary["attention_diag_x_T"] = [round(a.diag_ratio, 3) for a in att]
    return WindowAnalysis(sens, hid, hops, hsum, prof, att, info, summary, notes)


def write_report(res: WindowAnalysis, out: Path, meta: Optional[Dict[str, Any]] = None, plots: bool = True,
                 save_jacobian: bool = False, title: str = "") -> List[Path]:
    """Write ``sensitivity.json``, ``hop_lag.csv``, ``attention.csv`` and the PNGs into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    payload = {"meta": meta or {}, "summary": res.summary, "notes": res.notes,
               "graph": {"nodes": res.hop_summary.n_nodes, "components": res.hop_summary.components,
                         "diameter": res.hop_summary.diameter, "unreachable_pairs": res.hop_summary.unreachable_pairs,
                         "isolated_nodes": res.hop_summary.isolated_nodes},
               "jacobian": {k: v for k, v in res.info.items() if k not in ("out_steps", "out_nodes")},
               "hop_lag_profile": res.profile.to_dict(),
               "attention": [a.to_dict() for a in res.attention]}
    p = out / "sensitivity.json"
    p.write_text(json.dumps(payload, indent=1, default=float))
    written.append(p)
    p = out / "hop_lag.csv"
    rows = res.profile.to_rows()
    with p.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    written.append(p)
    if res.attention:
        p = out / "attention.csv"
        with p.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["layer", "head", "diag", "T", "diag_mass", "offdiag_mean", "uniform", "entropy", "max_entropy"])
            for a in res.attention:
                for h in range(a.heads):
                    w.writerow([a.layer, h, a.diag, a.steps, float(a.diag_mass[h]), float(a.offdiag_mean[h]),
                                a.uniform, float(a.entropy[h]), a.max_entropy])
        written.append(p)
    if save_jacobian:
        p = out / "sensitivity.pt"
        torch.save({"prediction": res.sensitivity, "hidden": res.hidden_sensitivity, "hops": res.hops}, p)
        written.append(p)
    if plots:
        from .plots import plot_attention_maps, plot_hop_lag_heatmap, plot_lag_profiles

        written.append(plot_hop_lag_heatmap(res.profile, out / "hop_lag_heatmap.png", title=title))
        written.append(plot_lag_profiles(res.profile, out / "lag_profiles.png", title=title))
        if res.attention:
            written.append(plot_attention_maps(res.attention, out / "attention_maps.png", title=title))
    return written


def format_summary(res: WindowAnalysis, name: str = "") -> str:
    """A few lines for the terminal."""
    s = res.summary
    lines = [f"sensitivity of {name or 'the model'} ({s['engine']} Jacobian, {s['jacobian_seconds']} s)"]
    lines.append(f"  share on the own node (hop 0): {s['node_diagonal_share']:.3f}; mean hop-0 / hop-1 / hop-2 / "
                 f"hop-3 ratio: {s['hop0_over_hop1']:.2f} / {s['hop0_over_hop2']:.2f} / {s['hop0_over_hop3']:.2f}; "
                 f"farthest hop reached: {s['max_hop_reached']:g}")
    lines.append(f"  share on the most recent input step: {s['most_recent_lag_share']:.3f}, on the oldest: "
                 f"{s['oldest_lag_share']:.3f} (uniform {s['uniform_lag_share']:.3f})")
    if "hidden_time_diagonal_share" in s:
        lines.append(f"  layer stack: share of d h_t / d x_t (same step) {s['hidden_time_diagonal_share']:.3f} "
                     f"(uniform {s['hidden_uniform_time_share']:.3f})")
    if res.attention:
        lines.append("  attention diagonal mass x T per layer (1 = uniform): "
                     + ", ".join(f"{a.diag_ratio:.2f}" for a in res.attention))
    lines.append(f"  graph: {res.hop_summary}")
    if res.profile.unreachable_pairs:
        lines.append(f"  unreachable pairs carry {s['unreachable_share']:.3g} of the sensitivity")
    for note in res.notes:
        lines.append(f"  note: {note}")
    return "\n".join(lines)
