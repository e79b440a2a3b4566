"""Multi-head temporal self-attention with the diagonal regularizers of the diagonal-sink paper."""
from __future__ import annotations

import math
from typing import Optional, Tuple, Union

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .diagonal import regularizer_logit_bias
from .regularizers import make_regularizer
from .short_softmax import short_softmax
from .split_heads import split_heads

BACKENDS = ("auto", "sdpa", "explicit")


class TemporalAttention(nn.Module):
    r"""Self-attention along the time axis of ``[batch, time, nodes, channels]``, per node.

    Each node's sequence attends over its own T steps (nodes never mix here). The diagonal
    regularizers act on the logits ``q_i k_j / sqrt(d_k)`` before the softmax:

    * ``diag="none"``: plain attention (paper variant (b)).
    * ``diag="mask"``: logit (i, i) = -inf in training and evaluation; the softmax renormalises
      over the other T - 1 keys (variant (c)).
    * ``diag="dropout"``: in training only, each forward call draws one Bernoulli(``diag_p``) vector
      of length T (shared by batch, nodes and heads, a fresh draw per layer); the chosen diagonal
      logits get -inf, without 1 / (1 - p) rescaling (variant (d)).
    * ``diag="penalty"``: ``diag_penalty`` (the paper uses a negative value, e.g. -0.05) is added to
      every diagonal logit after the 1 / sqrt(d_k) scaling, in training and evaluation (variant (e)).
      With ``learn_penalty=True`` it becomes one learnable parameter per head, initialised from
      ``diag_penalty``.

    ``residual=False`` removes the skip connection (variant (a)). Each regularizer is a module
    (:attr:`regularizer`, from :mod:`stgnn_diag.nn.regularizers`, chosen by ``diag``) holding its own state.

    With ``causal=True`` query i only sees keys j <= i. Combined with a removed diagonal, query 0
    has no admissible key at all; instead of the NaN of a softmax over ``-inf`` its attention
    weights are defined as all zero, so its attention output is zero and the layer returns the
    residual (``x``) there, or zero without residual. This holds for ``"mask"`` always and for
    ``"dropout"`` whenever the draw removes step 0.

    Args:
        dim: channels of the input and output (``d``).
        heads: number of heads; ``dim % heads`` must be 0, head width ``d_k = dim / heads``.
        diag: ``"none"``, ``"mask"``, ``"dropout"``, ``"penalty"`` (or any registered regularizer name).
        diag_p: diagonal drop probability for ``"dropout"``, in [0, 1).
        diag_penalty: additive diagonal logit for ``"penalty"``.
        residual: add the input to the output.
        causal: forbid attention to future steps.
        dropout: dropout on the attention weights (training only).
        out_dropout: dropout on the attention sub-layer output before the residual sum.
        learn_penalty: make the penalty a learnable per-head parameter (``diag="penalty"`` only).
        bias: use biases in the query/key/value and output projections.
        backend: ``"sdpa"`` (``F.scaled_dot_product_attention`` with the regularizers as an additive
            float mask: fused kernels on GPUs), ``"explicit"`` (batched matmuls and a short-row
            softmax: faster on CPU, where SDPA falls back to a slow math path for T ~ 12), or
            ``"auto"`` (explicit on CPU, SDPA elsewhere). All give the same result.

    Shapes:
        - input ``x``: ``[batch, time, nodes, dim]``
        - output: ``[batch, time, nodes, dim]``, and with ``return_attention=True`` also the
          attention weights ``[batch, nodes, heads, time, time]`` (rows = queries; each row sums
          to 1, or to 0 for a query left without keys; taken before attention dropout).
    """

    def __init__(
        self,
        dim: int,
        heads: int = 1,
        diag: str = "none",
        diag_p: float = 0.0,
        diag_penalty: float = 0.0,
        residual: bool = True,
        causal: bool = False,
        dropout: float = 0.0,
        out_dropout: float = 0.0,
        learn_penalty: bool = False,
        bias: bool = True,
        backend: str = "auto",
    ):
        super().__init__()
        if not isinstance(dim, int) or dim <= 0 or not isinstance(heads, int) or heads <= 0:
            raise ValueError(f"dim and heads must be positive integers, got dim={dim!r}, heads={heads!r}.")
        if dim % heads != 0:
            raise ValueError(f"dim ({dim}) must be divisible by heads ({heads}); head width = dim / heads.")
        regularizer = make_regularizer(diag, diag_p=diag_p, diag_penalty=diag_penalty,
                                       learn_penalty=learn_penalty, heads=heads)
        if not 0.0 <= dropout < 1.0 or not 0.0 <= out_dropout < 1.0:
            raise ValueError(f"dropout rates must be in [0, 1), got {dropout!r} and {out_dropout!r}.")
        self.dim, self.heads, self.head_dim = dim, heads, dim // heads
        self.residual, self.causal, self.dropout = residual, causal, float(dropout)
        if backend not in BACKENDS:
            raise ValueError(f"Unknown backend {backend!r}; choose one of {BACKENDS}.")
        self.backend = backend
        self.qkv = nn.Linear(dim, 3 * dim, bias=bias)
        self.out = nn.Linear(dim, dim, bias=bias)
        self.out_dropout = nn.Dropout(out_dropout)
        # registered last: a learnable penalty stays the last parameter, as in checkpoints (and optimizer
        # states, which follow the parameter order) written before the regularizers were modules
        self.regularizer = regularizer
        self.reset_parameters()

    @property
    def diag(self) -> str:
        """The regularizer's name (``"mask"``)."""
        return self.regularizer.name

    @property
    def learn_penalty(self) -> bool:
        """Whether the diagonal penalty is a learnable per-head parameter."""
        return bool(getattr(self.regularizer, "learnable", False))

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        # checkpoints written before the regularizers were modules hold ``<prefix>penalty`` in every layer;
        # it is the penalty regularizer's state, and nothing in the other modes
        old, new = prefix + "penalty", prefix + "regularizer.penalty"
        if old in state_dict:
            value = state_dict.pop(old)
            if self.diag == "penalty":
                state_dict.setdefault(new, value)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def reset_parameters(self) -> None:
        nn.init.xavier_uniform_(self.qkv.weight)
        nn.init.xavier_uniform_(self.out.weight)
        for lin in (self.qkv, self.out):
            if lin.bias is not None:
                nn.init.zeros_(lin.bias)

    @property
    def scale(self) -> float:
        return 1.0 / math.sqrt(self.head_dim)

    def logit_bias(self, t: int, device=None, dtype=torch.float32) -> Tuple[Optional[Tensor], Optional[Tensor]]:
        """The additive logit bias ``[T, T]`` / ``[heads, T, T]`` and empty query rows ``[T]`` for this call.

        In ``"dropout"`` mode during training each call draws a new diagonal drop pattern.
        """
        return regularizer_logit_bias(self.regularizer, t, causal=self.causal, device=device, dtype=dtype)

    def project_qkv(self, x: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
        """Queries, keys and values ``[batch, nodes, heads, time, head_dim]`` from ``x [b, t, n, d]``."""
        b, t, n, _ = x.shape
        return split_heads(self.qkv(x).view(b, t, n, 3, self.heads, self.head_dim))

    def _scaled_logits(self, q: Tensor, k: Tensor, bias: Optional[Tensor]) -> Tensor:
        """``q k^T / sqrt(d_k) + bias`` as one fused ``baddbmm`` (scale and bias in the GEMM).

        Shapes: q, k ``[b, n, heads, t, dk]``, bias ``[t, t]`` / ``[heads, t, t]`` / None ->
        ``[b, n, heads, t, t]``.
        """
        lead, t = q.shape[:-2], q.size(-2)
        qf, kf = q.reshape(-1, t, self.head_dim), k.reshape(-1, t, self.head_dim)
        if bias is None:
            base, beta = qf.new_zeros(1, 1, 1), 0.0
        elif bias.dim() == 2:
            base, beta = bias.unsqueeze(0), 1.0
        else:  # per-head [heads, t, t]: batch order is (b, n, heads), heads innermost
            base, beta = bias.repeat(qf.size(0) // bias.size(0), 1, 1), 1.0
        return torch.baddbmm(base, qf, kf.transpose(1, 2), beta=beta, alpha=self.scale).view(*lead, t, t)

    def attention_weights(self, q: Tensor, k: Tensor, bias: Optional[Tensor], empty: Optional[Tensor]) -> Tensor:
        """Post-softmax attention (before attention dropout) from queries and keys.

        ``bias`` / ``empty`` come from :meth:`logit_bias`; rows of queries without keys are zero.

        Shapes:
            q, k ``[..., heads, T, dk]`` -> ``[..., heads, T, T]``.
        """
        attn = short_softmax(self._scaled_logits(q, k, bias))
        return attn if empty is None else attn.masked_fill(empty.unsqueeze(-1), 0.0)

    def forward(self, x: Tensor, return_attention: bool = False) -> Union[Tensor, Tuple[Tensor, Tensor]]:
        if not isinstance(x, Tensor):
            raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}.")
        if x.dim() != 4:
            raise ValueError(f"x must have shape [batch, time, nodes, channels], got {tuple(x.shape)} "
                             f"(rank {x.dim()}); add missing axes with unsqueeze.")
        if x.size(-1) != self.dim:
            raise ValueError(f"x has {x.size(-1)} channels but the layer was built with dim={self.dim}.")
        b, t, n, d = x.shape
        q, k, v = self.project_qkv(x)
        bias, empty = self.logit_bias(t, device=x.device, dtype=x.dtype)
        p_drop = self.dropout if self.training else 0.0
        attn = None
        use_sdpa = self.backend == "sdpa" or (self.backend == "auto" and x.device.type != "cpu")
        if return_attention or not use_sdpa:
            attn = self.attention_weights(q, k, bias, empty)
            h = F.dropout(attn, p_drop) @ v if p_drop > 0 else attn @ v
        else:
            # Fused kernel; the regularizers enter as an additive float mask on the scaled logits.
            mask = None if bias is None else bias.expand(self.heads, t, t) if bias.dim() == 3 else bias
            h = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p_drop)
        # [b, n, heads, t, dk] -> [b, t, n, d]
        h = h.permute(0, 3, 1, 2, 4).reshape(b, t, n, d)
        y = self.out_dropout(self.out(h))
        if empty is not None:  # queries without keys: no attention contribution at all
            y = y.masked_fill(empty.view(1, t, 1, 1), 0.0)
        if self.residual:
            y = x + y
        return (y, attn) if return_attention else y

    def extra_repr(self) -> str:
        return f"{self.dim}, heads={self.heads}, diag={self.diag!r}, residual={self.residual}, causal={self.causal}"
