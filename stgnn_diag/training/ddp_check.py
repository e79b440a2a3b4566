"""A check that every DDP rank ends a run with the same weights and the same validation metric."""
from __future__ import annotations

import hashlib
from typing import Any, Dict, List, Optional

import lightning as L
import numpy as np
import torch


def weights_digest(module: torch.nn.Module) -> str:
    """sha256 of all parameters and buffers (names, shapes, exact bytes), in state-dict order."""
    h = hashlib.sha256()
    for name, t in module.state_dict().items():
        h.update(name.encode())
        h.update(np.ascontiguousarray(t.detach().cpu().numpy()).tobytes())
    return h.hexdigest()


class RankAgreement(L.Callback):
    """At the end of a multi-process ``fit``, gather from every rank the weight digest and the masked validation MAE
    computed by that rank alone on the whole validation split (no sharding), and keep them in
    ``self.report`` (rank 0) as ``{"world_size", "weights_sha256": [...], "val_mae": [...], "agree"}``.
    """

    def __init__(self, splits, batch_size: Optional[int] = None):
        self.splits, self.batch_size = splits, batch_size
        self.report: Dict[str, Any] = {}

    def on_fit_end(self, trainer: L.Trainer, pl_module) -> None:
        from .scoring import predict_split
        from ..metrics import masked_mae

        if trainer.world_size == 1:  # nothing to compare: skip the extra pass over the validation split
            self.report = {"world_size": 1, "weights_sha256": [weights_digest(pl_module)], "agree": True}
            return
        pred = predict_split(pl_module, self.splits, "val", batch_size=self.batch_size, progress=False)
        local = {"sha": weights_digest(pl_module), "val_mae": float(masked_mae(pred, self.splits.val.targets()))}
        gathered: List[Dict[str, Any]] = [local]
        if trainer.world_size > 1 and torch.distributed.is_available() and torch.distributed.is_initialized():
            gathered = [None] * trainer.world_size
            torch.distributed.all_gather_object(gathered, local)
        shas = [g["sha"] for g in gathered]
        maes = [g["val_mae"] for g in gathered]
        self.report = {"world_size": trainer.world_size, "weights_sha256": shas, "val_mae": maes,
                       "agree": len(set(shas)) == 1 and len(set(maes)) == 1}
