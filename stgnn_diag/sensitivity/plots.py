"""Figures of the sensitivity toolkit (matplotlib, Agg backend, small PNGs)."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Dict, Optional, Sequence

import numpy as np

from .attention import AttentionStats
from .profile import HopLagProfile
from .sweep import SweepResult


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path, dpi: int = 90) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    _plt().close(fig)
    return path


def _hop_labels(profile: HopLagProfile) -> list:
    return [str(int(h)) if math.isfinite(h) else "unreach." for h in profile.hops]


def plot_hop_lag_heatmap(profile: HopLagProfile, path, title: str = "", value: str = "mean") -> Path:
    """Heatmap hop (rows) x lag (columns) of ``profile.<value>`` (log colour scale)."""
    from matplotlib.colors import LogNorm

    plt = _plt()
    m = getattr(profile, value).numpy().copy()
    m[~np.isfinite(m) | (m <= 0)] = np.nan
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    finite = m[np.isfinite(m)]
    norm = LogNorm(vmin=max(finite.min(), finite.max() * 1e-10), vmax=finite.max()) if finite.size else None
    im = ax.imshow(m, aspect="auto", cmap="viridis", norm=norm, origin="upper")
    ax.set_yticks(range(len(profile.hops)), _hop_labels(profile))
    ax.set_xticks(range(0, len(profile.lags), max(1, len(profile.lags) // 6)))
    ax.set_xlabel("lag (input steps before the last one)")
    ax.set_ylabel("hop distance u -> v")
    ax.set_title(title or f"sensitivity ({value}) by hop and lag", fontsize=9)
    fig.colorbar(im, ax=ax, shrink=0.85)
    return _save(fig, path)


def plot_lag_profiles(profile: HopLagProfile, path, title: str = "", max_hops: int = 8) -> Path:
    """Mean sensitivity against lag, one line per hop distance (log y)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.2, 3.4))
    cmap = plt.get_cmap("viridis")
    rows = [i for i, h in enumerate(profile.hops) if math.isfinite(h)][:max_hops]
    for k, i in enumerate(rows):
        y = profile.mean[i].numpy()
        if np.isfinite(y).any() and (y > 0).any():
            ax.plot(profile.lags.numpy(), y, marker="o", ms=3, color=cmap(k / max(1, len(rows) - 1)),
                    label=f"hop {int(profile.hops[i])}")
    ax.set_yscale("log")
    ax.set_xlabel("lag (0 = most recent input)")
    ax.set_ylabel("mean block norm")
    ax.set_title(title or "lag profile per hop distance", fontsize=9)
    ax.legend(fontsize=7, ncol=2)
    return _save(fig, path)


def plot_attention_maps(stats: Sequence[AttentionStats], path, title: str = "", labels: Optional[Sequence[str]] = None
                        ) -> Path:
    """Averaged T x T attention maps side by side (PAPER.md's Figure 1), shared colour scale."""
    plt = _plt()
    n = len(stats)
    fig, axes = plt.subplots(1, n, figsize=(2.3 * n + 0.8, 2.6), squeeze=False)
    vmax = max(float(s.map.max()) for s in stats)
    for ax, s, lab in zip(axes[0], stats, labels or [s.layer for s in stats]):
        im = ax.imshow(s.map.numpy(), cmap="magma", vmin=0.0, vmax=vmax)
        ax.set_title(f"{lab}\ndiag x T = {s.diag_ratio:.2f}", fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
    axes[0][0].set_ylabel("query step")
    fig.colorbar(im, ax=list(axes[0]), shrink=0.8)
    if title:
        fig.suptitle(title, fontsize=9, y=1.04)
    return _save(fig, path)


def plot_length_sweep(sweep: SweepResult, path, title: str = "") -> Path:
    """Off-diagonal and diagonal (query path) block norms against T, with the 1/T reference line."""
    plt = _plt()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9.0, 3.4))
    fig.subplots_adjust(wspace=0.35)
    styles = dict(none="-o", mask="-s", penalty="-^", dropout="--x")
    for mode in sweep.modes():
        t = np.array(sweep.lengths(mode))
        a1.loglog(t, sweep.series(mode, "offdiag_total"), styles.get(mode, "-o"), ms=4, label=f"{mode}")
        a2.loglog(t, sweep.series(mode, "diag_query"), styles.get(mode, "-o"), ms=4, label=f"{mode}: query path")
    mode0 = sweep.modes()[0]
    t = np.array(sweep.lengths(mode0))
    a1.loglog(t, sweep.series(mode0, "value_offdiag_uniform"), "k:", label="||W_O W_V|| / T")
    a2.loglog(t, sweep.series(mode0, "diag_total"), "k-", lw=0.8, label="total diagonal (none)")
    a1.set_xlabel("T")
    a2.set_xlabel("T")
    a1.set_ylabel(f"mean off-diagonal block norm ({sweep.norm})")
    a2.set_ylabel(f"mean diagonal block norm ({sweep.norm})")
    a1.set_title("off-diagonal sensitivity ~ 1/T", fontsize=9)
    qb = sweep.series(mode0, "query_bound")
    a2.set_title(f"diagonal: query path (bound C_Q/sqrt(d_k) ~ {min(qb):.0f}-{max(qb):.0f})", fontsize=9)
    a1.legend(fontsize=7)
    a2.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=9)
    return _save(fig, path)


def plot_hop_share_comparison(profiles: Dict[str, HopLagProfile], path, title: str = "") -> Path:
    """Mean sensitivity against hop distance (averaged over lags), one line per model."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.2, 3.4))
    for name, p in profiles.items():
        pts = [(h, float(np.nanmean(p.mean[i].numpy()))) for i, h in enumerate(p.hops) if math.isfinite(h)]
        pts = [(h, y) for h, y in pts if y > 0]
        ax.semilogy([h for h, _ in pts], [y for _, y in pts], "-o", ms=3, label=name)
    ax.set_xlabel("hop distance u -> v")
    ax.set_ylabel("mean block norm (over lags)")
    ax.set_title(title or "sensitivity against hop distance", fontsize=9)
    ax.legend(fontsize=7)
    return _save(fig, path)
