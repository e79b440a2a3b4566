"""``spatiotemporal_jacobian``: how much each output (step, node) depends on each input (step, node)."""
from __future__ import annotations

import time
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import torch
from torch import Tensor, nn

from ..models.inputs import check_mask
from .dense import iter_jacobian_chunks
from .model_state import evaluation_mode, functorch_ready
from .norms import block_norm, check_norm
from .structured import StructuredJacobian, UnsupportedModel, encode_window

WRT = ("input", "encoded")
OUTPUTS = ("prediction", "hidden")
METHODS = ("auto", "structured", "reverse", "forward", "autograd")


def _as_window(x: Tensor, name: str = "x") -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}.")
    if x.dim() == 3:
        return x.unsqueeze(0)
    if x.dim() != 4 or x.shape[0] != 1:
        raise ValueError(f"{name} must be one window [time, nodes, features] or [1, time, nodes, features], "
                         f"got {tuple(x.shape)}; take one window of a batch with x[i:i+1].")
    return x


def _as_exog(u: Optional[Tensor], x: Tensor) -> Optional[Tensor]:
    if u is None:
        return None
    if not isinstance(u, Tensor):
        raise TypeError(f"u must be a torch.Tensor, got {type(u).__name__}.")
    if u.dim() in (2, 3) and u.shape[0] == x.shape[1]:
        u = u.unsqueeze(0)
    return u.to(x.dtype)


def _index(sel, size: int, name: str) -> Tensor:
    if sel is None:
        return torch.arange(size)
    if isinstance(sel, slice):
        return torch.arange(size)[sel]
    idx = torch.as_tensor(sel, dtype=torch.long).reshape(-1)
    if idx.numel() == 0:
        raise ValueError(f"{name} selects nothing.")
    if int(idx.min()) < -size or int(idx.max()) >= size:
        raise IndexError(f"{name} {idx.tolist()} out of range for {size}.")
    return idx % size


def _call(model: nn.Module, x: Tensor, edge_index, edge_weight, u, x_mask: Optional[Tensor] = None) -> Tensor:
    kw = {}
    if edge_weight is not None:
        kw["edge_weight"] = edge_weight
    if u is not None:
        kw["u"] = u
    if x_mask is not None:
        kw["x_mask"] = x_mask
    return model(x, edge_index, **kw)


def window_mask(model: nn.Module, x: Tensor, mask: Optional[Tensor]) -> Optional[Tensor]:
    """The mask of observed readings to hand a model built with ``input_mask=True``: ``mask`` as given, or every
    reading observed when None, checked by :func:`~stgnn_diag.models.inputs.check_mask` (as ``x``'s dtype); None
    for a model that reads none (``ValueError`` if one was given: it would be ignored).

    Shapes:
        x ``[B, T, N, F]``, mask ``[B, T, N, F or 1]`` (or ``[T, N, F or 1]`` for ``B = 1``).
    """
    if getattr(model, "input_mask", False) and mask is None:
        mask = torch.ones(x.shape, dtype=torch.bool, device=x.device)
    elif mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(0)
    return check_mask(model, x, mask)


def _expand_batch(u: Optional[Tensor], b: int) -> Optional[Tensor]:
    return None if u is None else u.expand(b, *u.shape[1:])


