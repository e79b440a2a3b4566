from pathlib import Path

from stgnn_diag import list_models
from stgnn_diag.zoo.cards import render_card

CARDS_DIR = Path(__file__).resolve().parents[2] / "models" / "cards"


def test_every_registered_model_has_an_up_to_date_card():
    names = list_models(native=True)
    assert names
    for name in names:
        card = CARDS_DIR / f"{name}.md"
        assert card.exists(), f"missing model card {card}; run `python -m stgnn_diag.zoo.cards --out models/cards`"
        assert card.read_text() == render_card(name), f"stale card {card}; run `python -m stgnn_diag.zoo.cards --out models/cards`"


def test_every_shipped_tag_card_names_each_argument_it_differs_in_and_counts_the_model_it_loads_into():
    # a tag trained with another width (the budget's hidden 32) or a constructor option the entry leaves at its
    # default (input_mask=True) is a different model: its card says so and counts that model's parameters
    import stgnn_diag
    from stgnn_diag.zoo.cards import _architecture
    from stgnn_diag.zoo.pretrained import pretrained_cfg, pretrained_tags
    from stgnn_diag.zoo.registry import get_entry

    checked, seen_option = 0, False
    for name in list_models(pretrained=True):
        entry_defaults = get_entry(name).defaults
        for tag in pretrained_tags(name):
            cfg = pretrained_cfg(name, tag)
            model = stgnn_diag.create_model(name, pretrained=tag)
            line = _architecture(name, cfg)
            default_model = stgnn_diag.create_model(name, n_nodes=cfg["model_kwargs"]["n_nodes"])
            defaults = default_model.config["model_kwargs"]  # every argument the entry builds with
            differs = sorted(k for k, v in cfg["model_kwargs"].items() if defaults.get(k) not in (None, v))
            if not differs:  # the forecasters' cpu-15min weights: trained with their own defaults (hidden 32)
                assert line == ""
                continue
            for k in differs:
                assert f"`{k}={cfg['model_kwargs'][k]!r}` (default `{defaults[k]!r}`)" in line, (name, tag, k)
                assert getattr(model, k, cfg["model_kwargs"][k]) == cfg["model_kwargs"][k]
            assert f"({sum(p.numel() for p in model.parameters() if p.requires_grad)} trainable parameters)" in line
            assert line in render_card(name)
            checked += 1
            seen_option |= "input_mask" in differs and "input_mask" not in entry_defaults
    if any("_template_" in n for n in list_models(pretrained=True)):
        assert checked  # the template entries (hidden 64) ship weights trained at the budget's hidden 32
    assert seen_option  # the input-mask tags of tas_attn_none
