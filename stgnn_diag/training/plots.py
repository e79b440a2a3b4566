"""Training plots (matplotlib, Agg backend): the loss curve of a run."""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Dict, List, Optional


def read_epoch_log(csv_path: Path) -> Dict[str, List[float]]:
    """Per-epoch ``train_mae`` / ``val_mae`` from Lightning's ``metrics.csv`` (rows merged by epoch)."""
    rows: Dict[int, Dict[str, float]] = {}
    with open(csv_path) as f:
        for r in csv.DictReader(f):
            if not r.get("epoch"):
                continue
            e = int(float(r["epoch"]))
            for k in ("train_mae", "val_mae"):
                if r.get(k):
                    rows.setdefault(e, {})[k] = float(r[k])
    epochs = sorted(rows)
    return {"epoch": [e + 1 for e in epochs],
            **{k: [rows[e].get(k, float("nan")) for e in epochs] for k in ("train_mae", "val_mae")}}


def plot_loss_curve(csv_path: Path, png_path: Path, title: Optional[str] = None) -> Optional[Path]:
    """Write the train / validation masked-MAE curve; returns the PNG path (None without a log)."""
    if not Path(csv_path).is_file():
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    log = read_epoch_log(Path(csv_path))
    fig, ax = plt.subplots(figsize=(5, 3.2), dpi=100)
    ax.plot(log["epoch"], log["train_mae"], "o-", label="train (masked MAE)")
    ax.plot(log["epoch"], log["val_mae"], "s-", label="validation (masked MAE)")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("epoch")
    ax.set_ylabel("MAE (mph)")
    ax.set_title(title or "loss curve", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png_path)
    plt.close(fig)
    return Path(png_path)
