"""Sequence-length sweep of one attention layer: measured path norms next to the 1/T and C_Q bounds."""
from __future__ import annotations

import copy
import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import torch
from tqdm.auto import tqdm

from ..nn import TemporalAttention
from .paths import path_bounds, path_norm_summary

DEFAULT_LENGTHS = (6, 12, 24, 48, 96, 192)
#: Diagonal modes of the sweep and the settings used for them (the zoo's choices).
DEFAULT_MODES = {"none": {}, "mask": {}, "penalty": {"diag_penalty": -0.05}, "dropout": {"diag_p": 0.1}}


@dataclass
class SweepResult:
    """One row per (diag mode, T): measured mean block norms and the bounds.

    Row keys: ``mode``, ``T``, the :func:`~stgnn_diag.sensitivity.paths.path_norm_summary` keys
    (``offdiag_total``, ``offdiag_value``, ``diag_query``, ...), the
    :class:`~stgnn_diag.sensitivity.paths.PathBounds` fields (``value_offdiag_uniform`` = the 1/T
    reference, ``query_bound`` = C_Q / sqrt(d_k), ...), and ``offdiag_total_x_T``.
    """

    rows: List[Dict[str, float]] = field(default_factory=list)
    norm: str = "spectral"

    def modes(self) -> List[str]:
        return list(dict.fromkeys(r["mode"] for r in self.rows))

    def series(self, mode: str, key: str) -> List[float]:
        return [r[key] for r in self.rows if r["mode"] == mode]

    def lengths(self, mode: str) -> List[int]:
        return [r["T"] for r in self.rows if r["mode"] == mode]

    def decay_exponent(self, mode: str, key: str = "offdiag_total") -> float:
        """Slope of ``log(key)`` against ``log(T)`` (least squares; -1 is a 1/T decay)."""
        t = torch.tensor(self.lengths(mode), dtype=torch.float64).log()
        y = torch.tensor(self.series(mode, key), dtype=torch.float64).log()
        tc = t - t.mean()
        return float((tc * (y - y.mean())).sum() / (tc * tc).sum())

    def write_csv(self, path) -> Path:
        path = Path(path)
        keys = list(self.rows[0])
        with path.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(self.rows)
        return path


def _inputs(t: int, d: int, gen: torch.Generator, kind: str) -> torch.Tensor:
    x = torch.randn(t, d, generator=gen, dtype=torch.float64)
    if kind == "layernorm":  # what a post-LN block feeds the next attention: zero mean, norm sqrt(d)
        x = x - x.mean(-1, keepdim=True)
        x = x / x.norm(dim=-1, keepdim=True) * d ** 0.5
    return x


def sequence_length_sweep(layer: Optional[TemporalAttention] = None, *, dim: int = 64, heads: int = 4,
                          lengths: Sequence[int] = DEFAULT_LENGTHS, modes: Optional[Dict[str, dict]] = None,
                          norm: str = "spectral", max_rows: int = 24, inputs: str = "layernorm", seed: int = 0,
                          progress: bool = False) -> SweepResult:
    """Measure off-diagonal and diagonal sensitivity of one attention layer for growing T.

    Every diagonal mode uses the same weights (those of ``layer``, or of a fresh xavier-initialised
    ``TemporalAttention(dim, heads)``) and the same input sequences; only the regularizer differs.
    For each T the closed-form path decomposition is evaluated (float64, eval mode, so diagonal
    dropout is off: its row shows what the trained weights do at test time) on ``max_rows`` query
    steps spread over the sequence, against all T keys.

    Args:
        layer: the layer whose weights to use (its own ``diag`` is ignored).
        dim, heads: for a fresh layer.
        lengths: the sequence lengths T.
        modes: ``{diag mode: extra TemporalAttention kwargs}`` (default :data:`DEFAULT_MODES`).
        norm: block norm (``"spectral"`` matches the bounds).
        max_rows: query steps evaluated per T.
        inputs: ``"layernorm"`` (zero-mean rows of norm ``sqrt(d)``, what a post-LN block feeds the
            next layer) or ``"gaussian"`` (i.i.d. N(0, 1)).
        seed: input seed (and the fresh layer's).
        progress: tqdm bar.

    Returns:
        :class:`SweepResult`.
    """
    modes = dict(DEFAULT_MODES if modes is None else modes)
    if layer is None:
        torch.manual_seed(seed)
        layer = TemporalAttention(dim, heads)
    base = copy.deepcopy(layer).double().eval()
    d = base.dim
    layers = {}
    for mode, kw in modes.items():
        lay = TemporalAttention(d, base.heads, diag=mode, residual=base.residual, causal=base.causal,
                                bias=base.qkv.bias is not None, **kw).double().eval()
        lay.qkv.load_state_dict(base.qkv.state_dict())
        lay.out.load_state_dict(base.out.state_dict())
        layers[mode] = lay
    res = SweepResult(norm=norm)
    for t in tqdm(list(lengths), disable=not progress, desc="T sweep", leave=False):
        gen = torch.Generator().manual_seed(seed + t)
        x = _inputs(t, d, gen, inputs)
        step = max(1, t // max_rows)
        rows = list(range(0, t, step))[:max_rows]
        for mode, lay in layers.items():
            m = path_norm_summary(lay, x, norm=norm, rows=rows)
            b = path_bounds(lay, x)
            row = {"mode": mode, "T": t, **m, **{k: v for k, v in vars(b).items() if k != "steps"}}
            row["offdiag_total_x_T"] = row["offdiag_total"] * t
            res.rows.append(row)
    return res