def spatiotemporal_jacobian(
    model: nn.Module,
    x: Tensor,
    edge_index,
    edge_weight: Optional[Tensor] = None,
    u: Optional[Tensor] = None,
    *,
    x_mask: Optional[Tensor] = None,
    wrt: str = "input",
    output: str = "prediction",
    norm: Optional[str] = "fro",
    out_steps: Union[None, int, Sequence[int], slice] = None,
    out_nodes: Union[None, int, Sequence[int], slice] = None,
    method: str = "auto",
    chunk_size: Optional[int] = None,
    budget_mb: float = 256.0,
    progress: bool = False,
    return_info: bool = False,
) -> Union[Tensor, Tuple[Tensor, Dict[str, Any]]]:
    r"""Jacobian of a model's outputs w.r.t. its inputs for one window, as block norms.

    Entry ``[t, v, s, u]`` is ``|| d y[t, v, :] / d x[s, u, :] ||``: how much output step ``t`` at node
    ``v`` moves with input step ``s`` at node ``u`` (norm over the feature dimensions).

    The model is evaluated in eval mode (a model in training mode is switched to ``eval()`` for the
    computation with a :class:`~stgnn_diag.sensitivity.TrainingModeWarning`, then restored);
    everything is deterministic.

    Engines (``method``):

    * ``"structured"``: sparse forward mode for the zoo's models
      (:mod:`stgnn_diag.sensitivity.structured`); only the (input node, reachable node) pairs are
      carried through the layers. ``"auto"`` uses it whenever the model has the structure (and
      ``wrt="input"``), otherwise it falls back to:
    * ``"reverse"`` / ``"forward"``: batched VJPs / JVPs with ``torch.func`` (vmap over one-hot
      vectors), for any model with the tsl forward contract; ``"auto"`` picks the side with fewer
      entries.
    * ``"autograd"``: reverse mode by plain autograd on a batch of copies of the window, for models
      ``torch.func`` cannot trace (``"auto"`` switches to it when ``torch.func`` fails).

    Args:
        model: ``model(x, edge_index, edge_weight=None, u=None) -> [batch, horizon, nodes, out]``.
        x: one window ``[time, nodes, features]`` (or with a leading batch of 1).
        edge_index: ``[2, E]`` (source, target) or a SparseTensor, as the model takes it.
        edge_weight: ``[E]`` or None.
        u: covariates for the window, ``[time, exog]`` / ``[time, nodes, exog]`` (or batch of 1).
        x_mask: observed readings ``[time, nodes, features]`` (bool) for a model built with
            ``input_mask=True`` (default: all observed); it is held fixed, so a missing reading's
            column is zero and the observed reading that stands in for it carries its influence.
        wrt: ``"input"`` (w.r.t. ``x``) or ``"encoded"`` (w.r.t. the first hidden representation
            ``model.encode(x, u)``, as in the over-squashing paper; needs a model exposing
            ``check_inputs`` / ``encode`` / ``process`` / ``decode``).
        output: ``"prediction"`` (the forecast) or ``"hidden"`` (the output of the layer stack,
            ``model.process``, aligned with the input steps; needs those methods too).
        norm: ``"fro"``, ``"spectral"``, ``"l1"``, ``"max"``, or None for the raw blocks.
        out_steps: output steps to keep (int, list or slice; default all).
        out_nodes: output nodes to keep (default all).
        method: one of ``"auto"``, ``"structured"``, ``"reverse"``, ``"forward"``, ``"autograd"``.
        chunk_size: VJPs / JVPs per batch for the dense engines (default from ``budget_mb``).
        budget_mb: memory budget of one chunk (input nodes per chunk for the structured engine).
        progress: tqdm bar over the chunks.
        return_info: also return a dict with the engine used, the reason for a fallback, whether
            the model was switched to eval mode, the selections, and the wall time.

    Returns:
        Block norms ``[t_out, n_out, t_in, n_in]``, or with ``norm=None`` the raw blocks
        ``[t_out, n_out, f_out, t_in, n_in, f_in]`` (``f_in`` = hidden size for ``wrt="encoded"``).

    Shapes:
        - x: ``[T, N, F]`` or ``[1, T, N, F]``
        - output: ``[len(out_steps), len(out_nodes), T, N]`` (norms)
    """
    if wrt not in WRT:
        raise ValueError(f"Unknown wrt {wrt!r}; choose one of {WRT}.")
    if output not in OUTPUTS:
        raise ValueError(f"Unknown output {output!r}; choose one of {OUTPUTS}.")
    if method not in METHODS:
        raise ValueError(f"Unknown method {method!r}; choose one of {METHODS}.")
    check_norm(norm)
    if not isinstance(budget_mb, (int, float)) or not budget_mb > 0:
        raise ValueError(f"budget_mb must be a positive number of megabytes, got {budget_mb!r}.")
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}.")
    staged = all(hasattr(model, a) for a in ("check_inputs", "encode", "process", "decode"))
    if (wrt == "encoded" or output == "hidden") and not staged:
        raise ValueError(f"wrt={wrt!r} / output={output!r} need a model exposing check_inputs(), encode(), "
                         f"process() and decode() (stgnn_diag's STAttentionBase); {type(model).__name__} does not. "
                         f"wrt='input', output='prediction' works for any model.")
    x = _as_window(x)
    u = _as_exog(u, x)
    mask = window_mask(model, x, x_mask)
    t0 = time.perf_counter()
    was_training = model.training
    info: Dict[str, Any] = {"switched_to_eval": was_training, "fallback_reason": None}
    with evaluation_mode(model, "the Jacobian"), torch.no_grad():
        result = _jacobian(model, x, edge_index, edge_weight, u, mask, wrt, output, norm, out_steps, out_nodes,
                           method, chunk_size, budget_mb, progress, staged, info)
    info["seconds"] = time.perf_counter() - t0
    return (result, info) if return_info else result


