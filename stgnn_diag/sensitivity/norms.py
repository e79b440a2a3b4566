"""Norms of Jacobian blocks over their feature dimensions."""
from __future__ import annotations

import torch
from torch import Tensor

#: ``"fro"``: Frobenius (entry-wise 2-norm); ``"spectral"``: largest singular value;
#: ``"l1"``: sum of absolute entries; ``"max"``: largest absolute entry.
NORMS = ("fro", "spectral", "l1", "max")


def check_norm(norm) -> None:
    """Raise ``ValueError`` unless ``norm`` is one of :data:`NORMS` (or None for raw blocks)."""
    if norm is not None and norm not in NORMS:
        raise ValueError(f"Unknown norm {norm!r}; choose one of {NORMS}, or norm=None for the raw blocks.")


def block_norm(blocks: Tensor, norm: str = "fro") -> Tensor:
    """Norm of each ``[f_out, f_in]`` block.

    Args:
        blocks: Jacobian blocks, features in the last two dimensions.
        norm: one of :data:`NORMS`.

    Shapes:
        ``[..., f_out, f_in]`` -> ``[...]``.
    """
    check_norm(norm)
    if norm is None:
        raise ValueError("block_norm needs a norm; one of " + ", ".join(NORMS))
    if norm == "fro":
        return blocks.pow(2).sum((-2, -1)).sqrt()
    if norm == "l1":
        return blocks.abs().sum((-2, -1))
    if norm == "max":
        return blocks.abs().amax((-2, -1))
    if blocks.shape[-1] == 1 or blocks.shape[-2] == 1:  # a vector: its 2-norm, no SVD needed
        return blocks.pow(2).sum((-2, -1)).sqrt()
    return torch.linalg.matrix_norm(blocks, ord=2)
