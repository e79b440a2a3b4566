"""Forecasters on the lag-hop task, whose true Jacobian is known: accuracy against the noise floor, and whether
their sensitivity sits on the true (hop, lag) cell.

For every model, hop ``h``, lag ``l`` and seed: train the model on
``lag_hop[hop=h,lag=l,graph=G,n_nodes=N,steps=S]`` (one-step forecasts, :class:`stgnn_diag.datasets.LagHopTask`)
with :func:`stgnn_diag.training.train`, score its test MAE against the noise floor ``sigma sqrt(2 / pi)``, and
run :func:`stgnn_diag.sensitivity.known_answer.lag_hop_recovery` on its last checkpoint (the share of nodes
whose largest Jacobian entry is the true source at the true lag, the true cell's share of the sensitivity,
the slope there against the true ``alpha``, the hop x lag profile's argmax, the model's reach in hops).

Resumable: each unit trains in ``--runs/<unit>`` (an interrupted unit resumes from its checkpoint, a finished
one is not trained again), and ``--out/results.csv`` is rewritten after every unit; ``--out/lag_hop.png``
(MAE over the noise floor and hit rate, per model, on the (hop, lag) grid) at the end.

A lag written ``1+95`` is one unit with a source at each of those lags (``lag_hop[lag=[1,95]]``: the coefficient
``alpha`` shared out between them); ``--alpha`` below 0.9 weakens the signal against the same noise.

Usage::

    python benchmarks/lag_hop.py                                       # the defaults below
    python benchmarks/lag_hop.py --models tts_attn_none --hops 1 2 --lags 1 5 --out lag-hop/
    python benchmarks/lag_hop.py --window 96 --hops 1 --lags 1+95 --out lag-hop-two/   # two sources a node
"""
from __future__ import annotations

import argparse
import csv
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Tuple

KEYS = ["model", "graph", "nodes", "hop", "lag", "window", "seed", "mae", "noise_floor", "mae_over_floor",
        "last_value_mae", "hit_rate", "true_share", "gain", "alpha", "profile_hop", "profile_lag", "reach_hops",
        "parameters", "global_steps", "train_time_s", "commit", "source_hit_rates", "profile_top"]
DEFAULT_ALPHA = 0.9


