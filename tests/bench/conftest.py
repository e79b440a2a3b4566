"""A tiny real-data grid, run once per test run through the ``bench`` command line.

2 TTS models x 2 seeds + the ``last_value`` baseline on METR-LA (300 windows per split, 1 epoch of
2 batches of 8, hidden 8): 5 units, about 15 s on 2 cores.
"""
from __future__ import annotations

import hashlib
import json

import argparse

import pytest

from stgnn_diag.cli import bench as cli

MODELS = ["tts_attn_none", "tts_attn_penalty"]
BASELINE = "last_value"
SEEDS = [0, 1]
TINY_MODEL = {"hidden_size": 8, "heads": 2, "temporal_layers": 1, "spatial_layers": 1}
#: what the unit id of a trained unit with TINY_MODEL carries: the first 8 hex digits of sha1(sorted JSON)
MTAG = "__m" + hashlib.sha1(json.dumps(TINY_MODEL, sort_keys=True).encode()).hexdigest()[:8]
TINY_ARGS = ["--max-epochs", "1", "--limit-train-batches", "2", "--limit-val-batches", "2", "--batch-size", "8",
             "--max-windows", "300", *[a for k, v in TINY_MODEL.items() for a in ("--set", f"{k}={v}")]]
LABEL = "cpu-small+e1-b8-tb2-vb2-w300"


def bench_args(results, root, *extra):
    """Parsed ``stgnn-diag bench`` arguments for the tiny grid (plus ``extra``)."""
    p = argparse.ArgumentParser()
    cli.add_parser(p.add_subparsers())
    return p.parse_args(["bench", "--models", *MODELS, BASELINE, "--seeds", *map(str, SEEDS), *TINY_ARGS,
                         "--results", str(results), "--data-root", str(root), "--no-progress", *extra])


@pytest.fixture(scope="session")
def tiny_grid(tmp_path_factory, metr_la_root):
    """``(results folder, parsed args)`` after one full run of the tiny grid (with the report)."""
    results = tmp_path_factory.mktemp("bench") / "results"
    args = bench_args(results, metr_la_root)
    assert args.func(args) == 0
    return results, args
