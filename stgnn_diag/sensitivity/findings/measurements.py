"""What the findings report measures on each model: Jacobian profiles, attention, attention-path norms."""
from __future__ import annotations

import copy
import math
from typing import Dict, Tuple

import numpy as np
import torch

from ...models.inputs import mask_kwargs
from ...nn import TemporalAttention
from ..analysis import analyze_window
from ..attention import attention_diagnostics
from ..data import exog_for
from ..paths import path_bounds, path_norm_summary
from .models import get_model, test_mae


def last_attention_input(model, x, ei, ew, u, x_mask=None):
    """The input ``[T, N, d]`` of the model's last TemporalAttention on one window (``x [T, N, F]``, and
    its observed readings ``x_mask`` for a model built with ``input_mask=True``), and the layer."""
    layers = [m for m in model.modules() if isinstance(m, TemporalAttention)]
    layer, store = layers[-1], {}
    h = layer.register_forward_hook(lambda mod, a, o: store.setdefault("x", a[0].detach()))
    try:
        with torch.no_grad():
            model(x.unsqueeze(0), ei, ew, u=None if u is None else u.unsqueeze(0),
                  **mask_kwargs(model, None if x_mask is None else x_mask.unsqueeze(0)))
    finally:
        h.remove()
    return store["x"][0], layer


def layer_paths(model, x, ei, ew, u, nodes, x_mask=None) -> Dict[str, float]:
    """Mean path norms of the last attention layer over the sequences of ``nodes`` (float64)."""
    xin, layer = last_attention_input(model, x, ei, ew, u, x_mask)
    lay = copy.deepcopy(layer).double().eval()
    acc: Dict[str, float] = {}
    for n in nodes:
        s = path_norm_summary(lay, xin[:, n].double(), norm="spectral")
        for k, v in s.items():
            acc[k] = acc.get(k, 0.0) + v / len(nodes)
    b = path_bounds(lay, xin[:, nodes[0]].double())
    acc["value_offdiag_uniform"] = b.value_offdiag_uniform
    acc["query_bound"] = b.query_bound
    return acc


def map_pattern(m) -> Dict[str, float]:
    """Shape of an averaged attention map ``[T, T]``: diagonal weight, column stripes, uniformity.

    ``diag_x_T``: mean diagonal weight x T; ``col_max_x_T``: the largest column mean x T (a key every query
    attends to); ``col_argmax``: that key step; ``row_spread``: mean abs(a_ij - column mean) / mean a_ij (0 when
    all query rows are equal, i.e. pure column stripes, diagonal excluded); ``pattern``: a one-word summary.
    """
    a = np.asarray(m, dtype=float)
    t = a.shape[0]
    off = ~np.eye(t, dtype=bool)
    col = np.array([a[off[:, j], j].mean() for j in range(t)])
    spread = float(np.abs(a - col[None, :])[off].mean() / a[off].mean())
    diag = float(np.diag(a).mean() * t)
    cmax = float(col.max() * t)
    if diag > 1.5 and diag > cmax:
        pat = "diagonal"
    elif cmax > 1.5 and spread < 0.5:
        pat = "column stripes"
    elif cmax < 1.2 and diag > 0.8:
        pat = "uniform"
    else:
        pat = "mixed"
    return {"diag_x_T": diag, "col_max_x_T": cmax, "col_argmax": int(col.argmax()), "row_spread": spread,
            "pattern": pat}



