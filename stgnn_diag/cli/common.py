"""What several sub-commands share."""
from __future__ import annotations

import argparse


def add_data_args(p: argparse.ArgumentParser, dataset_default: str = "metr_la") -> None:
    p.add_argument("--dataset", help=f"registered data set: metr_la, pems_bay, ... (default: {dataset_default})")
    p.add_argument("--data-root", help="folder holding the data set folders, e.g. metr_la/ (default: "
                   "$STGNN_DIAG_DATA, then datasets/)")
    p.add_argument("--max-windows", type=int, help="keep at most this many windows per split (smoke runs)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
