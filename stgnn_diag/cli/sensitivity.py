"""``stgnn-diag sensitivity``: the sensitivity report of a zoo model on one window of a data set.

Wired into the ``stgnn-diag`` entry point by :mod:`stgnn_diag.cli` through :func:`add_parser`.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``sensitivity`` sub-command on an ``argparse`` sub-parser collection."""
    p = subparsers.add_parser(
        "sensitivity", help="Jacobian sensitivity, hop x lag profile and attention diagnostics on one window",
        description="Compute how much each forecast (step, node) depends on each input (step, node) of one "
                    "window of a data set (default METR-LA), aggregate it by hop distance and time lag, summarise the attention of every "
                    "temporal attention layer, and write sensitivity.json, hop_lag.csv, attention.csv and PNGs. "
                    "Works on untrained models (no --checkpoint).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--model", help="zoo name (see `stgnn-diag models`); optional if the checkpoint records it")
    p.add_argument("--checkpoint", help="file with a state_dict, or a dict with 'state_dict' (+ model_name / "
                                        "model_kwargs), e.g. a Lightning checkpoint ('model.' prefixes stripped)")
    p.add_argument("--pretrained", nargs="?", const=True, metavar="TAG",
                   help="use the shipped weights of --model (its default tag, or TAG)")
    p.add_argument("--index", type=int, default=0, help="window index in the split (negative: from the end)")
    p.add_argument("--window", type=int, help="input steps (default: the checkpoint's, else 12)")
    p.add_argument("--align-window", type=int, metavar="T", help="cut the split as for inputs of T steps, so that "
                   "windows of every length up to T end at the same steps")
    p.add_argument("--split", default="test", choices=("train", "val", "test"))
    p.add_argument("--protocol", default="dcrnn", choices=("dcrnn", "paper"))
    p.add_argument("--out", help="output folder (default runs/sensitivity/<model>-<split><window>)")
    p.add_argument("--norm", default="fro", choices=("fro", "spectral", "l1", "max"), help="block norm")
    p.add_argument("--directed", action="store_true", help="hop distances along edge directions")
    p.add_argument("--no-hidden", action="store_true", help="skip the layer-stack Jacobian")
    p.add_argument("--hidden-size", type=int, help="hidden size of an untrained model")
    p.add_argument("--seed", type=int, default=0, help="initialisation seed of an untrained model")
    p.add_argument("--save-jacobian", action="store_true", help="also save the block norms (sensitivity.pt)")
    p.add_argument("--budget-mb", type=float, default=256.0, help="memory budget of one Jacobian chunk")
    p.add_argument("--dataset", help="registered data set: metr_la, pems_bay, ... (default metr_la)")
    p.add_argument("--data-root", help="folder holding the data set folders, e.g. metr_la/ (default: "
                   "$STGNN_DIAG_DATA, then datasets/)")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)
    return p


def pretrained_model(name, tag, checkpoint, n_nodes: int, dataset: Optional[str] = None, data_root=None):
    """``(model, info)`` from a zoo entry's shipped weights (``--pretrained [TAG]``); ``dataset``: the data set
    of the window, which must be the one the weights were trained on (``data_root``: where it is, for a seasonal
    table fitted at load)."""
    from ..datasets import recorded_dataset
    from ..training.seasonal import fit_fallback_table
    from ..zoo import create_model
    from ..zoo.pretrained import PretrainedError

    if checkpoint or not name:
        raise PretrainedError("--pretrained needs --model NAME and no --checkpoint.")
    model = create_model(name, pretrained=tag)
    cfg = model.pretrained_cfg
    trained_on = recorded_dataset(cfg)
    if dataset is not None and dataset != trained_on:
        raise PretrainedError(f"{name}.{cfg['tag']} was trained on {trained_on}; the window is from {dataset}.")
    if cfg["model_kwargs"].get("n_nodes") not in (None, n_nodes):
        raise PretrainedError(f"{name}.{cfg['tag']} was trained on {cfg['model_kwargs']['n_nodes']} nodes; "
                              f"the data has {n_nodes}.")
    fit_fallback_table(model, data_root=data_root)
    info = {"model": name, "trained": True, "checkpoint": f"pretrained {name}.{cfg['tag']}",
            "kwargs": cfg["model_kwargs"]}
    return model.eval(), info


def run(args: argparse.Namespace) -> int:
    """Run the sub-command; returns the exit status (2 with a message on a bad window or checkpoint)."""
    from ..sensitivity.analysis import analyze_window, format_summary, write_report
    from ..zoo.pretrained import PretrainedError
    from ..sensitivity.checkpoint import CheckpointFormatError, build_model
    from ..datasets import DEFAULT_DATASET
    from ..sensitivity.data import dataset_window, exog_for, load_dataset
    from ..models.inputs import mask_kwargs

    if not args.model and not args.checkpoint:
        print("stgnn-diag sensitivity: error: give --model NAME (and/or --checkpoint PATH)", file=sys.stderr)
        return 2
    if not args.budget_mb > 0:  # before the data and the model are loaded
        raise ValueError(f"--budget-mb must be a positive number of megabytes, got {args.budget_mb}.")
    dataset = args.dataset or DEFAULT_DATASET
    data = load_dataset(dataset, args.data_root)
    overrides = {"n_nodes": data.n_nodes}
    if args.hidden_size is not None:
        overrides["hidden_size"] = args.hidden_size
    if args.window is not None and not args.checkpoint and not args.pretrained:
        overrides["window"] = args.window
    import torch

    torch.manual_seed(args.seed)
    try:
        if args.pretrained:
            model, minfo = pretrained_model(args.model, args.pretrained, args.checkpoint, data.n_nodes,
                                            dataset=dataset, data_root=args.data_root)
        else:
            model, minfo = build_model(args.model, args.checkpoint, **overrides)
    except (CheckpointFormatError, PretrainedError) as e:
        print(f"stgnn-diag sensitivity: error: {e}", file=sys.stderr)
        return 2
    steps = int(getattr(model, "window", None) or 12)
    if args.window is not None and args.window != steps:
        print(f"stgnn-diag sensitivity: error: the model reads {steps} input steps, not --window {args.window}",
              file=sys.stderr)
        return 2
    try:
        window = dataset_window(args.index, args.split, protocol=args.protocol, dataset=data, window=steps,
                                align_window=args.align_window)
    except (IndexError, ValueError) as e:
        print(f"stgnn-diag sensitivity: error: {e}", file=sys.stderr)
        return 2
    window.dataset = dataset
    name = minfo["model"]
    out = Path(args.out or f"runs/sensitivity/{name}-{args.split}{window.index}")
    u = exog_for(model, window.u)
    res = analyze_window(model, window.x, window.edge_index, window.edge_weight, u, **mask_kwargs(model, window.x_mask),
                         norm=args.norm, directed=args.directed, hidden=not args.no_hidden, budget_mb=args.budget_mb,
                         progress=not args.no_progress)
    meta = {**minfo, "dataset": window.dataset, "window": window.index, "input_steps": steps,
            "align_window": args.align_window, "split": window.split, "protocol": window.protocol,
            "norm": args.norm, "directed_hops": args.directed, "seed": None if minfo["trained"] else args.seed}
    label = (f"{name} ({'trained' if minfo['trained'] else 'untrained'}), {window.split} window {window.index} "
             f"({steps} input steps)")
    files = write_report(res, out, meta, plots=not args.no_plots, save_jacobian=args.save_jacobian, title=label)
    print(format_summary(res, label))
    print(f"wrote {len(files)} files to {out}: " + ", ".join(f.name for f in files))
    return 0