def parse_lags(text: str) -> Tuple[int, ...]:
    """``"5"`` -> ``(5,)``; ``"1+95"`` -> ``(1, 95)`` (one source at each lag)."""
    try:
        lags = tuple(int(v) for v in str(text).split("+"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a lag is an integer or integers joined by '+' (1+95), got {text!r}")
    if len(set(lags)) < len(lags):
        raise argparse.ArgumentTypeError(f"the lags of one unit must be distinct, got {text!r}")
    return lags


def lag_spec(lags: Tuple[int, ...]) -> str:
    """``(1, 95)`` -> ``"1+95"``: the lags as the ``lag`` column and unit folders write them."""
    return "+".join(str(v) for v in lags)


def dataset_name(args, hop: int, lags: Tuple[int, ...]) -> str:
    lag = lags[0] if len(lags) == 1 else "[" + ",".join(map(str, lags)) + "]"
    alpha = "" if args.alpha == DEFAULT_ALPHA else f",alpha={args.alpha}"
    return (f"lag_hop[hop={hop},lag={lag},graph={args.graph},n_nodes={args.nodes},steps={args.steps},"
            f"seed={args.data_seed}{alpha}]")


def run_unit(args, model: str, hop: int, lags: Tuple[int, ...], seed: int) -> Dict:
    """Train (or reuse) one unit and score it; the row of ``results.csv``."""
    import json

    import numpy as np

    from stgnn_diag.datasets import get_dataset, make_splits
    from stgnn_diag.sensitivity.known_answer import lag_hop_recovery
    from stgnn_diag.training import TrainConfig, train
    from stgnn_diag.training.predictor import load_checkpoint

    name = dataset_name(args, hop, lags)
    # the window and alpha are part of a unit's name (the defaults are left out so the earlier folders still match)
    out = args.runs / (f"{model}__h{hop}-l{lag_spec(lags)}__s{seed}" + ("" if args.window == 12 else f"__w{args.window}")
                       + ("" if args.alpha == DEFAULT_ALPHA else f"__a{args.alpha}"))
    metrics_path = out / "metrics.json"
    if not metrics_path.is_file():
        cfg = TrainConfig(model=model, out=str(out), dataset=name, horizon=1, window=args.window, budget=args.budget,
                          seed=seed, max_epochs=args.max_epochs, batch_size=args.batch_size,
                          model_overrides={"hidden_size": args.hidden_size, **args.overrides}, progress=False,
                          resume=(out / "checkpoints" / "last.ckpt").is_file(),
                          overwrite=out.exists() and not (out / "checkpoints" / "last.ckpt").is_file())
        train(cfg)
    metrics = json.loads(metrics_path.read_text())
    task = get_dataset(name)
    splits = make_splits(task, window=args.window, horizon=1)
    model_ = load_checkpoint(out / "checkpoints" / "last.ckpt").model
    rec = lag_hop_recovery(model_, task, splits, windows=args.jacobian_windows)
    x, y = splits.test.raw_inputs(), splits.test.targets()[:, 0]
    scored = y != 0
    mae = metrics["metrics"]["mae@1"]
    return {"model": model, "graph": args.graph, "nodes": task.n_nodes, "hop": hop, "lag": lag_spec(lags),
            "window": args.window,
            "seed": seed, "mae": mae, "noise_floor": task.noise_floor_mae, "mae_over_floor": mae / task.noise_floor_mae,
            "last_value_mae": float(np.abs(x[:, -1] - y)[scored].mean()), "hit_rate": rec["hit_rate"],
            "true_share": rec["true_share"], "gain": rec["gain"], "alpha": task.alpha,
            "profile_hop": rec["profile_argmax"][0], "profile_lag": rec["profile_argmax"][1],
            "reach_hops": rec["reach_hops"], "parameters": metrics["parameters"],
            "global_steps": metrics["global_steps"], "train_time_s": metrics.get("train_time_s"),
            "commit": metrics.get("environment", {}).get("git_commit") or _commit(),
            "source_hit_rates": "/".join(f"{h:.4f}" for h in rec["source_hit_rates"]),
            "profile_top": " ".join(f"{h},{lag}" for h, lag in rec["profile_top"])}


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def write_csv(path: Path, rows: List[Dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = sorted(rows, key=_key)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=KEYS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def _key(r: Dict) -> tuple:
    """A row's unit: (model, hop, lags, window, alpha, seed) (rows written before the window was a column: 12)."""
    return (r["model"], int(r["hop"]), parse_lags(r["lag"]), int(r.get("window") or 12),
            float(r.get("alpha") or DEFAULT_ALPHA), int(r["seed"]))


def read_csv(path: Path) -> Dict[tuple, Dict]:
    """The rows of ``path`` keyed by their unit (:func:`_key`)."""
    if not path.is_file():
        return {}
    with open(path) as f:
        return {_key(r): r for r in csv.DictReader(f)}


def markdown_table(rows: List[Dict]) -> str:
    """The results as a markdown table, one row per unit."""
    out = ["| model | hop | lag | seed | MAE | x noise floor | last value | Jacobian argmax at the truth | true cell's share "
           "| slope (true: alpha) | profile argmax (hop, lag) | reach (hops) |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["model"], int(r["hop"]), parse_lags(r["lag"]), int(r["seed"]))):
        hit, cells = f"{float(r['hit_rate']):.2f}", f"({r['profile_hop']}, {r['profile_lag']})"
        if len(parse_lags(r["lag"])) > 1:  # several sources: each one's hit rate, the profile's top cells
            hit += " (" + " / ".join(f"{float(h):.2f}" for h in r["source_hit_rates"].split("/")) + ")"
            cells = " ".join(f"({c.replace(',', ', ')})" for c in r["profile_top"].split())
        out.append(f"| `{r['model']}` | {r['hop']} | {r['lag']} | {r['seed']} | {float(r['mae']):.3f} | "
                   f"{float(r['mae_over_floor']):.2f} | {float(r['last_value_mae']):.2f} | {hit} | "
                   f"{float(r['true_share']):.2f} | {float(r['gain']):.2f} | {cells} | {r['reach_hops']} |")
    return "\n".join(out)


def plot(rows: List[Dict], path: Path) -> None:
    """Per model: MAE over the noise floor and the Jacobian hit rate on the (hop, lag) grid (seed means)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    models = sorted({r["model"] for r in rows})
    hops = sorted({int(r["hop"]) for r in rows})
    lags = sorted({r["lag"] for r in rows}, key=parse_lags)
    windows = "/".join(str(w) for w in sorted({_key(r)[3] for r in rows}))
    alphas = sorted({_key(r)[4] for r in rows})
    if alphas != [DEFAULT_ALPHA]:
        windows += ", alpha " + "/".join(f"{a:g}" for a in alphas)
    fig, axes = plt.subplots(2, len(models), figsize=(3.2 * len(models), 6), squeeze=False)
    for j, m in enumerate(models):
        for i, (key, title, vmax) in enumerate((("mae_over_floor", "MAE / noise floor", 3.0),
                                                ("hit_rate", "Jacobian argmax at the truth", 1.0))):
            grid = np.full((len(hops), len(lags)), np.nan)
            for a, h in enumerate(hops):
                for b, lag in enumerate(lags):
                    vals = [float(r[key]) for r in rows if r["model"] == m and int(r["hop"]) == h and r["lag"] == lag]
                    if vals:
                        grid[a, b] = sum(vals) / len(vals)
            ax = axes[i, j]
            im = ax.imshow(grid, vmin=1.0 if i == 0 else 0.0, vmax=vmax, cmap="viridis_r" if i == 0 else "viridis",
                           aspect="auto", origin="lower")
            for a in range(len(hops)):
                for b in range(len(lags)):
                    if not math.isnan(grid[a, b]):
                        level = (grid[a, b] - im.norm.vmin) / (im.norm.vmax - im.norm.vmin)
                        bright = level > 0.6 if i else level < 0.4  # yellow cells: dark text
                        ax.text(b, a, f"{grid[a, b]:.2f}", ha="center", va="center", fontsize=8,
                                color="k" if bright else "w")
            ax.set(xticks=range(len(lags)), xticklabels=lags, yticks=range(len(hops)), yticklabels=hops,
                   xlabel="lag", ylabel="hop", title=f"{m}, T = {windows}\n{title}")
            fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="+", default=["tas_attn_none", "tts_attn_none", "tas_attn_mask", "tts_attn_mask"])
    p.add_argument("--hops", nargs="+", type=int, default=[1, 2, 4, 6])
    p.add_argument("--lags", nargs="+", type=parse_lags, default=[(1,), (5,), (11,)],
                   help="lags, each a unit; 1+95: one unit with a source at each lag")
    p.add_argument("--seeds", nargs="+", type=int, default=[0])
    p.add_argument("--graph", default="ring", choices=("ring", "grid", "metr_la"))
    p.add_argument("--nodes", type=int, default=64, help="ring / grid nodes")
    p.add_argument("--steps", type=int, default=4032, help="series length (4032 = two weeks of 5-minute steps)")
    p.add_argument("--data-seed", type=int, default=0)
    p.add_argument("--window", type=int, default=12)
    p.add_argument("--budget", default="cpu-small")
    p.add_argument("--max-epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--hidden-size", type=int, default=32)
    p.add_argument("--alpha", type=float, default=DEFAULT_ALPHA,
                   help="the sources' coefficient (in sum); lower: a weaker signal against the same noise")
    p.add_argument("--jacobian-windows", type=int, default=4)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a model override for every unit (repeatable), e.g. k=4; give such a grid its own --runs/--out")
    p.add_argument("--runs", type=Path, default=Path("runs/lag-hop"), help="unit folders (checkpoints)")
    p.add_argument("--out", type=Path, default=Path("lag-hop"), help="results.csv and lag_hop.png go here")
    args = p.parse_args(argv)
    from stgnn_diag._values import parse_key_values

    args.overrides = parse_key_values(args.set)
    bad = [lag_spec(lags) for lags in args.lags if max(lags) >= args.window]
    if bad:
        p.error(f"lags {bad} are not inside a window of {args.window} steps (lags 0 .. {args.window - 1})")
    from tqdm import tqdm

    done = read_csv(args.out / "results.csv")
    plan = [(m, h, lag, s) for s in args.seeds for h in args.hops for lag in args.lags for m in args.models]
    bar = tqdm(plan, desc="lag-hop units", unit="unit")
    for m, h, lags, s in bar:
        bar.set_postfix_str(f"{m} hop {h} lag {lag_spec(lags)} seed {s}")
        key = (m, h, lags, args.window, args.alpha, s)
        if key in done:
            continue
        t0 = time.time()
        done[key] = row = run_unit(args, m, h, lags, s)
        write_csv(args.out / "results.csv", list(done.values()))
        tqdm.write(f"{m} hop {h} lag {row['lag']} seed {s}: MAE {row['mae']:.3f} ({row['mae_over_floor']:.2f} x floor), "
                   f"hit rate {row['hit_rate']:.2f} ({row['source_hit_rates']}), profile top {row['profile_top']} "
                   f"[{time.time() - t0:.0f} s]")
    # the plot and table: this window's and alpha's rows
    rows = [r for r in done.values() if _key(r)[3:5] == (args.window, args.alpha)]
    if rows:
        plot(rows, args.out / "lag_hop.png")
        print("\n" + markdown_table(rows) + "\n")
        print(f"wrote {args.out / 'results.csv'}, {args.out / 'lag_hop.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
