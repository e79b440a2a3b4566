"""The budget knobs are declared once (budgets.OVERRIDABLE): the flags of train and bench, TrainConfig's fields,
the grid's override keys and the budget labels all follow that declaration."""
from __future__ import annotations

import argparse
import dataclasses

from stgnn_diag.cli import bench as bench_cli
from stgnn_diag.bench.unit import BUDGET_OVERRIDE_KEYS, budget_label
from stgnn_diag.cli import build_parser
from stgnn_diag.training import TrainConfig
from stgnn_diag.training.budgets import OVERRIDABLE, budget_overrides, get_budget


def test_every_knob_reaches_every_place():
    values = {k: (0.004 if typ is float else 3) for k, (typ, _) in OVERRIDABLE.items()}
    flags = [a for k, v in values.items() for a in ("--" + k.replace("_", "-"), str(v))]
    train = build_parser().parse_args(["train", "--model", "tts_attn_none", *flags])
    assert budget_overrides(train) == values
    p = argparse.ArgumentParser()
    bench_cli.add_parser(p.add_subparsers())
    grid = bench_cli.grid_from_args(p.parse_args(["bench", "--models", "last_value", *flags]))
    assert grid.overrides == values
    assert set(OVERRIDABLE) <= {f.name for f in dataclasses.fields(TrainConfig)}
    assert set(OVERRIDABLE) | {"max_windows", "max_time", "align_window"} == set(BUDGET_OVERRIDE_KEYS)
    cfg = TrainConfig(model="tts_attn_none", out="x", **values)
    budget = get_budget("cpu-small").with_overrides(**budget_overrides(cfg))
    assert {k: getattr(budget, k) for k in OVERRIDABLE} == values
    assert budget_label("cpu-small", values) == "cpu-small+e3-b3-tb3-vb3-lr0.004-wd0.004-p3"
