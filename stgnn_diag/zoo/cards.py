"""Model cards for the zoo, rendered from the entries and their shipped weights' metadata (package data).

``stgnn-diag models --card NAME`` prints one; ``python -m stgnn_diag.zoo.cards --out models/cards`` writes one
markdown file per registered name and an index (the repository keeps them in ``models/cards``, and a test
checks they match the code).
"""
from __future__ import annotations

import argparse
import inspect
from pathlib import Path

from .pretrained import pretrained_cfg, pretrained_tags
from .entry import LARGE_GRAPH_NODES
from .registry import create_model, get_entry, list_models, resolved_config

#: The default output folder of :func:`write_cards`, relative to the current directory.
CARDS_DIR = Path("models") / "cards"
#: The node count a card counts parameters for when the entry ships no weights (the default data set's,
#: METR-LA's 207 sensors); an entry with weights is counted for the nodes its weights were trained on.
CARD_NODES = 207

#: Which window to train an attention entry at, per arrangement tag: what docs/long_windows.md measured
#: (METR-LA, T = 12 / 48 / 96, one seed at the smoke-test budget, and the lag-hop task at T = 48 and 96).
WINDOW_ADVICE = {
    "tas_attn": "step-12 MAE of T&S (b) 3.632 at T = 12 and 3.603 at 48 (three seeds at the CPU budget; seed by "
                "seed -0.028 +- 0.006, separated by the paired t-test), 3.703 at 96 (one seed, smoke-test budget)",
    "tts_attn": "step-12 MAE of TTS (b) 4.044 at T = 12, 3.791 at 48, 3.701 at 96 (one seed, smoke-test budget)",
}


def render_window_advice(tags) -> str:
    """The card's "Window length" section for an entry with one of :data:`WINDOW_ADVICE`'s tags, else ''."""
    tag = next((t for t in tags if t in WINDOW_ADVICE), None)
    if tag is None:
        return ""
    return ("\n## Window length\n\n"
            "The shipped weights read 12 input steps; the entry takes any `window` (`create_model(name, window=T)`, "
            "`stgnn-diag train --window T`). For forecasts an hour ahead train at T = 48 or more: "
            f"{WINDOW_ADVICE[tag]}, on the same test targets at every T. No diagonal "
            "variant has been measured ahead of plain attention (b) at any window, and the trained attention shows no "
            "diagonal sink up to T = 96 (docs/long_windows.md, which also gives the cost per step against T).\n")


def card_nodes(name: str) -> int:
    """The node count of ``name``'s default pretrained weights, else :data:`CARD_NODES`."""
    if pretrained_tags(name):
        n = pretrained_cfg(name, True)["model_kwargs"].get("n_nodes")
        if n:
            return int(n)
    return CARD_NODES


def parameter_count(name: str, **overrides) -> int:
    """Number of trainable parameters of a zoo entry built with its defaults (plus ``overrides``), for
    :func:`card_nodes` nodes unless ``n_nodes`` is given."""
    model = create_model(name, **{"n_nodes": card_nodes(name), **overrides})
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def _num(v) -> str:
    return f"{v:.4f}" if isinstance(v, (int, float)) else f"per node ({len(v)} values, in the tag's JSON)"


def _row(label: str, m: dict) -> str:
    cells = " | ".join(f"{m[f'{k}@{s}']:.3f}" if f"{k}@{s}" in m else "-"
                       for k in ("mae", "rmse", "mape") for s in (3, 6, 12, "avg"))
    return f"| {label} | {cells} |"


def _lr(cfg: dict) -> str:
    """``", lr 0.003"`` from the budget settings a tag was trained with (empty when not recorded)."""
    lr = (cfg.get("budget_resolved") or {}).get("lr")
    return f", lr {lr:g}" if lr is not None else ""


def _architecture(name: str, cfg: dict) -> str:
    """One line naming the entry defaults a tag's weights were trained without (a budget's model overrides,
    e.g. ``hidden_size=32`` under ``cpu-15min``), with the parameter count of the model they load into;
    empty when the tag has the entry's architecture."""
    kwargs = cfg["model_kwargs"]
    # every argument the entry builds with, its constructor's options (input_mask ...) included
    defaults = resolved_config(name, n_nodes=kwargs.get("n_nodes") or CARD_NODES)["model_kwargs"]
    diff = {k: v for k, v in kwargs.items() if defaults.get(k) is not None and defaults[k] != v}
    if not diff:
        return ""
    by_budget = (cfg.get("budget_resolved") or {}).get("model_overrides") or {}
    said = ", ".join(f"`{k}={v!r}` (default `{defaults[k]!r}`)" for k, v in sorted(diff.items()))
    set_by_budget = sorted(set(diff) & set(by_budget))
    why = (f": the `{cfg['budget']}` budget trains every model with "
           + ", ".join(f"`{k}={by_budget[k]!r}`" for k in set_by_budget)) if set_by_budget else ""
    params = parameter_count(name, **{k: kwargs[k] for k in diff}, n_nodes=kwargs.get("n_nodes") or CARD_NODES)
    how = "pretrained=True" if cfg.get("default", True) else f'pretrained="{cfg["tag"]}"'
    return (f"Architecture: the entry's defaults but {said}{why}; `{how}` builds this architecture "
            f"({params} trainable parameters).\n")


