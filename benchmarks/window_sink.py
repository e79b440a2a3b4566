"""The diagonal sink against the input length, in trained forecasters: per unit of a bench results folder.

For every trained unit of ``--results`` (a ``stgnn-diag bench`` folder, e.g. a grid over ``--window 12 48 288``)
whose checkpoint is there: the attention's mean diagonal weight in units of ``1 / T'`` per layer and head
(``T'`` the layer's tokens: 1 = no preference for the own step; :func:`stgnn_diag.sensitivity.attention_diagnostics`
over ``--windows`` evenly spaced test windows), the share of the exact input Jacobian of forecast step 12
that comes from lags of 12 steps or more (``--jacobian-windows`` test windows;
:func:`stgnn_diag.sensitivity.spatiotemporal_jacobian`), and the unit's test MAE at steps 3 / 6 / 12 from its
``result.json``. Writes ``window_sink.csv`` (one row per unit and layer) and ``window_sink.png`` (diagonal
weight x T', far-lag share and MAE at step 12 against T, one line per model, and the step-12 Jacobian's
cumulative share by lag, one line per model and T) into ``--out``; ``--plot-only`` redraws the figure from the
CSV (no checkpoints needed).

Usage::

    python benchmarks/window_sink.py --results models/results/windows-cpu --out models/results/windows-cpu
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Dict, List

KEYS = ["unit_id", "model", "window", "align_window", "seed", "steps", "mae@3", "mae@6", "mae@12", "layer", "tokens",
        "heads", "diag_x_tokens", "diag_x_tokens_per_head", "far_lag_share", "far_lag_share_step1", "lag_profile"]


def unit_rows(udir: Path, windows: int, jacobian_windows: int) -> List[Dict]:
    """The rows of one finished unit folder (``result.json`` and ``run/checkpoints/last.ckpt``)."""
    import numpy as np
    import torch

    from stgnn_diag.sensitivity import attention_diagnostics, spatiotemporal_jacobian
    from stgnn_diag.training import load_predictor
    from stgnn_diag.training.predictor import predictor_splits

    result = json.loads((udir / "result.json").read_text())
    ckpt = udir / "run" / "checkpoints" / "last.ckpt"
    predictor = load_predictor(checkpoint=ckpt)
    splits = predictor_splits(predictor, progress=False)
    test, model = splits.test, predictor.module.model.eval()
    u_size = getattr(model, "exog_size", 0)
    idx = np.unique(np.linspace(0, len(test) - 1, num=min(windows, len(test))).round().astype(int))
    b = test[idx]
    with torch.no_grad():
        stats = attention_diagnostics(model, b["x"], splits.edge_index, splits.edge_weight,
                                      b["u"][..., :u_size] if u_size else None)
    t = test.window
    far1, profiles = [], []
    for k in idx[np.unique(np.linspace(0, len(idx) - 1, num=min(jacobian_windows, len(idx))).round().astype(int))]:
        w = test[int(k)]
        s = spatiotemporal_jacobian(model, w["x"], splits.edge_index, splits.edge_weight,
                                    w["u"][..., :u_size] if u_size else None, out_steps=[0, predictor.horizon - 1])
        by_lag = s.sum((1, 3)).flip(-1)  # [2 output steps, lag 0 .. T-1]
        far1.append(float(by_lag[0, 12:].sum() / by_lag[0].sum()) if t > 12 else 0.0)
        profiles.append((by_lag[1] / by_lag[1].sum()).numpy())
    profile = np.mean(profiles, 0)  # step 12's share by lag; its tail beyond lag 11 is the far-lag share
    m = result["metrics"]
    base = {"unit_id": result["unit_id"], "model": result["model"], "window": result["window"],
            "align_window": dict(result.get("overrides") or {}).get("align_window"), "seed": result["seed"],
            "steps": result.get("global_steps"), "mae@3": m.get("mae@3"), "mae@6": m.get("mae@6"),
            "mae@12": m.get("mae@12"), "far_lag_share": float(profile[12:].sum()), "far_lag_share_step1": float(np.mean(far1)),
            "lag_profile": " ".join(f"{v:.5f}" for v in profile)}
    return [{**base, "layer": st.layer, "tokens": st.steps, "heads": st.heads, "diag_x_tokens": st.diag_ratio,
             "diag_x_tokens_per_head": " ".join(f"{float(v) * st.steps:.3f}" for v in st.diag_mass)} for st in stats]


def plot(rows: List[Dict], path: Path) -> None:
    """Four panels against the input length T, one line per model (seed means): the largest layer's diagonal
    weight x tokens, the far-lag share of the step-12 Jacobian, the test MAE at step 12, and the step-12
    Jacobian's cumulative share by lag (one line per model and T; rows without ``lag_profile`` are left out)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    def mean_at(mine, t, key):
        per_unit = {}
        for r in mine:  # one value per unit (its largest layer for the diagonal), then the mean over seeds
            if int(r["window"]) == t:
                per_unit[r["unit_id"]] = max(per_unit.get(r["unit_id"], float(r[key])), float(r[key]))
        return float(np.mean(list(per_unit.values())))

    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    (a, b), (c, d) = axes
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    windows = sorted({int(r["window"]) for r in rows})
    styles = {t: ("-", "--", ":", "-.", (0, (1, 4)))[i % 5] for i, t in enumerate(windows)}  # one per window
    for i, model in enumerate(sorted({r["model"] for r in rows})):
        mine = [r for r in rows if r["model"] == model]
        ts = sorted({int(r["window"]) for r in mine})
        color = colors[i % len(colors)]
        a.plot(ts, [mean_at(mine, t, "diag_x_tokens") for t in ts], marker="o", color=color, label=model)
        b.plot(ts, [mean_at(mine, t, "far_lag_share") for t in ts], marker="o", color=color, label=model)
        c.plot(ts, [mean_at(mine, t, "mae@12") for t in ts], marker="o", color=color, label=model)
        for t in ts:
            profiles = {r["unit_id"]: r["lag_profile"] for r in mine if int(r["window"]) == t and r.get("lag_profile")}
            if profiles:
                prof = np.mean([np.array(v.split(), dtype=float) for v in profiles.values()], 0)
                d.plot(np.arange(1, t + 1), np.cumsum(prof), color=color, ls=styles[t],
                       label=f"{model}, T = {t}")
    a.axhline(1.0, color="grey", lw=0.8, ls="--")
    a.set(xscale="log", xlabel="input steps T", ylabel="diagonal weight x tokens (largest layer)",
          title="the diagonal sink (1 = uniform)")
    b.set(xscale="log", xlabel="input steps T", ylabel="share of the step-12 Jacobian",
          title="sensitivity to lags of 12 steps or more")
    c.set(xscale="log", xlabel="input steps T", ylabel="test MAE at step 12", title="accuracy at step 12")
    d.axvline(12, color="grey", lw=0.8, ls="--")
    d.set(xscale="log", xlabel="lag + 1 (steps back from the last input)", ylabel="cumulative share",
          title="step-12 Jacobian by lag")
    for ax in (a, b, c):  # a tick at every window measured, written plainly
        ax.set_xticks(windows, [str(t) for t in windows])
        ax.minorticks_off()
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def markdown_table(rows: List[Dict]) -> str:
    out = ["| model | T | seed | MAE@3 | MAE@6 | MAE@12 | layer | tokens | diagonal x tokens | per head | far-lag share (step 12) |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| `{r['model']}` | {r['window']} | {r['seed']} | {float(r['mae@3']):.3f} | {float(r['mae@6']):.3f} | "
                   f"{float(r['mae@12']):.3f} | {r['layer']} | {r['tokens']} | {float(r['diag_x_tokens']):.2f} | "
                   f"{r['diag_x_tokens_per_head']} | {float(r['far_lag_share']):.3f} |")
    return "\n".join(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--results", type=Path, help="a stgnn-diag bench results folder (not with --plot-only)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--windows", type=int, default=32, help="test windows the attention is averaged over")
    p.add_argument("--jacobian-windows", type=int, default=2, help="test windows of the Jacobian")
    p.add_argument("--plot-only", action="store_true", help="redraw window_sink.png from --out/window_sink.csv")
    args = p.parse_args(argv)
    from tqdm import tqdm

    if args.plot_only:
        with open(args.out / "window_sink.csv") as f:
            rows = list(csv.DictReader(f))
        plot(rows, args.out / "window_sink.png")
        print(f"wrote {args.out / 'window_sink.png'} from {args.out / 'window_sink.csv'}")
        return 0
    if args.results is None:
        p.error("--results is required (a stgnn-diag bench results folder), unless --plot-only")
    units = sorted(d for d in args.results.iterdir()
                   if (d / "result.json").is_file() and (d / "run" / "checkpoints" / "last.ckpt").is_file())
    if not units:
        p.error(f"no finished unit with its checkpoint in {args.results}")
    rows = []
    for udir in tqdm(units, desc="units", unit="unit"):
        rows += unit_rows(udir, args.windows, args.jacobian_windows)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "window_sink.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=KEYS)
        w.writeheader()
        w.writerows(rows)
    plot(rows, args.out / "window_sink.png")
    print(markdown_table(rows))
    print(f"wrote {args.out / 'window_sink.csv'}, {args.out / 'window_sink.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