def _jacobian(model, x, edge_index, edge_weight, u, mask, wrt, output, norm, out_steps, out_nodes, method,
              chunk_size, budget_mb, progress, staged, info) -> Tensor:
    _, t_in, n, f_x = x.shape
    ei, ew, u4 = edge_index, edge_weight, u
    with torch.no_grad():
        if staged:
            ei, ew, u4 = model.check_inputs(x, edge_index, edge_weight, u)
            h0 = encode_window(model, x, u4, mask)
            hidden = model.process(h0, ei, ew, u4)
            y = hidden if output == "hidden" else model.decode(hidden)
        else:
            y = _call(model, x, edge_index, edge_weight, u, mask)
    if y.dim() != 4 or y.shape[0] != 1 or y.shape[2] != n:
        raise ValueError(f"The model returned shape {tuple(y.shape)}; expected [1, steps, {n}, features].")
    steps = _index(out_steps, y.shape[1], "out_steps")
    nodes = _index(out_nodes, n, "out_nodes")
    info.update(out_steps=steps.tolist(), out_nodes=nodes.tolist(), wrt=wrt, output=output)
    f_out = y.shape[-1]
    f_in = f_x if wrt == "input" else h0.shape[-1]
    dev, dtype = x.device, x.dtype
    ts, ns = steps.numel(), nodes.numel()
    if norm is None:
        res = torch.zeros(ts, ns, f_out, t_in, n, f_in, dtype=dtype, device=dev)
    else:
        res = torch.zeros(ts, ns, t_in, n, dtype=dtype, device=dev)

    if method in ("auto", "structured"):
        try:
            if method == "auto" and wrt != "input":
                raise UnsupportedModel("wrt='encoded' has many more columns than rows: reverse mode is cheaper")
            eng = StructuredJacobian(model, x, edge_index, edge_weight, u, wrt=wrt, output=output, x_mask=mask)
        except UnsupportedModel as e:
            if method == "structured":
                raise ValueError(f"method='structured' cannot handle this model: {e}") from e
            info["fallback_reason"] = str(e)
        else:
            pos = torch.full((n,), -1, dtype=torch.long, device=dev)
            pos[nodes.to(dev)] = torch.arange(ns, device=dev)
            steps_d = steps.to(dev)

            def reduce(rows_n: Tensor, in_nodes: Tensor, yk: Tensor) -> None:
                # yk [t_all, P, K, f_out] -> blocks [P, ts, f_out, t_in, f_in]
                p = rows_n.numel()
                blk = yk[steps_d].view(ts, p, t_in, f_in, f_out).permute(1, 0, 4, 2, 3)
                if norm is None:
                    view = res.permute(1, 4, 0, 2, 3, 5)  # [ns, n_in, ts, f_out, t_in, f_in]
                    view[pos[rows_n], in_nodes] = blk
                else:
                    view = res.permute(1, 3, 0, 2)  # [ns, n_in, ts, t_in]
                    view[pos[rows_n], in_nodes] = block_norm(blk.permute(0, 1, 3, 2, 4), norm)

            eng.run(reduce, out_nodes=nodes.tolist(), budget_mb=budget_mb, progress=progress)
            info["method"] = "structured"
            return res

    # ---- dense engines ------------------------------------------------------------------------
    steps_d, nodes_d = steps.to(dev), nodes.to(dev)
    if wrt == "input":
        primal = x

        def batched(z: Tensor) -> Tensor:
            b = z.shape[0]
            mb = _expand_batch(mask, b)
            if output == "hidden":
                out = model.process(encode_window(model, z, _expand_batch(u4, b), mb), ei, ew, _expand_batch(u4, b))
            else:
                out = _call(model, z, edge_index, edge_weight, _expand_batch(u, b), mb)
            return out[:, steps_d][:, :, nodes_d]
    else:
        primal = h0

        def batched(z: Tensor) -> Tensor:
            b = z.shape[0]
            h = model.process(z, ei, ew, _expand_batch(u4, b))
            out = h if output == "hidden" else model.decode(h)
            return out[:, steps_d][:, :, nodes_d]

    n_rows, n_cols = ts * ns * f_out, primal.numel()
    mode = method if method in ("reverse", "forward", "autograd") else ("reverse" if n_rows <= n_cols else "forward")
    hidden_size = int(getattr(model, "hidden_size", 64) or 64)
    per_item = 40.0 * t_in * n * max(hidden_size, f_in) * x.element_size()
    chunk = chunk_size or max(1, min(256, int(budget_mb * 2**20 // per_item)))
    group = f_in if mode == "forward" else f_out
    chunk = max(group, chunk - chunk % group)

    def consume(mode_: str) -> None:
        with functorch_ready(model):
            for s, e, blk in iter_jacobian_chunks(batched, primal, mode=mode_, chunk_size=chunk,
                                                  batched_fn=batched, progress=progress):
                if mode_ == "forward":  # columns s:e of [t_in * n * f_in]
                    cols = blk.view(e - s, ts, ns, f_out)
                    j = s // f_in
                    if norm is None:
                        flat = res.view(ts, ns, f_out, t_in * n * f_in)
                        flat[..., s:e] = cols.permute(1, 2, 3, 0)
                    else:
                        b = cols.view((e - s) // f_in, f_in, ts, ns, f_out).permute(2, 3, 0, 4, 1)
                        res.view(ts, ns, t_in * n)[..., j:j + (e - s) // f_in] = block_norm(b, norm)
                else:  # rows s:e of [ts * ns * f_out]
                    if norm is None:
                        res.view(ts * ns * f_out, t_in * n * f_in)[s:e] = blk
                    else:
                        b = blk.view((e - s) // f_out, f_out, t_in, n, f_in).permute(0, 2, 3, 1, 4)
                        res.view(ts * ns, t_in, n)[s // f_out:e // f_out] = block_norm(b, norm)

    try:
        consume(mode)
    except RuntimeError as e:
        if method != "auto" or mode == "autograd":
            raise
        info["fallback_reason"] = ((info["fallback_reason"] + "; ") if info["fallback_reason"] else "") + \
            f"torch.func failed ({str(e).splitlines()[0][:160]})"
        mode = "autograd"
        chunk = max(f_out, chunk - chunk % f_out)
        res.zero_()
        consume(mode)
    info["method"] = mode
    return res
