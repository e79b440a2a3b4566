"""Input embedding of the forecaster family: the value of each step plus its calendar, its node and a
spatio-temporal adaptive embedding (STAEformer, Liu et al., CIKM 2023)."""
from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch import Tensor, nn

from ..nn.transforms import functorch_active
from ..calendar import check_calendar

#: Covariate channels read by the calendar embeddings (see :mod:`stgnn_diag.datasets.covariates`):
#: channel 0 is the time of day as a fraction of the day in [0, 1); channels 1..7 the one-hot weekday.
TOD_CHANNEL, DOW_CHANNELS = 0, slice(1, 8)


class CalendarNodeEmbedding(nn.Module):
    r"""``tod[slot(u)] + dow[day(u)] + node[n]``: learned vectors of the time of day, weekday and node.

    * ``tod_embedding`` slots: a learned vector per slot of the day, looked up from channel 0 of
      ``u`` (a fraction of the day in [0, 1), e.g. 288 slots for 5-minute data);
    * ``dow_embedding``: a learned vector per weekday, from the one-hot channels 1..7 of ``u``;
    * ``node_embedding``: a learned vector per node.

    Each part is ``dim`` wide and the parts are summed: that is the concatenation of the parts
    followed by one linear map (a linear map of a learned table is a learned table), without
    materialising the concatenation.

    Shapes:
        u ``[*, N, c]`` (``c >= 1`` with tod, ``>= 8`` with dow; may be None without them) ->
        ``[*, N, dim]`` (broadcastable), or None when every part is off.
    """

    def __init__(self, dim: int, n_nodes: Optional[int], tod_embedding: int = 0, dow_embedding: bool = False,
                 node_embedding: bool = False):
        super().__init__()
        if not isinstance(tod_embedding, int) or isinstance(tod_embedding, bool) or tod_embedding < 0:
            raise ValueError(f"tod_embedding must be a number of slots per day (int >= 0), got {tod_embedding!r}.")
        if node_embedding and not (isinstance(n_nodes, int) and n_nodes > 0):
            raise ValueError(f"node_embedding needs n_nodes (a positive int, one learned vector per node), "
                             f"got n_nodes={n_nodes!r}.")
        self.tod = nn.Embedding(tod_embedding, dim) if tod_embedding else None
        self.dow = nn.Embedding(7, dim) if dow_embedding else None
        self.node = nn.Parameter(torch.empty(n_nodes, dim)) if node_embedding else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for emb in (self.tod, self.dow):
            if emb is not None:
                nn.init.xavier_uniform_(emb.weight)
        if self.node is not None:
            nn.init.xavier_uniform_(self.node)

    def tod_slot(self, u: Tensor) -> Tensor:
        """Slot index ``[*, N]`` of the time-of-day channel of ``u`` (a fraction in [0, 1))."""
        slots = self.tod.num_embeddings
        return (u[..., TOD_CHANNEL].detach() * slots).round().long().clamp_(0, slots - 1)

    def parts(self, u: Optional[Tensor]) -> Tuple[Optional[Tensor], Optional[Tensor]]:
        """``(tod + dow [*, N or 1, dim], node [N, dim])``, each None when off.

        The calendar vectors are looked up once per distinct row of ``u``: covariates shared by every
        node (``u [b, T, c]`` expanded to ``[b, T, N, c]`` by the input checks, stride 0 over the nodes)
        give ``[b, T, 1, dim]``, which broadcasts to the same values as a lookup per node.
        """
        check_calendar(u, tod=self.tod is not None, dow=self.dow is not None)
        if u is not None:
            u = unbroadcast(u)
        h = None
        if self.tod is not None:
            h = self.tod(self.tod_slot(u))
        if self.dow is not None:
            d = self.dow(u[..., DOW_CHANNELS].detach().argmax(-1))
            h = d if h is None else h + d
        return h, self.node

    def forward(self, u: Optional[Tensor]) -> Optional[Tensor]:
        calendar, node = self.parts(u)
        if calendar is None:
            return node
        return calendar if node is None else calendar + node


