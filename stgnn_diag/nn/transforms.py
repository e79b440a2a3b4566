"""Whether a ``torch.func`` transform is tracing the current call."""
from __future__ import annotations

import torch


def functorch_active() -> bool:
    """True inside a ``torch.func`` transform (vmap, jvp, grad ...): its batched tensors have no usable strides
    and sparse CSR products cannot run there."""
    return torch._C._functorch.peek_interpreter_stack() is not None
