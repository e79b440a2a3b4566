"""The diagonal sink against the input length, in trained forecasters: per unit of a bench results folder.

For every trained unit of ``--results`` (a ``stgnn-diag bench`` folder, e.g. a grid over ``--window 12 48 288``)
whose checkpoint is there: the attention's mean diagonal weight in units of ``1 / T'`` per layer and head
(``T'`` the layer's tokens: 1 = no preference for the own step; :func:`stgnn_diag.sensitivity.attention_diagnostics`
over ``--windows`` evenly spaced test windows), the share of the exact input Jacobian of forecast step 12
that comes from lags of 12 steps or more (``--jacobian-windows`` test windows;
:func:`stgnn_diag.sensitivity.spatiotemporal_jacobian`), and the unit's test MAE at steps 3 / 6 / 12 from its
``result.json``. Writes ``window_sink.csv`` (one row per unit and layer) and ``window_sink.png`` (diagonal
weight x T' and far-lag share against T, one line per model) into ``--out``.

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
        "heads", "diag_x_tokens", "diag_x_tokens_per_head", "far_lag_share", "far_lag_share_step1"]


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
    far, far1 = [], []
    for k in idx[np.unique(np.linspace(0, len(idx) - 1, num=min(jacobian_windows, len(idx))).round().astype(int))]:
        w = test[int(k)]
        s = spatiotemporal_jacobian(model, w["x"], splits.edge_index, splits.edge_weight,
                                    w["u"][..., :u_size] if u_size else None, out_steps=[0, predictor.horizon - 1])
        by_lag = s.sum((1, 3)).flip(-1)  # [2 output steps, lag 0 .. T-1]
        far1.append(float(by_lag[0, 12:].sum() / by_lag[0].sum()) if t > 12 else 0.0)
        far.append(float(by_lag[1, 12:].sum() / by_lag[1].sum()) if t > 12 else 0.0)
    m = result["metrics"]
    base = {"unit_id": result["unit_id"], "model": result["model"], "window": result["window"],
            "align_window": dict(result.get("overrides") or {}).get("align_window"), "seed": result["seed"],
            "steps": result.get("global_steps"), "mae@3": m.get("mae@3"), "mae@6": m.get("mae@6"),
            "mae@12": m.get("mae@12"), "far_lag_share": float(np.mean(far)), "far_lag_share_step1": float(np.mean(far1))}
    return [{**base, "layer": st.layer, "tokens": st.steps, "heads": st.heads, "diag_x_tokens": st.diag_ratio,
             "diag_x_tokens_per_head": " ".join(f"{float(v) * st.steps:.3f}" for v in st.diag_mass)} for st in stats]


def plot(rows: List[Dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for model in sorted({r["model"] for r in rows}):
        mine = [r for r in rows if r["model"] == model]
        ts = sorted({int(r["window"]) for r in mine})
        diag = [max(float(r["diag_x_tokens"]) for r in mine if int(r["window"]) == t) for t in ts]
        far = [sum(float(r["far_lag_share"]) for r in mine if int(r["window"]) == t)
               / sum(1 for r in mine if int(r["window"]) == t) for t in ts]
        axes[0].plot(ts, diag, marker="o", label=model)
        axes[1].plot(ts, far, marker="o", label=model)
    axes[0].axhline(1.0, color="grey", lw=0.8, ls="--")
    axes[0].set(xscale="log", xlabel="input steps T", ylabel="diagonal weight x tokens (largest layer)",
                title="the diagonal sink (1 = uniform)")
    axes[1].set(xscale="log", xlabel="input steps T", ylabel="share of the step-12 Jacobian",
                title="sensitivity to lags of 12 steps or more")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--results", type=Path, required=True, help="a stgnn-diag bench results folder")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--windows", type=int, default=32, help="test windows the attention is averaged over")
    p.add_argument("--jacobian-windows", type=int, default=2, help="test windows of the Jacobian")
    args = p.parse_args(argv)
    from tqdm import tqdm

    units = sorted(d for d in args.results.iterdir()
                   if (d / "result.json").is_file() and (d / "run" / "checkpoints" / "last.ckpt").is_file())
    if not units:
        p.error(f"no finished unit with its checkpoint in {args.results}")
    rows: List[Dict] = []
    for udir in tqdm(units, desc="units", unit="unit"):
        rows += unit_rows(udir, args.windows, args.jacobian_windows)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "window_sink.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=KEYS)
        w.writeheader()
        w.writerows(rows)
    plot(rows, args.out / "window_sink.png")
    print("| model | T | seed | MAE@3 | MAE@6 | MAE@12 | layer | tokens | diagonal x tokens | per head | far-lag share (step 12) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| `{r['model']}` | {r['window']} | {r['seed']} | {r['mae@3']:.3f} | {r['mae@6']:.3f} | {r['mae@12']:.3f} | "
              f"{r['layer']} | {r['tokens']} | {r['diag_x_tokens']:.2f} | {r['diag_x_tokens_per_head']} | "
              f"{r['far_lag_share']:.3f} |")
    print(f"wrote {args.out / 'window_sink.csv'}, {args.out / 'window_sink.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
