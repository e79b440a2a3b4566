"""What the structured engine supports, and how it checks a recomputed sub-layer against the real one."""
from __future__ import annotations

import torch
from torch import Tensor, nn

#: Activations known to act element-wise (their derivative is taken entry by entry).
ELEMENTWISE = (nn.Identity, nn.ReLU, nn.GELU, nn.ELU, nn.LeakyReLU, nn.Tanh, nn.Sigmoid, nn.SiLU, nn.Softplus)


def encode_window(model: nn.Module, x: Tensor, u, x_mask) -> Tensor:
    """``model.encode(x, u)``, with the mask of observed readings for a model built with ``input_mask=True``
    (``x_mask`` None otherwise: the template models' ``encode`` takes no mask)."""
    return model.encode(x, u) if x_mask is None else model.encode(x, u, x_mask)


class UnsupportedModel(Exception):
    """The structured engine cannot handle this model; the message says why."""


def _close(a: Tensor, b: Tensor) -> bool:
    """Same shape, and ``max |a - b| <= tol * (max |b| + 1)`` (tol 1e-4 in single precision, else 1e-9)."""
    tol = 1e-4 if a.dtype in (torch.float32, torch.float16, torch.bfloat16) else 1e-9
    scale = float(b.abs().max()) + 1.0
    return a.shape == b.shape and float((a - b).abs().max()) <= tol * scale