def architecture(model) -> Dict[str, object]:
    """What the report says about a model's structure, read from its configuration: temporal and graph
    layers, heads, diffusion hops K, whether a learned (adaptive) adjacency joins every pair of sensors, where
    the graph layers act, and the road-graph receptive field (graph layers x K hops)."""
    cfg = dict(getattr(model, "config", {}) or {})
    c = dict(cfg.get("model_kwargs", cfg))  # a zoo model's config: {"name", "model_kwargs"}
    patch = int(c.get("patch_size", 1) or 1)
    token = "every step" if patch == 1 else f"every token of {patch} steps"
    if "n_layers" in c:  # T&S: attention and graph layers alternate, on every token
        temporal = graph = int(c["n_layers"])
        on = token
    else:
        temporal, graph = int(c.get("temporal_layers", 0)), int(c.get("spatial_layers", 0))
        on = "each node's window summary" if c.get("spatial_on") == "summary" else token
    k = int(c.get("k", 1))
    return {"temporal_layers": temporal, "graph_layers": graph, "heads": c.get("heads"), "k": k,
            "adaptive": bool(c.get("adaptive")), "graph_on": on, "receptive_hops": graph * k, "patch_size": patch,
            "tokens": int(c.get("window", 12)) // patch}


def data_facts(ds) -> Dict[str, object]:
    """What the report says about the data set and its graph, computed from it: display name, sensors, edges
    (self-loops excluded), the sensors with no edge to any other, and the ordered sensor pairs that no path
    joins (hop distances ignore direction, as the report's profiles do)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = int(ds.adj.shape[0])
    src, dst = ds.edge_index.numpy()
    off = src != dst
    g = coo_matrix((np.ones(int(off.sum())), (src[off], dst[off])), shape=(n, n))
    _, labels = connected_components(g, directed=False)
    sizes = np.bincount(labels)
    degree = np.bincount(np.concatenate([src[off], dst[off]]), minlength=n)
    return {"name": getattr(ds, "name", "the data set"), "n_nodes": n, "n_edges": int(off.sum()),
            "isolated": [int(i) for i in np.flatnonzero(degree == 0)],
            "unreachable_pairs": int(sum(int(s) * (n - int(s)) for s in sizes))}


def measure_models(args, ds, splits) -> Tuple[Dict[str, dict], Dict[str, tuple]]:
    """Analyse every ``<arrangement>_<variant>`` model of ``args`` on the data set's test split.

    Jacobians on test window ``args.index`` (``x [T, N, F]``), attention averaged over
    ``args.attention_windows`` evenly spaced test windows, attention paths on 8 sensors.

    Returns:
        ``(results, analyses)``: ``results[name]`` is the JSON-ready dict of ``results.json``;
        ``analyses[name] = (WindowAnalysis, [AttentionStats per layer])`` for the figures.
    """
    w = splits.test[args.index]
    x, ei, ew = w["x"], ds.edge_index, ds.edge_weight
    pos = torch.linspace(0, len(splits.test) - 1, args.attention_windows).long()
    batch = splits.test.get_batch(pos)
    nodes = list(range(0, ds.adj.shape[0], max(1, ds.adj.shape[0] // 8)))[:8]

    results: Dict[str, dict] = {}
    analyses = {}
    for arch in args.arrangements:
        for var in args.variants:
            name = f"{arch}_{var}"
            model, source = get_model(name, args, splits)
            u = exog_for(model, w["u"])  # a checkpoint trained with covariates takes them; None otherwise
            res = analyze_window(model, x, ei, ew, u, **mask_kwargs(model, w["x_mask"]), directed=False, hidden=True,
                                 progress=not args.no_progress)
            att = attention_diagnostics(model, batch["x"], ei, ew, u=exog_for(model, batch["u"]),
                                        **mask_kwargs(model, batch["x_mask"]))
            paths = layer_paths(model, x, ei, ew, u, nodes, w["x_mask"])
            analyses[name] = (res, att)
            means = [float(np.nanmean(res.profile.mean[i].numpy())) for i, hv in enumerate(res.profile.hops)
                     if math.isfinite(hv) and hv <= res.summary["max_hop_reached"]]
            results[name] = {"source": source, "architecture": architecture(model),
                             "test_mae_256": test_mae(model, splits), **res.summary,
                             "hop_step_factors": [a / b for a, b in zip(means[:-1], means[1:]) if b > 0],
                             "attention": [a.to_dict() | {"map": None} for a in att],
                             "attention_diag_x_T_avg32": [a.diag_ratio for a in att],
                             "attention_last_map": att[-1].map.tolist(),
                             "attention_entropy_ratio": [float(a.entropy.mean()) / a.max_entropy for a in att],
                             "last_layer_paths": paths}
            print(f"{name}: {source}; jacobian {res.summary['jacobian_seconds']} s", flush=True)
    return results, analyses
