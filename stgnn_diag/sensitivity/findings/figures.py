"""The findings report's figures (PNGs next to the README)."""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List

from ..plots import (plot_attention_maps, plot_hop_lag_heatmap, plot_hop_share_comparison, plot_lag_profiles,
                     plot_length_sweep)
from .models import LABELS


def write_figures(analyses: Dict[str, tuple], sweep, args, out: Path) -> List[Path]:
    """Write the hop x lag, lag-profile, hop-decay, attention-map and length-sweep PNGs into ``out``.

    ``analyses`` as returned by :func:`~stgnn_diag.sensitivity.findings.measurements.measure_models`;
    ``sweep`` a :class:`~stgnn_diag.sensitivity.sweep.SweepResult`. Warns (prints) about figures over
    200 KB. Returns the paths written.
    """
    figs = []
    for arch in args.arrangements:
        name = f"{arch}_none"
        if name in analyses:
            res = analyses[name][0]
            figs.append(plot_hop_lag_heatmap(res.profile, out / f"hop_lag_{arch}.png", title=f"{name}: mean block norm"))
            figs.append(plot_lag_profiles(res.profile, out / f"lag_profiles_{arch}.png", title=f"{name}: lag profile per hop"))
    figs.append(plot_hop_share_comparison({n: analyses[n][0].profile for n in analyses}, out / "hop_decay.png",
                                          title="mean sensitivity against hop distance (test window)"))
    for arch in args.arrangements:
        names = [f"{arch}_{v}" for v in args.variants if f"{arch}_{v}" in analyses]
        if names:
            last = [analyses[n][1][-1] for n in names]
            figs.append(plot_attention_maps(last, out / f"attention_last_layer_{arch}.png",
                                            labels=[LABELS.get(n.split("_")[-1], n) for n in names],
                                            title=f"{arch}: last attention layer, mean over {args.attention_windows} "
                                                  f"test windows, nodes and heads"))
    figs.append(plot_length_sweep(sweep, out / "length_sweep.png",
                                  title="one attention layer (d=64, 4 heads, xavier init), LayerNorm'd random inputs"))
    for f in figs:
        if f.stat().st_size > 200_000:
            print(f"warning: {f} is {f.stat().st_size // 1000} KB")
    return figs
