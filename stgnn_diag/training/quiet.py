"""Silence two messages Lightning 2.6 prints on every run that say nothing about the run itself."""
from __future__ import annotations

import logging
import warnings

#: Substrings of the messages dropped: an advertisement for a cloud logger, and a deprecation inside
#: Lightning's own pytree helper (``LeafSpec``), which users cannot act on.
NOISE = ("litlogger", "isinstance(treespec, LeafSpec)")


class _DropNoise(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        return not any(n in msg for n in NOISE)


_FILTER = _DropNoise()


def quiet_lightning() -> None:
    """Drop :data:`NOISE` from Lightning's log handlers and warnings (idempotent; everything else,
    e.g. "GPU available", is kept)."""
    for name in ("lightning.pytorch", "lightning.fabric", "lightning_fabric", "pytorch_lightning"):
        logger = logging.getLogger(name)
        for handler in logger.handlers:
            if _FILTER not in handler.filters:
                handler.addFilter(_FILTER)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
    warnings.filterwarnings("ignore", message=r".*isinstance\(treespec, LeafSpec\)`? is deprecated")
