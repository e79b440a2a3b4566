"""Regenerate the findings report ``docs/sensitivity/README.md`` and its figures.

Usage::

    STGNN_DIAG_DATA=../shared/data python -m stgnn_diag.sensitivity.report --out docs/sensitivity

Models: the five T&S variants of the diagonal-sink paper and their TTS counterparts (hidden 32 by
default). Weights: a checkpoint ``<checkpoints>/<model>-*/checkpoints/last.ckpt`` when
``--checkpoints`` names a folder of training runs (``stgnn-diag train`` writes them), otherwise a
brief built-in training (``--train-steps``, default 100 steps of batch 16; 0 = untrained). The
README states which was used. Everything is seeded; on CPU the numbers are reproducible.
"""
from __future__ import annotations

import argparse
import copy
import glob
import json
import math
import time
from pathlib import Path
from typing import Dict, List

import numpy as np
import torch
from tqdm.auto import tqdm

from ..datasets import MetrLA, make_splits
from ..nn import TemporalAttention
from ..zoo import create_model
from .analysis import analyze_window
from .attention import attention_diagnostics
from .checkpoint import build_model
from .paths import path_bounds, path_norm_summary
from .sweep import SweepResult, sequence_length_sweep

VARIANTS = ("noresid", "none", "mask", "dropout", "penalty")
LABELS = {"noresid": "(a) no residual", "none": "(b) none", "mask": "(c) mask", "dropout": "(d) dropout",
          "penalty": "(e) penalty"}


# ------------------------------------------------------------------------------------------ weights
def brief_train(model, splits, steps: int, batch_size: int = 16, lr: float = 3e-3, seed: int = 0,
                progress: bool = True) -> List[float]:
    """A short AdamW run on random training windows (masked MAE on scaled targets); returns the losses."""
    if steps <= 0:
        return []
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    mean, std = float(np.asarray(splits.scaler.mean).mean()), float(np.asarray(splits.scaler.std).mean())
    ei, ew, tr = splits.edge_index, splits.edge_weight, splits.train
    model.train()
    losses = []
    for _ in tqdm(range(steps), disable=not progress, desc="brief training", leave=False):
        b = tr.get_batch(torch.randint(0, len(tr), (batch_size,), generator=g))
        u = b["u"][..., :model.exog_size] if model.exog_size else None
        pred = model(b["x"], ei, ew, u=u)
        mask = b["mask"].to(pred.dtype)
        loss = (((pred - (b["y"] - mean) / std).abs()) * mask).sum() / mask.sum().clamp(min=1)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        losses.append(float(loss.detach()))
    return losses


@torch.no_grad()
def test_mae(model, splits, n_windows: int = 256) -> float:
    """Masked MAE (mph) over ``n_windows`` evenly spaced test windows, all 12 steps pooled."""
    model.eval()
    ds = splits.test
    pos = torch.linspace(0, len(ds) - 1, n_windows).long()
    mean, std = float(np.asarray(splits.scaler.mean).mean()), float(np.asarray(splits.scaler.std).mean())
    err = cnt = 0.0
    for s in range(0, n_windows, 64):
        b = ds.get_batch(pos[s:s + 64])
        u = b["u"][..., :model.exog_size] if model.exog_size else None
        pred = model(b["x"], splits.edge_index, splits.edge_weight, u=u) * std + mean
        m = b["mask"]
        err += float((pred - b["y"]).abs()[m].sum())
        cnt += float(m.sum())
    return err / max(cnt, 1.0)


def get_model(name: str, args, splits) -> (torch.nn.Module, str):
    """The model and a one-line description of where its weights come from."""
    if args.checkpoints:
        found = sorted(glob.glob(str(Path(args.checkpoints) / f"{name}-*" / "checkpoints" / "last.ckpt")))
        if found:
            model, _ = build_model(name, found[0], n_nodes=splits.n_nodes)
            return model, f"checkpoint `{found[0]}`"
    torch.manual_seed(args.seed)
    model = create_model(name, n_nodes=splits.n_nodes, hidden_size=args.hidden_size)
    losses = brief_train(model, splits, args.train_steps, seed=args.seed, progress=not args.no_progress)
    model.eval()
    if not losses:
        return model, "untrained (seeded initialisation)"
    return model, (f"brief training: {len(losses)} AdamW steps of 16 windows (lr 3e-3), last-20-step loss "
                   f"{np.mean(losses[-20:]):.3f} (scaled MAE)")


