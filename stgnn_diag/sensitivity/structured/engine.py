"""The structured engine's driver: trace a model at one window, then push chunks of input nodes' tangents
through the traced steps (:class:`StructuredJacobian`)."""
from __future__ import annotations

from typing import Callable, List, Optional, Sequence

import torch
from torch import Tensor, nn
from torch.func import jvp
from tqdm.auto import tqdm

from ...models import STAttentionBase
from ...models.sublayers import GraphSublayer, TemporalSublayer
from .chunking import pack_chunks, tangent_row_bytes
from . import graph_step
from .graph_step import _graph_step
from .readout_step import _readout_step
from .support import UnsupportedModel, encode_window
from .temporal_step import _temporal_step


class StructuredJacobian:
    """Trace a model at one window and compute its Jacobian with the sparse forward-mode engine.

    Args:
        model: an :class:`~stgnn_diag.models.STAttentionBase` in eval mode.
        x: ``[1, T, N, F]`` window.
        edge_index, edge_weight, u: as for ``model(...)``.
        wrt: ``"input"`` (columns = ``x`` entries) or ``"encoded"`` (columns = entries of
            ``model.encode(x, u)``).
        output: ``"prediction"`` (``model(...)``) or ``"hidden"`` (``model.process(...)``).
        x_mask: ``[1, T, N, F or 1]`` observed readings, for a model built with ``input_mask=True`` (held fixed).

    Raises:
        UnsupportedModel: the model does not have the structure this engine relies on.

    Shapes:
        x ``[1, T, N, F]``; :meth:`run` hands out ``Y [t_out, P, K, f_out]`` per chunk (``K`` =
        :attr:`columns_per_node`).
    """

    def __init__(self, model: nn.Module, x: Tensor, edge_index, edge_weight=None, u=None, *,
                 wrt: str = "input", output: str = "prediction", x_mask: Optional[Tensor] = None):
        if not isinstance(model, STAttentionBase):
            raise UnsupportedModel(f"{type(model).__name__} is not an STAttentionBase model")
        if type(model).encode is not STAttentionBase.encode or type(model).decode is not STAttentionBase.decode:
            raise UnsupportedModel("the model overrides encode / decode")
        if x.dim() != 4 or x.shape[0] != 1:
            raise UnsupportedModel("one window [1, T, N, F] is needed")
        self.model, self.wrt, self.output = model, wrt, output
        with torch.no_grad():
            ei, ew, u4 = model.check_inputs(x, edge_index, edge_weight, u)
            self.x, self.u4, self.x_mask = x, u4, x_mask
            self.h0 = encode_window(model, x, u4, x_mask)
            records = []
            hook = lambda mod, args, kwargs, out: records.append((mod, args, kwargs, out))  # noqa: E731
            handles = [m.register_forward_hook(hook, with_kwargs=True) for m in model.modules()
                       if isinstance(m, (TemporalSublayer, GraphSublayer))]
            try:
                self.h_final = model.process(self.h0, ei, ew, u4)
            finally:
                for hd in handles:
                    hd.remove()
            prev = self.h0
            for mod, args, kwargs, out in records:
                if (args[0] if args else kwargs.get("x")) is not prev:
                    raise UnsupportedModel("process() is not a plain chain of TemporalSublayer / GraphSublayer")
                prev = out
            if not records or self.h_final is not prev:
                raise UnsupportedModel("process() is not a plain chain of TemporalSublayer / GraphSublayer")
            self.steps = [(_temporal_step if isinstance(mod, TemporalSublayer) else _graph_step)(mod, a, kw, o)
                          for mod, a, kw, o in records]
            # the last sub-layer's LayerNorm is folded into the read-out functional
            self.readout = (_readout_step(model, self.h_final[0].transpose(0, 1), self.steps[-1].norm)
                            if output == "prediction" else None)
            # a last graph step meets the read-out without forming its output tangents (GraphStep.contract)
            self.pulled = (self.steps[-1].pull_back(self.readout.e)
                           if self.readout is not None and self.steps[-1].kind == "graph" else None)
        _, self.t, self.n, self.f_in = x.shape
        self.d = self.h0.shape[-1]
        with torch.no_grad():
            out = model.decode(self.h_final) if output == "prediction" else self.h_final  # [1, T_out, N, F_out]
        self.t_out, self.f_out = out.shape[1], out.shape[-1]

    # -- sizes ---------------------------------------------------------------------------------
    @property
    def columns_per_node(self) -> int:
        """Jacobian columns per input node: ``T * F`` (input) or ``T * d`` (encoded)."""
        return self.t * (self.f_in if self.wrt == "input" else self.d)

    def supports(self) -> Tensor:
        """``[n_graph_steps + 1, N, N]`` bool: after each graph step, which nodes each input node reaches."""
        s = torch.eye(self.n, dtype=torch.bool, device=self.x.device)
        out = [s]
        for st in self.steps:
            if st.kind == "graph":
                s = (s.to(torch.float32) @ st.reach.T.to(torch.float32)) > 0
                out.append(s)
        return torch.stack(out)

    def work(self) -> dict:
        """How many ``d``-vectors pass through the sub-layers: this engine vs reverse mode by autograd.

        This engine carries ``columns_per_node`` tangents of ``T`` steps for each (input node, reached node)
        row; reverse mode, one output entry at a time (``torch.autograd.functional.jacobian``), carries a
        whole ``[T, N]`` cotangent per output entry through every sub-layer. Their ratio is the structural
        part of a speed-up; the rest is how fast each engine treats a vector.

        Returns:
            ``{"steps": [(kind, ours), ...], "ours": int, "reverse": int, "ratio": float}``.
        """
        reach = self.supports().sum(-1).sum(-1).tolist()  # rows after 0, 1, ... graph steps
        per_row = self.columns_per_node * self.t
        steps, g = [], 0
        for st in self.steps:
            g += st.kind == "graph"
            steps.append((st.kind, int(reach[g] * per_row)))
        n_out = self.t_out * self.n * self.f_out
        rev = n_out * self.t * self.n * len(self.steps)
        ours = sum(v for _, v in steps)
        return {"steps": steps, "ours": ours, "reverse": rev, "ratio": rev / ours}

    def _initial_tangents(self) -> Tensor:
        """``[N, K, T, d]``: tangent of the first hidden representation at each input node."""
        t, n, d, kk = self.t, self.n, self.d, self.columns_per_node
        dtype, dev = self.h0.dtype, self.h0.device
        if self.wrt == "encoded":
            return torch.eye(kk, dtype=dtype, device=dev).view(1, kk, t, d).expand(n, kk, t, d)
        f = self.f_in
        e = torch.zeros(kk, t, n, f, dtype=self.x.dtype, device=dev)
        idx = torch.arange(kk, device=dev)
        e[idx, idx // f, :, idx % f] = 1.0
        xr = self.x.expand(kk, t, n, f).contiguous()
        ur = None if self.u4 is None else self.u4.expand(kk, *self.u4.shape[1:])
        mr = None if self.x_mask is None else self.x_mask.expand(kk, *self.x_mask.shape[1:])
        _, dh = jvp(lambda z: encode_window(self.model, z, ur, mr), (xr,), (e,))
        return dh.permute(2, 0, 1, 3)  # [N, K, T, d]

    def _chunks(self, groups: Tensor, bytes_per_row: float, budget_mb: float) -> List[Tensor]:
        final = self.supports()[-1][groups].sum(1)  # rows per group at the widest point
        return pack_chunks(groups, final, bytes_per_row, budget_mb)

    def run(self, reduce: Callable[[Tensor, Tensor, Tensor], None], *, out_nodes: Optional[Sequence[int]] = None,
            budget_mb: float = 256.0, progress: bool = False) -> None:
        """Propagate all columns and hand each chunk's results to ``reduce``.

        Args:
            reduce: called as ``reduce(out_rows_n [P], in_nodes [P], Y [t_out, P, K, f_out])``:
                ``Y[:, p, k, :]`` is the Jacobian of the outputs at node ``out_rows_n[p]`` w.r.t.
                column ``k`` of input node ``in_nodes[p]``; pairs not listed are exactly zero.
            out_nodes: only these output nodes are decoded (default: all).
            budget_mb: memory budget of one chunk's tangents (chunks of input nodes are sized
                to it).
            progress: tqdm bar over the chunks.
        """
        dev = self.x.device
        kk, t, d = self.columns_per_node, self.t, self.d
        esize = self.h0.element_size()
        bytes_per_row = tangent_row_bytes(self.steps, kk, t, d, esize)
        keep = torch.ones(self.n, dtype=torch.bool, device=dev)
        if out_nodes is not None:
            keep = torch.zeros(self.n, dtype=torch.bool, device=dev)
            keep[torch.as_tensor(list(out_nodes), dtype=torch.long, device=dev)] = True
        d0 = self._initial_tangents()
        groups = torch.arange(self.n, device=dev)
        last = len(self.steps) - 1
        for chunk in tqdm(self._chunks(groups, bytes_per_row, budget_mb), disable=not progress,
                          desc="Jacobian chunks", leave=False):
            g = chunk.numel()
            rows_g = torch.arange(g, device=dev)
            rows_n = chunk.to(dev)
            sup = torch.zeros(g, self.n, dtype=torch.bool, device=dev)
            sup[rows_g, rows_n] = True
            dx, kmajor = d0[rows_n], False  # [P, K, T, d]; graph steps return [K, P, T, d]
            read_out = False  # becomes True when the last graph step contracts with the read-out
            for i, st in enumerate(self.steps):
                fold = i == last and self.readout is not None  # LayerNorm folded into the read-out
                if st.kind == "temporal":
                    if kmajor:
                        dx, kmajor = dx.transpose(0, 1).contiguous(), False
                    dx = st.jvp(rows_n, dx, apply_norm=not fold)
                    continue
                sup = (sup.to(torch.float32) @ st.reach.T.to(torch.float32)) > 0
                out_g, out_n = sup.nonzero(as_tuple=True)
                if (fold and self.pulled is not None
                        and st.padded_rows(out_n, self.n) <= graph_step.MAX_PADDING * out_n.numel()):
                    y = st.contract(rows_g, rows_n, dx, out_g, out_n, self.pulled, kmajor=kmajor)
                    dx, kmajor, read_out = y.view(*y.shape[:2], self.readout.horizon, -1), False, True  # [P, K, H, F]
                else:
                    lookup = torch.full((g, self.n), -1, dtype=torch.long, device=dev)
                    lookup[out_g, out_n] = torch.arange(out_g.numel(), device=dev)
                    dx = st.jvp(rows_g, rows_n, dx, out_g, out_n, lookup, apply_norm=not fold, kmajor=kmajor)
                    kmajor = True
                rows_g, rows_n = out_g, out_n
            if kmajor:
                dx = dx.transpose(0, 1).contiguous()
            sel = keep[rows_n]
            if not bool(sel.all()):
                rows_g, rows_n, dx = rows_g[sel], rows_n[sel], dx[sel]
            if rows_n.numel() == 0:
                continue
            y = dx.permute(2, 0, 1, 3) if read_out or self.readout is None else self.readout.apply(rows_n, dx)
            reduce(rows_n, chunk.to(dev)[rows_g], y)
