"""Value checks on tensors that stay cheap: they run on plain CPU tensors only, never under ``torch.compile`` or a
torch.func transform (where reading a value would sync a device or break the trace)."""
from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["cheap_to_check", "check_finite", "FIX_READINGS"]


def cheap_to_check(t: Tensor) -> bool:
    """A plain CPU tensor outside ``torch.compile`` and torch.func transforms: checking its values costs
    microseconds and no device sync (on a GPU, or under vmap / jacrev, the check is skipped)."""
    # torch has no public test for a torch.func wrapper (vmap / grad tensors); the private one is the way
    # torch.func's own utilities ask it
    return (t.device.type == "cpu" and not torch.compiler.is_compiling()
            and not torch._C._functorch.is_functorch_wrapped_tensor(t))


FIX_READINGS = ("mark missing readings in the data (0 in METR-LA's files) and scale them, or fill them (e.g. "
                 "forward fill) before the call")


def check_finite(t: Tensor, name: str, fix: str = FIX_READINGS) -> None:
    """Raise ``ValueError`` if ``t`` holds NaN or Inf (where :func:`cheap_to_check`): the output would be
    NaN everywhere a message reaches, with nothing said. ``fix`` says what to do instead."""
    if cheap_to_check(t) and not bool(torch.isfinite(t).all()):
        nan, inf = int(torch.isnan(t).sum()), int(torch.isinf(t).sum())
        raise ValueError(f"{name} holds {nan} NaN and {inf} Inf values (of {t.numel()}); the models need finite "
                         f"inputs: {fix}.")