# ------------------------------------------------------------------------------------------ measurements
def last_attention_input(model, x, ei, ew, u):
    """The input ``[T, N, d]`` of the model's last TemporalAttention on one window, and the layer."""
    layers = [m for m in model.modules() if isinstance(m, TemporalAttention)]
    layer, store = layers[-1], {}
    h = layer.register_forward_hook(lambda mod, a, o: store.setdefault("x", a[0].detach()))
    try:
        with torch.no_grad():
            model(x.unsqueeze(0), ei, ew, u=None if u is None else u.unsqueeze(0))
    finally:
        h.remove()
    return store["x"][0], layer


def layer_paths(model, x, ei, ew, u, nodes) -> Dict[str, float]:
    """Mean path norms of the last attention layer over the sequences of ``nodes`` (float64)."""
    xin, layer = last_attention_input(model, x, ei, ew, u)
    lay = copy.deepcopy(layer).double().eval()
    acc: Dict[str, float] = {}
    for n in nodes:
        s = path_norm_summary(lay, xin[:, n].double(), norm="spectral")
        for k, v in s.items():
            acc[k] = acc.get(k, 0.0) + v / len(nodes)
    b = path_bounds(lay, xin[:, nodes[0]].double())
    acc["value_offdiag_uniform"] = b.value_offdiag_uniform
    acc["query_bound"] = b.query_bound
    return acc


def map_pattern(m) -> Dict[str, float]:
    """Shape of an averaged attention map ``[T, T]``: diagonal weight, column stripes, uniformity.

    ``diag_x_T``: mean diagonal weight x T; ``col_max_x_T``: the largest column mean x T (a key every query
    attends to); ``col_argmax``: that key step; ``row_spread``: mean |a_ij - column mean| / mean a_ij (0 when
    all query rows are equal, i.e. pure column stripes, diagonal excluded); ``pattern``: a one-word summary.
    """
    a = np.asarray(m, dtype=float)
    t = a.shape[0]
    off = ~np.eye(t, dtype=bool)
    col = np.array([a[off[:, j], j].mean() for j in range(t)])
    spread = float(np.abs(a - col[None, :])[off].mean() / a[off].mean())
    diag = float(np.diag(a).mean() * t)
    cmax = float(col.max() * t)
    if diag > 1.5 and diag > cmax:
        pat = "diagonal"
    elif cmax > 1.5 and spread < 0.5:
        pat = "column stripes"
    elif cmax < 1.2 and diag > 0.8:
        pat = "uniform"
    else:
        pat = "mixed"
    return {"diag_x_T": diag, "col_max_x_T": cmax, "col_argmax": int(col.argmax()), "row_spread": spread,
            "pattern": pat}


def short_source(src: str) -> str:
    """``"100 steps, loss 0.41"`` / ``"checkpoint"`` / ``"untrained"`` for the tables."""
    if src.startswith("brief training"):
        steps = src.split(":")[1].split("AdamW")[0].strip()
        loss = src.rsplit("loss", 1)[1].split("(")[0].strip()
        return f"{steps} steps, loss {loss}"
    return "checkpoint" if src.startswith("checkpoint") else "untrained"


def fmt(v, nd=3) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "n/a"
        if v != 0 and (abs(v) >= 1e4 or abs(v) < 10 ** -nd):
            return f"{v:.2e}"
        return f"{v:.{nd}f}"
    return str(v)


