"""Regenerate the findings report ``docs/sensitivity/README.md`` and its figures.

Usage::

    STGNN_DIAG_DATA=../shared/data python -m stgnn_diag.sensitivity.report --out docs/sensitivity --pretrained

Models: the five T&S variants of the diagonal-sink paper and their TTS counterparts (hidden 32 by
default). Weights: with ``--pretrained``, the zoo's shipped weights (nothing is trained); else the first checkpoint of the model in the ``--checkpoints`` folders (``stgnn-diag train``
runs ``<model>-*/checkpoints/last.ckpt`` or ``stgnn-diag bench`` units ``<model>__*/run/checkpoints/last.ckpt``), otherwise a
brief built-in training (``--train-steps``, default 100 steps of batch 16; 0 = untrained). The
README states which was used. Everything is seeded; on CPU the numbers are reproducible.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from ..datasets import DEFAULT_DATASET, get_dataset, make_splits
# The report's pieces live in :mod:`stgnn_diag.sensitivity.findings`; their names stay importable from here.
from .findings import (LABELS, VARIANTS, brief_train, fmt, get_model, last_attention_input, layer_paths, map_pattern,
                       measure_models, render, short_source, test_mae, write_figures)
from .findings.measurements import data_facts
from .sweep import SweepResult, sequence_length_sweep

__all__ = ["main", "render", "VARIANTS", "LABELS", "brief_train", "test_mae", "get_model", "last_attention_input",
           "layer_paths", "map_pattern", "measure_models", "write_figures", "short_source", "fmt"]


def main(argv=None) -> int:
    """Run the report with the command-line options ``argv`` (see the module docstring); returns the exit status."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="sensitivity-report", help="output folder (default: ./sensitivity-report; "
                   "the repository's page is regenerated with --out docs/sensitivity)")
    p.add_argument("--data-root")
    p.add_argument("--pretrained", nargs="?", const=True, metavar="TAG",
                   help="analyse the zoo's shipped weights (each entry's default tag, or TAG); no training")
    p.add_argument("--checkpoints", nargs="+", metavar="FOLDER",
                   help="folders of training runs (<model>-*/checkpoints/last.ckpt) or bench results "
                        "(<model>__*/run/checkpoints/last.ckpt), searched in order; a model found in none is "
                        "briefly trained")
    p.add_argument("--train-steps", type=int, default=100, help="brief training for models without a checkpoint")
    p.add_argument("--hidden-size", type=int, default=32)
    p.add_argument("--arrangements", nargs="+", default=["tas_attn", "tts_attn"])
    p.add_argument("--variants", nargs="+", default=list(VARIANTS))
    p.add_argument("--index", type=int, default=0, help="test window (its index in the split) of the Jacobians")
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
        (out / "README.md").write_text(render(saved["models"], SweepResult(saved["sweep"]), cfg, saved.get("data"),
                                              saved.get("seconds", 0.0)))
        print(f"rewrote {out / 'README.md'} from results.json")
        return 0

    ds = get_dataset(getattr(args, "dataset", None) or DEFAULT_DATASET, args.data_root, download=False,
                     progress=False)
    splits = make_splits(ds, "dcrnn")
    results, analyses = measure_models(args, ds, splits)
    data = data_facts(ds)

    sweep = sequence_length_sweep(dim=64, heads=4, lengths=args.lengths, max_rows=args.sweep_rows, seed=args.seed,
                                  progress=not args.no_progress)
    sweep.write_csv(out / "length_sweep.csv")
    figs = write_figures(analyses, sweep, args, out)

    (out / "results.json").write_text(json.dumps({"config": vars(args), "data": data, "models": results,
                                                  "sweep": sweep.rows, "seconds": time.time() - t_start},
                                                 indent=1, default=float))
    (out / "README.md").write_text(render(results, sweep, args, data, time.time() - t_start))
    print(f"wrote {out / 'README.md'} and {len(figs)} figures in {time.time() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