class STEmbedding(nn.Module):
    r"""``x W + b + tod[slot(u)] + dow[day(u)] + node[n] + adaptive[t, n]`` per token and node.

    A token is a patch of ``patch_size`` consecutive steps (1: each step is a token; PatchTST's
    patches, Nie et al., ICLR 2023). Per token and node: a linear map of the patch's values
    (``patch_size x input_size`` channels), plus the :class:`CalendarNodeEmbedding` of the patch's
    last step, plus with ``adaptive_embedding`` a learned vector per (token, node) of the window,
    which is also the positional encoding (STAEformer's spatio-temporal adaptive embedding). All
    parts are ``dim`` wide and summed.

    Args:
        input_size: channels of ``x``.
        dim: output width.
        window: input steps ``T`` (the adaptive embedding has one vector per token).
        n_nodes: nodes ``N`` (needed by the node and adaptive embeddings).
        tod_embedding, dow_embedding, node_embedding: see :class:`CalendarNodeEmbedding`.
        adaptive_embedding: a learned vector per (token, node).
        patch_size: steps per token; must divide ``window``.
        input_mask: read a mask of observed readings beside ``x`` (:func:`fill_missing`): each missing
            reading is replaced by the last observed one before it in the window, and the mask enters as
            ``input_size`` more channels, so that a missing reading is neither its placeholder value (0 mph
            in METR-LA, a large negative number once scaled) nor mistaken for an observed one.

    Shapes:
        x ``[b, T, N, input_size]``, u ``[b, T, N, c]`` or None, x_mask ``[b, T, N, input_size]`` (bool,
        True = observed) or None (all observed) -> ``[b, T / patch_size, N, dim]``.
    """

    def __init__(self, input_size: int, dim: int, window: int, n_nodes: Optional[int], tod_embedding: int = 0,
                 dow_embedding: bool = False, node_embedding: bool = False, adaptive_embedding: bool = False,
                 patch_size: int = 1, input_mask: bool = False):
        super().__init__()
        if not isinstance(input_mask, bool):
            raise ValueError(f"input_mask must be True or False, got {input_mask!r}.")
        if adaptive_embedding and not (isinstance(n_nodes, int) and n_nodes > 0):
            raise ValueError(f"adaptive_embedding needs n_nodes (a positive int, one learned vector per step and "
                             f"node), got n_nodes={n_nodes!r}.")
        if not isinstance(patch_size, int) or isinstance(patch_size, bool) or patch_size < 1 \
                or window % patch_size:
            raise ValueError(f"patch_size must be a positive int dividing window={window}, got {patch_size!r}.")
        self.patch_size, self.tokens = patch_size, window // patch_size
        self.input_mask = input_mask
        self.value = nn.Linear(patch_size * input_size * (2 if input_mask else 1), dim)
        self.calendar = CalendarNodeEmbedding(dim, n_nodes, tod_embedding, dow_embedding, node_embedding)
        self.adaptive = nn.Parameter(torch.empty(self.tokens, n_nodes, dim)) if adaptive_embedding else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.value.reset_parameters()
        self.calendar.reset_parameters()
        if self.adaptive is not None:
            nn.init.xavier_uniform_(self.adaptive.view(-1, self.adaptive.size(-1)))

    def forward(self, x: Tensor, u: Optional[Tensor] = None, x_mask: Optional[Tensor] = None) -> Tensor:
        if self.input_mask:
            m = torch.ones_like(x) if x_mask is None else x_mask.to(x.dtype).expand_as(x)
            x = torch.cat([fill_missing(x, m), m], dim=-1)
        p = self.patch_size
        if p > 1:  # [b, T, N, c] -> [b, T / p, N, p * c] (the p steps of a token side by side, oldest first)
            b, t, n, c = x.shape
            x = x.reshape(b, t // p, p, n, c).transpose(2, 3).reshape(b, t // p, n, p * c)
            u = None if u is None else u[:, p - 1::p]
        calendar, node = self.calendar.parts(u)
        # the per-node and per-(token, node) vectors are summed before they meet the batch: [T / p, N, dim]
        static = node if self.adaptive is None else self.adaptive if node is None else self.adaptive + node
        h = self.value(x)
        for part in (calendar, static):
            if part is not None:
                h = h + part.to(h.dtype)
        return h


def fill_missing(x: Tensor, mask: Tensor) -> Tensor:
    """``x`` with each reading where ``mask`` is 0 replaced by the last one before it (along axis 1) where
    ``mask`` is 1, and by 0 where there is none. A missing reading gets no gradient; the observed one that
    stands in for it gets that gradient too.

    Shapes:
        x ``[b, T, ...]``, mask ``[b, T, ...]`` (0 / 1, ``x``'s dtype) -> ``[b, T, ...]``.
    """
    steps = torch.arange(x.size(1), device=x.device).view(1, -1, *[1] * (x.dim() - 2)).expand_as(x)
    last = torch.where(mask > 0, steps, torch.zeros_like(steps)).cummax(dim=1).values  # last observed step
    return torch.where(mask > 0, x, torch.gather(x * mask, 1, last))


def unbroadcast(u: Tensor) -> Tensor:
    """``u`` with each broadcast axis (stride 0, as :meth:`Tensor.expand` makes) but the last cut to size 1:
    a view holding each distinct row once. Unchanged inside ``torch.func`` transforms (whose batched
    tensors keep their own strides)."""
    if functorch_active():
        return u
    for dim in range(u.dim() - 1):
        if u.stride(dim) == 0 and u.size(dim) > 1:
            u = u.narrow(dim, 0, 1)
    return u