def render_pretrained(name: str) -> str:
    """The card section of the shipped weights: each tag's test metrics beside the baselines, and its command."""
    tags = pretrained_tags(name)
    if not tags:
        return "\n## Pretrained weights\n\nNone shipped yet.\n"
    head = " | ".join(f"{k.upper()}@{s}" for k in ("mae", "rmse", "mape") for s in (3, 6, 12, "avg"))
    out = ["\n## Pretrained weights\n"]
    for tag in tags:
        c = pretrained_cfg(name, tag)
        inp = c["inputs"]
        out += [f"### `{name}.{tag}`{' (default)' if c.get('default') else ''}\n",
                f"`stgnn_diag.create_model(\"{name}\", pretrained=\"{tag}\")`, or "
                f"`stgnn-diag evaluate --model {name} --pretrained {tag}`. Trained on {c['dataset']} "
                f"({c['protocol']} protocol), budget `{c.get('budget_label') or c['budget']}` ({c['global_steps']} steps"
                f"{_lr(c)}), seed {c['seed']}, "
                f"{c.get('trained_on') or '?'}; weights `stgnn_diag/zoo/weights/{c['weights']}` (sha256 `{c['sha256'][:16]}...`).\n",
                *([arch] if (arch := _architecture(name, c)) else []),
                f"Test set ({c['metrics'].get('windows')} windows), masked metrics in mph / %:\n",
                f"| | {head} |", "|---|" + "---|" * 12, _row(f"`{name}`", c["metrics"])]
        if "seasonal_fallback" in c:  # switched on after training (stgnn_diag.bench.weights --seasonal-fallback)
            out += [_row(f"`{name}` without `seasonal_fallback`", c["seasonal_fallback"]["metrics_without"])]
        out += [_row(b, m) for b, m in c.get("baselines", {}).items()]
        out += ["", f"Inputs: x scaled with mean {_num(inp['scaler_mean'])} / std {_num(inp['scaler_std'])} "
                    f"(`{inp['covariates']}` covariates: {inp['covariate_encoding']}); window {inp['window']}, "
                    f"horizon {inp['horizon']}; {inp['edge_direction']}"
                    + (f"; x_mask {inp['x_mask']}" if "x_mask" in inp else "") + ".\n",
                *([f"Not in the weights file: {', '.join(f'`{k}`' for k in c['fitted_at_load'])}, a function of the "
                   f"training data, fitted from the {c['protocol']} training split when `stgnn-diag evaluate` loads "
                   f"the tag; in your own code call `stgnn_diag.training.fit_fallback_table(model)` once.\n"]
                  if c.get("fitted_at_load") else []),
                f"Reproduce: `{c['command']}` (commit `{(c.get('git_commit') or '?')[:10]}`).\n"]
    return "\n".join(out)


def render_card(name: str) -> str:
    """The markdown card of one registered (non-namespaced) entry."""
    entry = get_entry(name)
    about = inspect.getdoc(entry.fn) or entry.summary
    nodes = card_nodes(name)
    model = create_model(name, n_nodes=nodes)
    rows = "\n".join(f"| `{k}` | `{v!r}` |" for k, v in sorted(entry.defaults.items()))
    return (
        f"# `{name}`\n\n{about}\n\n"
        f"- class: `{type(model).__module__}.{type(model).__name__}`, a "
        f"`{type(model).__bases__[0].__module__}.{type(model).__bases__[0].__name__}` with the defaults below "
        f"(`type(model)(**kwargs)` builds this variant: tsl's `Predictor(model_class=..., model_kwargs=...)`)\n"
        f"- trainable parameters: {parameter_count(name)} (with n_nodes={nodes})\n"
        f"- tags: {', '.join(entry.tags) or '-'}\n"
        + (f"- from {LARGE_GRAPH_NODES:,} nodes on (`n_nodes`), unless given: "
           + ", ".join(f"`{k}={v!r}`" for k, v in entry.model_class.large_graph.items())
           + f" ({entry.model_class.large_graph_note})\n"
           if getattr(entry.model_class, "large_graph", None) else "")
        + f"- create: `stgnn_diag.create_model(\"{name}\", n_nodes={nodes}, exog_size=...)`\n\n"
        f"## Defaults (override any in `create_model`)\n\n| argument | default |\n|---|---|\n{rows}\n"
        + render_window_advice(entry.tags)
        + render_pretrained(name)
    )


def write_cards(out_dir: Path = CARDS_DIR) -> list:
    """Write one card per registered entry and an index ``README.md``; returns the written paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    names = [n for n in list_models() if get_entry(n).native]
    paths = []
    for name in names:
        path = out_dir / f"{name}.md"
        path.write_text(render_card(name))
        paths.append(path)
    index = "\n".join(f"| [`{n}`]({n}.md) | {parameter_count(n)} | {', '.join(pretrained_tags(n)) or '-'} | "
                      f"{get_entry(n).summary} |" for n in names)
    (out_dir / "README.md").write_text(
        "# Model cards\n\nGenerated by `python -m stgnn_diag.zoo.cards`; parameter counts for the nodes of each "
        f"entry's shipped weights, {CARD_NODES} (METR-LA's sensors) for an entry without weights.\n\n"
        f"| name | parameters | pretrained tags | what |\n|---|---|---|---|\n{index}\n")
    return paths


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=CARDS_DIR,
                        help="output folder (default: models/cards under the current directory)")
    args = parser.parse_args(argv)
    for p in write_cards(args.out):
        print(p)


if __name__ == "__main__":
    main()