# ------------------------------------------------------------------------------------------ main
def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="docs/sensitivity")
    p.add_argument("--data-root")
    p.add_argument("--checkpoints", help="folder of training runs <model>-*/checkpoints/last.ckpt to use if present")
    p.add_argument("--train-steps", type=int, default=100, help="brief training for models without a checkpoint")
    p.add_argument("--hidden-size", type=int, default=32)
    p.add_argument("--arrangements", nargs="+", default=["tas_attn", "tts_attn"])
    p.add_argument("--variants", nargs="+", default=list(VARIANTS))
    p.add_argument("--window", type=int, default=0, help="test window of the Jacobians")
    p.add_argument("--attention-windows", type=int, default=32, help="test windows the attention is averaged over")
    p.add_argument("--lengths", type=int, nargs="+", default=[6, 12, 24, 48, 96, 192])
    p.add_argument("--sweep-rows", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--render-only", action="store_true",
                   help="rewrite README.md from the results.json of an earlier run in --out (no computation)")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t_start = time.time()
    if args.render_only:
        saved = json.loads((out / "results.json").read_text())
        cfg = argparse.Namespace(**saved["config"])
        (out / "README.md").write_text(render(saved["models"], SweepResult(saved["sweep"]), cfg, None,
                                              saved.get("seconds", 0.0)))
        print(f"rewrote {out / 'README.md'} from results.json")
        return 0

    from .plots import (plot_attention_maps, plot_hop_lag_heatmap, plot_hop_share_comparison, plot_lag_profiles,
                        plot_length_sweep)

    ds = MetrLA(args.data_root, download=False, progress=False)
    splits = make_splits(ds, "dcrnn")
    w = splits.test[args.window]
    x, ei, ew = w["x"], ds.edge_index, ds.edge_weight
    pos = torch.linspace(0, len(splits.test) - 1, args.attention_windows).long()
    batch = splits.test.get_batch(pos)
    nodes = list(range(0, ds.adj.shape[0], max(1, ds.adj.shape[0] // 8)))[:8]

    results: Dict[str, dict] = {}
    analyses = {}
    for arch in args.arrangements:
        for var in args.variants:
            name = f"{arch}_{var}"
            model, source = get_model(name, args, splits)
            u = None
            res = analyze_window(model, x, ei, ew, u, directed=False, hidden=True, progress=not args.no_progress)
            att = attention_diagnostics(model, batch["x"], ei, ew)
            paths = layer_paths(model, x, ei, ew, u, nodes)
            analyses[name] = (res, att)
            means = [float(np.nanmean(res.profile.mean[i].numpy())) for i, hv in enumerate(res.profile.hops)
                     if math.isfinite(hv) and hv <= res.summary["max_hop_reached"]]
            results[name] = {"source": source, "test_mae_256": test_mae(model, splits), **res.summary,
                             "hop_step_factors": [a / b for a, b in zip(means[:-1], means[1:]) if b > 0],
                             "attention": [a.to_dict() | {"map": None} for a in att],
                             "attention_diag_x_T_avg32": [a.diag_ratio for a in att],
                             "attention_last_map": att[-1].map.tolist(),
                             "attention_entropy_ratio": [float(a.entropy.mean()) / a.max_entropy for a in att],
                             "last_layer_paths": paths}
            print(f"{name}: {source}; jacobian {res.summary['jacobian_seconds']} s", flush=True)

    sweep = sequence_length_sweep(dim=64, heads=4, lengths=args.lengths, max_rows=args.sweep_rows, seed=args.seed,
                                  progress=not args.no_progress)
    sweep.write_csv(out / "length_sweep.csv")

    # ---- figures
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

    (out / "results.json").write_text(json.dumps({"config": vars(args), "models": results, "sweep": sweep.rows,
                                                  "seconds": time.time() - t_start}, indent=1, default=float))
    (out / "README.md").write_text(render(results, sweep, args, ds, time.time() - t_start))
    print(f"wrote {out / 'README.md'} and {len(figs)} figures in {time.time() - t_start:.0f} s")
    return 0


# ------------------------------------------------------------------------------------------ text
def render(results: Dict[str, dict], sweep, args, ds, seconds: float) -> str:
    r = results
    arches = [a for a in args.arrangements if f"{a}_none" in r]
    L: List[str] = []
    add = L.append
    verdicts: Dict[str, bool] = {}

    def moved(a: dict, b: dict) -> str:
        x, y = a.get("hidden_time_diagonal_share", math.nan), b.get("hidden_time_diagonal_share", math.nan)
        if abs(x / y - 1) < 0.15:
            return "barely moves"
        return "drops" if x < y else "rises"
    add("# Sensitivity findings: over-squashing and the diagonal sink on METR-LA\n")
    add("Generated by `STGNN_DIAG_DATA=../shared/data python -m stgnn_diag.sensitivity.report --out docs/sensitivity` "
        + (f"(this run: {seconds / 60:.0f} min on {args.threads} CPU thread(s); " if seconds > 0 else
           f"(on {args.threads} CPU thread(s); ") + "options: `--checkpoints`, `--train-steps`, "
        "`--hidden-size`, `--window`). Every number below is computed by that command, and the sentences "
        "that judge them (agree / do not agree) are chosen from those numbers on every run.\n")
    kinds = sorted({v["source"].split(":")[0] for v in r.values()})
    add("## Setup\n")
    add(f"- Data: METR-LA, canonical DCRNN protocol, test window {args.window} for the Jacobians "
        f"(12 steps in, 12 out, 207 sensors); attention averaged over {args.attention_windows} evenly spaced "
        "test windows. Sensor graph: DCRNN adjacency, `edge_index[0]` = source; hop distances ignore direction "
        "(the diffusion convolution passes messages both ways). One sensor (index 26) has no edge to any other: "
        "its 412 ordered pairs have infinite hop distance and form the `unreachable` row of the profiles.")
    add(f"- Models: zoo entries {', '.join('`' + n + '`' for n in r)}, hidden size {args.hidden_size}, "
        "3 temporal + 3 graph sub-layers each (T&S: interleaved; TTS: all temporal first), 4 heads, "
        "diffusion convolution (K = 2, both directions), no covariates.")
    if any(k.startswith("checkpoint") for k in kinds):
        add("- Weights: " + ", ".join(kinds) + " (per model in the table of section 1).")
    else:
        add("- Weights: " + ", ".join(kinds) + (f" ({args.train_steps} AdamW steps of 16 random training windows, "
            "lr 3e-3, masked MAE, seed " + str(args.seed) + ")" if args.train_steps > 0 else "")
            + ". This is **far from trained** (the paper trains 150 epochs): the attention figures show where "
            "a short run starts to go, not the converged models of PAPER.md's Figure 1. Rerun with "
            "`--checkpoints runs/` after `stgnn-diag train` to analyse trained models.")
    add("- Jacobians: `spatiotemporal_jacobian` (structured sparse forward mode, exact; checked against "
        "`torch.autograd.functional.jacobian` in the tests), Frobenius block norms; lag 0 = the most recent "
        "input step.\n")

    # ---- 1. T&S vs TTS
    add("## 1. T&S vs TTS on the METR-LA graph\n")
    add("| model | weights | test MAE (256 windows, mph) | share on own node (hop 0) | hop-0 / hop-1 | hop-0 / hop-2 | "
        "hop-0 / hop-3 | farthest hop reached | most recent lag share | oldest lag share | layer stack: same-step "
        "share |")
    add("|---|---|---|---|---|---|---|---|---|---|---|")
    for n, v in r.items():
        add(f"| `{n}` | {short_source(v['source'])} | {fmt(v['test_mae_256'], 2)} | {fmt(v['node_diagonal_share'])} | {fmt(v['hop0_over_hop1'], 1)} | "
            f"{fmt(v['hop0_over_hop2'], 1)} | {fmt(v['hop0_over_hop3'], 1)} | {v['max_hop_reached']:g} | "
            f"{fmt(v['most_recent_lag_share'])} | {fmt(v['oldest_lag_share'])} | "
            f"{fmt(v.get('hidden_time_diagonal_share', math.nan))} |")
    add(f"\nUniform shares for comparison: lag 1/12 = {1 / 12:.3f}; same step 1/12 = {1 / 12:.3f}.\n")
    for a in arches:
        add(f"![{a} hop x lag](hop_lag_{a}.png) ![{a} lag profiles](lag_profiles_{a}.png)\n")
    add("![hop decay](hop_decay.png)\n")
    if "tas_attn_none" in r and "tts_attn_none" in r:
        tas, tts = r["tas_attn_none"], r["tts_attn_none"]
        steps = [f for v in (tas, tts) for f in v["hop_step_factors"]]
        add(f"**Reading.** Sensitivity falls by a factor {min(steps):.0f} to {max(steps):.0f} per additional hop "
            "(`hop_decay.png`, log scale): spatial over-squashing, as the over-squashing paper describes for "
            "message passing with `(S^L)_uv` factors. Three graph layers with K = 2 reach at most 6 hops "
            f"(T&S / TTS reach hop {tas['max_hop_reached']:g} / {tts['max_hop_reached']:g}); "
            "sensors farther away, and the isolated sensor 26, have exactly zero influence.")
        hop1 = (tas["hop0_over_hop1"], tts["hop0_over_hop1"])
        hop3 = (tas["hop0_over_hop3"], tts["hop0_over_hop3"])
        same = max(hop3) / min(hop3) < 3 and max(hop1) / min(hop1) < 1.5
        verdicts["arrangements_differ"] = not same
        add(f"- The over-squashing paper's bound depends only on the total budgets (here 3 temporal + 3 graph "
            f"layers in both), so it is the same for TTS and T&S. Share on the own node: {fmt(tas['node_diagonal_share'])} "
            f"(T&S) vs {fmt(tts['node_diagonal_share'])} (TTS); hop-0/hop-1 ratios "
            f"{fmt(hop1[0], 1)} (T&S) vs {fmt(hop1[1], 1)} (TTS), hop-0/hop-3 {fmt(hop3[0], 1)} vs {fmt(hop3[1], 1)}: "
            + ("**similar decay — consistent with a shared bound.**" if same else
               "**the two arrangements decay at clearly different rates at this point — the shared bound says "
               "nothing about which one is tighter, and the measurement shows they differ.**"))
        lag_ok = max(tas["oldest_lag_share"], tts["oldest_lag_share"]) < 1.5 / 12
        verdicts["no_primacy"] = lag_ok
        add(f"- Temporal: the over-squashing paper finds that stacked *causal convolutions* favour the earliest "
            f"steps. Our temporal processor is bidirectional attention. Share of the sensitivity on the oldest "
            f"input step: {fmt(tas['oldest_lag_share'])} (T&S) / {fmt(tts['oldest_lag_share'])} (TTS); on the most "
            f"recent: {fmt(tas['most_recent_lag_share'])} / {fmt(tts['most_recent_lag_share'])} (uniform "
            f"{1 / 12:.3f}). "
            + ("**No primacy effect here** — expected, since attention has no causal receptive-field growth; "
               "the paper's TCN finding does not transfer to this processor." if lag_ok else
               "**The oldest step gets more than its uniform share** — a primacy-like bias, as in the paper.")
            + (f" Instead the most recent step carries {max(tas['most_recent_lag_share'], tts['most_recent_lag_share']) * 12:.1f}x "
               "its uniform share: a recency bias (a forecaster of traffic speed leans on the latest readings)."
               if min(tas["most_recent_lag_share"], tts["most_recent_lag_share"]) > 1.5 / 12 else ""))
        add("")

    # ---- 2. diagonal sink
    add("## 2. The diagonal sink with and without each regularizer\n")
    add("Attention (last column: all layers, mean diagonal weight in units of 1/T; 1 = no preference for the "
        "own step), the same-step share of the layer stack's Jacobian, and the paths of the last attention "
        "layer's Jacobian on the real hidden states of the test window (mean spectral block norms over 8 "
        "sensors; closed forms of `stgnn_diag.sensitivity.paths`).\n")
    add("| model | attention diag x T per layer | entropy / max | layer stack same-step share | diag: residual | "
        "diag: value | diag: key | diag: query | off-diag: value | off-diag: key | off-diag total | "
        "||W_O W_V|| / T |")
    add("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n, v in r.items():
        pth = v["last_layer_paths"]
        add(f"| `{n}` | {', '.join(fmt(a, 2) for a in v['attention_diag_x_T_avg32'])} | "
            f"{', '.join(fmt(a, 3) for a in v['attention_entropy_ratio'])} | "
            f"{fmt(v.get('hidden_time_diagonal_share', math.nan))} | {fmt(pth['diag_residual'], 2)} | "
            f"{fmt(pth['diag_value'])} | {fmt(pth['diag_key'])} | {fmt(pth['diag_query'])} | "
            f"{fmt(pth['offdiag_value'])} | {fmt(pth['offdiag_key'])} | {fmt(pth['offdiag_total'])} | "
            f"{fmt(pth['value_offdiag_uniform'])} |")
    add("")
    for a in arches:
        add(f"![{a} attention](attention_last_layer_{a}.png)\n")
    add("**Reading.**")
    for a in arches:
        none, mask = r.get(f"{a}_none"), r.get(f"{a}_mask")
        nores, drop, pen = r.get(f"{a}_noresid"), r.get(f"{a}_dropout"), r.get(f"{a}_penalty")
        if not none:
            continue
        qn = none["last_layer_paths"]["diag_query"]
        vn = none["last_layer_paths"]["diag_value"]
        add(f"- `{a}`: on the diagonal the query path ({fmt(qn)}) "
            + ("exceeds" if qn > vn else "is smaller than") + f" the value path ({fmt(vn)}), and both sit on "
            f"top of the identity residual (norm 1) — the Jacobian's diagonal is dominated by the residual, as "
            "PAPER.md's decomposition says; off the diagonal every block is scaled by an attention weight "
            f"(mean total {fmt(none['last_layer_paths']['offdiag_total'])} vs the uniform-attention value "
            f"path {fmt(none['last_layer_paths']['value_offdiag_uniform'])}).")
        if mask:
            add(f"  - mask: diagonal attention is exactly 0 (diag x T = "
                f"{', '.join(fmt(x, 2) for x in mask['attention_diag_x_T_avg32'])}) and the value and key paths "
                f"vanish on the diagonal (value {fmt(mask['last_layer_paths']['diag_value'])}), **as designed**; "
                f"the query path ({fmt(mask['last_layer_paths']['diag_query'])}) and the residual remain, so the "
                f"layer stack's same-step share {moved(mask, none)} ({fmt(mask.get('hidden_time_diagonal_share'))} vs "
                f"{fmt(none.get('hidden_time_diagonal_share'))} without). The mask removes attention to the own "
                "step, not the Jacobian's diagonal sink.")
        if nores:
            add(f"  - no residual: the identity path is gone and the same-step share of the layer stack "
                f"{moved(nores, none)} ({fmt(nores.get('hidden_time_diagonal_share'))} vs "
                f"{fmt(none.get('hidden_time_diagonal_share'))}, uniform {1 / 12:.3f})"
                + (" — the residual is the main carrier of the diagonal sink in these models." if
                   nores.get("hidden_time_diagonal_share", 1) < 0.5 * none.get("hidden_time_diagonal_share", 1) else "."))
            pn = nores["last_layer_paths"]
            if (pn["diag_query"] < 1e-2 * max(pn["diag_value"], 1e-30)
                    and pn["offdiag_key"] < 1e-2 * max(pn["offdiag_value"], 1e-30)):
                add(f"    Its key and query paths are almost zero (query {fmt(pn['diag_query'])}, key "
                    f"{fmt(pn['offdiag_key'])} vs value {fmt(pn['offdiag_value'])}): without the skip connection "
                    "the hidden states that reach the last attention layer are nearly the same at every step "
                    "(`v_k - vbar_i ~ 0`), the rank collapse of pure attention stacks. With these weights, removing the "
                    "residual does not make the layer mix time better, it erases the temporal structure — in line "
                    "with variant (a) being clearly the worst in PAPER.md's Table 1.")
        if drop:
            add(f"  - diagonal dropout acts only in training; at evaluation the layer is plain attention, so any "
                f"difference from (b) (diag x T {', '.join(fmt(x, 2) for x in drop['attention_diag_x_T_avg32'])}) "
                "comes from the weights it trained.")
        if pen:
            add(f"  - penalty c = -0.05 multiplies each diagonal weight by about e^-0.05 = 0.95 before "
                f"renormalising: diag x T {', '.join(fmt(x, 2) for x in pen['attention_diag_x_T_avg32'])} — a "
                "small nudge, as the paper's setting intends.")
    att_all = [x for n, v in r.items() if not n.endswith("_mask") for x in v["attention_diag_x_T_avg32"]]
    ent_all = [x for v in r.values() for x in v["attention_entropy_ratio"]]
    near_uniform = max(abs(x - 1) for x in att_all) < 0.3 and min(ent_all) > 0.9
    verdicts["near_uniform"] = near_uniform
    paper = {"noresid": "diagonal", "mask": "column stripes", "dropout": "column stripes", "penalty": "column stripes"}
    add("- PAPER.md's Figure 1 (trained models, last layer): (a) a bright diagonal, (c) a zero diagonal with "
        "column stripes, (d)/(e) column stripes, all values near 1/12. Measured last-layer maps (mean over "
        f"{args.attention_windows} test windows, nodes and heads; `col max x T` = the largest mean weight a key "
        "receives, x T; `row spread` = how much the query rows differ, 0 = identical rows):\n")
    add("| model | pattern | diag x T | col max x T (key step) | row spread | PAPER.md | verdict |")
    add("|---|---|---|---|---|---|---|")
    agree, disagree, stripes = [], [], [1.0]
    for n, v in r.items():
        if "attention_last_map" not in v:
            continue
        mp = map_pattern(v["attention_last_map"])
        stripes.append(mp["col_max_x_T"])
        var = n.split("_")[-1]
        want = paper.get(var)
        if want is None:
            verdict = "(not described)"
        elif mp["pattern"] == want:
            verdict, _ = "agrees", agree.append(n)
        else:
            verdict, _ = "differs", disagree.append(n)
        add(f"| `{n}` | {mp['pattern']} | {mp['diag_x_T']:.2f} | {mp['col_max_x_T']:.2f} ({mp['col_argmax']}) | "
            f"{mp['row_spread']:.2f} | {want or '-'} | {verdict} |")
    verdicts["fig1_agree"], verdicts["fig1_disagree"] = agree, disagree
    add("")
    if near_uniform:
        add("  The attention is still close to uniform: **we cannot confirm or refute the trained-model picture "
            "with these weights**; it needs the full training budget.")
    elif agree or disagree:
        add(f"  With these weights the maps agree with PAPER.md for {len(agree)} and differ for {len(disagree)} of "
            f"the described variants ({', '.join('`' + n + '`' for n in disagree) or 'none'} differ). Where stripes "
            "appear they sit on the most recent key steps: every query reads the latest readings, the recency "
            "that also dominates the Jacobian's lag profile (section 1). PAPER.md reports all values near 1/12; "
            f"here the strongest key column reaches {max(stripes):.1f}/12. These are short runs; the paper's "
            "converged maps may differ.\n")

    # ---- 3. length sweep
    add("## 3. The 1/T decay against the bound\n")
    rows = sweep.rows
    t_min, t_max = min(rw["T"] for rw in rows), max(rw["T"] for rw in rows)
    add(f"One `TemporalAttention(64, 4 heads)` (xavier initialisation, the same weights for every diagonal "
        f"mode), inputs of T LayerNorm'd random vectors (norm sqrt(d)), T = {', '.join(str(t) for t in sweep.lengths('none'))}; "
        f"closed-form paths (checked against autograd in the tests) on {args.sweep_rows} query rows per T, "
        "spectral norms. Bounds from the weights: `||W_O W_V|| / T` (the value path off the diagonal under "
        "uniform attention; PAPER.md's `||W_V|| / T` with our output projection) and `C_Q / sqrt(d_k)` "
        "(diagonal query path; `C_Q` from the weight norms and the input range).\n")
    add("| mode | slope of log off-diag vs log T | off-diag x T (T=%d .. %d) | off-diag value / (||W_O W_V||/T) at T=%d | "
        "diag query (T=%d -> %d) | bound C_Q/sqrt(d_k) | total diagonal (T=%d -> %d) |" % (t_min, t_max, t_max, t_min, t_max, t_min, t_max))
    add("|---|---|---|---|---|---|---|")
    for mode in sweep.modes():
        mr = [rw for rw in rows if rw["mode"] == mode]
        a, b = mr[0], mr[-1]
        add(f"| {mode} | {sweep.decay_exponent(mode):.3f} | {fmt(a['offdiag_total_x_T'], 2)} .. "
            f"{fmt(b['offdiag_total_x_T'], 2)} | {fmt(b['offdiag_value'] / b['value_offdiag_uniform'], 2)} | "
            f"{fmt(a['diag_query'])} -> {fmt(b['diag_query'])} | {fmt(b['query_bound'], 1)} | "
            f"{fmt(a['diag_total'])} -> {fmt(b['diag_total'])} |")
    add("\n![length sweep](length_sweep.png)\n")
    slopes = [sweep.decay_exponent(m) for m in sweep.modes()]
    mr = [rw for rw in rows if rw["mode"] == "none"]
    q_ratio = mr[-1]["diag_query"] / mr[0]["diag_query"]
    off_ratio = mr[-1]["offdiag_total"] / mr[0]["offdiag_total"]
    add("**Reading.**")
    add(f"- Off-diagonal sensitivity decays with slope {min(slopes):.2f} .. {max(slopes):.2f} in log-log: "
        + ("**1/T, as PAPER.md claims.**" if all(-1.2 < s < -0.8 for s in slopes) else
           "**not 1/T** at these lengths."))
    q_last = mr[-1]["diag_query"] / mr[-2]["diag_query"] if len(mr) > 1 else 1.0
    d_min = min(rw["diag_total"] for rw in mr)
    add(f"- The diagonal query path shrinks by a factor {1 / q_ratio:.1f} from T = {t_min} to {t_max} while the "
        f"off-diagonal shrinks by {1 / off_ratio:.1f}: the query term is "
        + ("**not** constant in T at initialisation (it is a weighted covariance of the values and keys over the "
           "sequence, whose sampling noise averages out as T grows), but it decays much more slowly than 1/T"
           if q_ratio < 0.67 else "roughly constant in T")
        + (f" and settles (last doubling of T: factor {q_last:.2f})" if q_last > 0.75 else "")
        + f". With the residual the mean diagonal block norm stays at or above {d_min:.2f} while the off-diagonal "
        f"blocks vanish: **the diagonal's weight relative to the rest grows like T, as PAPER.md says.**")
    add(f"- The bound C_Q/sqrt(d_k) holds (tested) but is loose by a factor of about "
        f"{mr[-1]['query_bound'] / max(mr[-1]['diag_query'], 1e-12):.0f}: it multiplies worst-case norms of four "
        "weight matrices and of the inputs. It is independent of T (up to the input range), which is the point "
        "the paper makes, not a quantitative prediction.")
    add("- Modes: `mask` raises the off-diagonal blocks slightly (the weight of the removed diagonal is spread "
        "over T - 1 keys) and removes the value path's diagonal; `penalty` (-0.05) is nearly indistinguishable "
        "from `none`; `dropout` is identical to `none` at evaluation (it acts only in training).\n")

    # ---- 4. summary
    add("## 4. Agreement with the papers, plainly\n")
    add("Agrees:")
    add("- PAPER.md's Jacobian decomposition (residual / value / key / query, with the output projection "
        "multiplying every path) is exact: it matches autograd to float64 round-off for every diagonal mode, "
        "causal or not, with and without residual (tests).")
    add("- Off-diagonal blocks scale as 1/T; under exactly uniform attention the off-diagonal block is exactly "
        "W_O W_V / T (tests, and the sweep above).")
    add("- The diagonal mask zeroes the value (and key) path on the diagonal; the query path and the residual "
        "stay — so the Jacobian keeps a diagonal sink even with the mask.")
    add("- Spatial over-squashing: sensitivity decays geometrically with hop distance and is exactly zero beyond "
        "the receptive field (6 hops here) and for the isolated sensor.\n")
    add("Does not agree, or cannot be checked here:")
    if q_ratio < 0.67:
        add("- The diagonal query term is T-independent in the bound, but the *measured* term at initialisation "
            "decreases with T (more slowly than the off-diagonal); the bound is orders of magnitude above it.")
    else:
        add("- The bound on the diagonal query term is orders of magnitude above the measured term.")
    if verdicts.get("no_primacy"):
        add("- The over-squashing paper's primacy effect (earliest steps dominate) is a property of causal "
            "convolutions; with bidirectional temporal attention we measure no such bias.")
    if verdicts.get("arrangements_differ"):
        add("- The shared TTS / T&S bound does not predict equal measured sensitivities; the two arrangements "
            "decay at different rates (section 1).")
    elif "arrangements_differ" in verdicts:
        add("- (Agrees, for the record:) TTS and T&S show similar hop decay, consistent with their shared bound; "
            "the bound itself is not evaluated numerically here.")
    if near_uniform:
        add("- The attention pictures of the trained models (PAPER.md Figure 1) need trained weights; the short "
            "runs here stay near uniform attention.")
    elif verdicts.get("fig1_disagree"):
        add("- Figure 1 of PAPER.md, after our short training: "
            + ", ".join("`" + n + "`" for n in verdicts["fig1_disagree"]) + " do not show the described pattern "
            "(section 2); " + (", ".join("`" + n + "`" for n in verdicts["fig1_agree"]) + " do." if
                               verdicts.get("fig1_agree") else "none of the described variants do."))
    add("\n## 5. The toolkit\n")
    add("- `stgnn_diag.sensitivity.spatiotemporal_jacobian(model, x, edge_index, edge_weight, u, wrt=\"input\" | "
        "\"encoded\", output=\"prediction\" | \"hidden\", norm=\"fro\" | \"spectral\" | \"l1\" | \"max\" | None, "
        "out_steps=..., out_nodes=...)` -> block norms `[t_out, n_out, t_in, n_in]` (exact; structured sparse "
        "forward mode for the zoo's models, batched `torch.func` VJPs / JVPs for any tsl-style model).")
    add("- `hop_distances(edge_index, n, directed=...)`, `hop_lag_profile(sens, hops)`, "
        "`attention_diagnostics(model, x, ...)`, `attention_paths(layer, x)` / `path_bounds` / "
        "`sequence_length_sweep(...)`, plots in `stgnn_diag.sensitivity.plots`.")
    add("- Command line: `stgnn-diag sensitivity --model NAME [--checkpoint PATH] [--window INDEX] [--out DIR]` "
        "writes `sensitivity.json`, `hop_lag.csv`, `attention.csv` and the PNGs for one window and prints a summary.")
    add("- Bad input: a model in training mode is switched to `eval()` for the computation, a "
        "`TrainingModeWarning` says so, and its mode is restored; `attention_diagnostics` on a model without "
        "`TemporalAttention` raises `NoAttentionError` (a `ValueError`); a window index outside the split raises "
        "`IndexError` naming the valid range (the command line prints it and exits with status 2); node pairs "
        "without a path get hop distance `inf`, are counted (`summarize_hops`) and form the `unreachable` row of "
        "the profile with their share of the sensitivity (0 for message passing on the graph).")
    add("- Speed against `torch.autograd.functional.jacobian`: `python benchmarks/bench_jacobian.py` "
        "(prints both, same run; not part of this report).")
    add("- Text-only changes to this page: `python -m stgnn_diag.sensitivity.report --out docs/sensitivity "
        "--render-only` rewrites it from `results.json`.")
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
