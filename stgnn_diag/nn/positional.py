"""Positional encodings along the time axis: sinusoidal, tAPE and learned."""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn

PE_KINDS = ("sinusoidal", "tape", "learned", "none")


def _sinusoid(max_len: int, dim: int, stretch: float = 1.0) -> Tensor:
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    div = torch.exp(torch.arange(0, dim, 2, dtype=torch.float64) * (-math.log(10000.0) / dim))
    pe = torch.zeros(max_len, dim, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * div * stretch)
    pe[:, 1::2] = torch.cos(pos * div * stretch)[:, : dim // 2]
    return pe.float()


class PositionalEncoding(nn.Module):
    r"""Adds a time-position encoding to ``x [batch, time, nodes, dim]``.

    * ``"sinusoidal"``: Vaswani et al.
    * ``"tape"``: time Absolute Position Encoding (Foumani et al., 2024), the sinusoid with its
      frequencies multiplied by ``dim / max_len``, as in the diagonal-sink paper's reference model.
    * ``"learned"``: one trainable vector per step.
    * ``"none"``: identity.

    Args:
        dim: channels.
        max_len: longest sequence supported (for tAPE also the length it is tuned to, i.e. the
            input window).
        kind: one of ``PE_KINDS``.

    Shapes:
        input / output: ``[batch, time, nodes, dim]`` with ``time <= max_len``.
    """

    def __init__(self, dim: int, max_len: int, kind: str = "sinusoidal"):
        super().__init__()
        if kind not in PE_KINDS:
            raise ValueError(f"Unknown positional encoding {kind!r}; choose one of {PE_KINDS}.")
        self.dim, self.max_len, self.kind = dim, max_len, kind
        if kind == "learned":
            self.pe = nn.Parameter(torch.empty(max_len, dim))
            nn.init.normal_(self.pe, std=0.02)
        elif kind != "none":
            stretch = dim / max_len if kind == "tape" else 1.0
            self.register_buffer("pe", _sinusoid(max_len, dim, stretch), persistent=False)

    def forward(self, x: Tensor) -> Tensor:
        if self.kind == "none":
            return x
        t = x.size(1)
        if t > self.max_len:
            raise ValueError(f"Sequence of {t} steps is longer than the {self.kind} positional encoding "
                             f"supports (max_len={self.max_len}); build the model with a larger window.")
        return x + self.pe[:t].to(x.dtype).view(1, t, 1, self.dim)

    def extra_repr(self) -> str:
        return f"{self.kind}, dim={self.dim}, max_len={self.max_len}"
