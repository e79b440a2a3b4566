"""The models of the findings report and where their weights come from (checkpoint or a brief training)."""
from __future__ import annotations

import glob
from pathlib import Path
from typing import List, Optional, Sequence

import numpy as np
import torch
from tqdm.auto import tqdm

from ...models.inputs import mask_kwargs
from ...training.seasonal import fit_fallback_table
from ...zoo import create_model
from ..checkpoint import build_model

VARIANTS = ("noresid", "none", "mask", "dropout", "penalty")
LABELS = {"noresid": "(a) no residual", "none": "(b) none", "mask": "(c) mask", "dropout": "(d) dropout",
          "penalty": "(e) penalty"}


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
        pred = model(b["x"], ei, ew, u=u, **mask_kwargs(model, b["x_mask"]))
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
        pred = model(b["x"], splits.edge_index, splits.edge_weight, u=u, **mask_kwargs(model, b["x_mask"])) * std + mean
        m = b["mask"]
        err += float((pred - b["y"]).abs()[m].sum())
        cnt += float(m.sum())
    return err / max(cnt, 1.0)


def find_checkpoint(name: str, folders: Sequence[str]) -> Optional[str]:
    """The first ``last.ckpt`` of model ``name`` in ``folders``, searched in order: a ``stgnn-diag train`` run
    ``<name>-*/checkpoints/`` or a ``stgnn-diag bench`` unit ``<name>__*/run/checkpoints/`` (sorted, so the
    lowest seed of a results folder comes first); None when there is none."""
    for folder in folders:
        for pattern in (f"{name}-*/checkpoints/last.ckpt", f"{name}__*/run/checkpoints/last.ckpt"):
            found = sorted(glob.glob(str(Path(folder) / pattern)))
            if found:
                return found[0]
    return None


def get_model(name: str, args, splits) -> (torch.nn.Module, str):
    """The model and a one-line description of where its weights come from: the entry's shipped weights
    (``args.pretrained``: True or a tag), else the first checkpoint in ``args.checkpoints``, else a brief
    training."""
    if getattr(args, "pretrained", None):
        model = fit_fallback_table(create_model(name, pretrained=args.pretrained).eval(), splits)
        c, k = model.pretrained_cfg, model.pretrained_cfg["model_kwargs"]
        return model, (f"pretrained `{name}.{c['tag']}` ({c['budget']}, seed {c['seed']}, hidden "
                       f"{k.get('hidden_size', 'default')}, {k.get('exog_size', 0)} covariate channels; "
                       f"stgnn_diag/zoo/weights/{c['weights']})")
    folders = [args.checkpoints] if isinstance(args.checkpoints, str) else (args.checkpoints or [])
    path = find_checkpoint(name, folders)
    if path is not None:
        model, info = build_model(name, path, n_nodes=splits.n_nodes)
        k = info["kwargs"]
        return model, (f"checkpoint `{path}` (hidden {k.get('hidden_size', 'default')}, {k.get('exog_size', 0)} "
                       f"covariate channels, node embedding {bool(k.get('node_embedding'))}, time-of-day embedding "
                       f"{k.get('tod_embedding') or 'none'})")
    torch.manual_seed(args.seed)
    model = create_model(name, n_nodes=splits.n_nodes, hidden_size=args.hidden_size)
    losses = brief_train(model, splits, args.train_steps, seed=args.seed, progress=not args.no_progress)
    model.eval()
    if not losses:
        return model, "untrained (seeded initialisation)"
    return model, (f"brief training: {len(losses)} AdamW steps of 16 windows (lr 3e-3), last-20-step loss "
                   f"{np.mean(losses[-20:]):.3f} (scaled MAE)")
