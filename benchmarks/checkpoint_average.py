"""Does averaging a run's last epoch checkpoints (Polyak / SWA-style tail averaging) forecast better?

For each ``K``, the element-wise mean of the weights of the run's last ``K`` epoch checkpoints
(``<run>/checkpoints/epoch*.ckpt``, read with the library's safe loader) is scored on the test split of
the run's protocol (masked MAE at steps 3 / 6 / 12 and pooled). ``K = 1`` is the last epoch alone: it
reproduces the run's own ``result.json``, the check that the scoring is the bench's.

Usage::

    python benchmarks/checkpoint_average.py results/<experiment>/<unit>/run 1 3 5
"""
from __future__ import annotations

import argparse
from pathlib import Path

import torch

from stgnn_diag.datasets import get_dataset, make_splits, recorded_dataset
from stgnn_diag.training import load_checkpoint
from stgnn_diag.training.scoring import predict_split, score


def average_state(states):
    """Element-wise mean of ``state_dict``s (floating tensors, accumulated in float64); others from the first."""
    return {n: (sum(s[n].double() for s in states) / len(states)).to(v.dtype) if v.is_floating_point() else v
            for n, v in states[0].items()}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run", type=Path, help="a run folder holding checkpoints/epoch*.ckpt")
    p.add_argument("ks", type=int, nargs="+", help="numbers of last epochs to average")
    args = p.parse_args(argv)
    paths = sorted((args.run / "checkpoints").glob("epoch*.ckpt"))
    if not paths or max(args.ks) > len(paths) or min(args.ks) < 1:
        raise SystemExit(f"{args.run / 'checkpoints'} holds {len(paths)} epoch checkpoints; K must be 1..{len(paths)}.")
    modules = [load_checkpoint(q) for q in paths]
    module, hp = modules[-1], modules[-1].hparams
    splits = make_splits(get_dataset(recorded_dataset(hp)), hp["protocol"], window=hp["window"], horizon=hp["horizon"])
    for k in args.ks:
        module.load_state_dict(average_state([m.state_dict() for m in modules[-k:]]))
        with torch.no_grad():
            m = score(predict_split(module, splits, progress=False), splits["test"], hp["horizon"])
        print(f"last {k} epochs ({', '.join(q.stem for q in paths[-k:])}): "
              + "  ".join(f"{s} {m[s]:.4f}" for s in ("mae@3", "mae@6", "mae@12", "mae@avg")), flush=True)


if __name__ == "__main__":
    main()
