from stgnn_diag import list_models
from stgnn_diag.zoo.cards import CARDS_DIR, render_card


def test_every_registered_model_has_an_up_to_date_card():
    names = [n for n in list_models() if ":" not in n]
    assert names
    for name in names:
        card = CARDS_DIR / f"{name}.md"
        assert card.exists(), f"missing model card {card}; run `python -m stgnn_diag.zoo.cards`"
        assert card.read_text() == render_card(name), f"stale card {card}; run `python -m stgnn_diag.zoo.cards`"


def test_a_card_names_the_architecture_its_weights_load_into_when_it_is_not_the_entrys():
    import stgnn_diag
    from stgnn_diag.zoo.cards import _architecture
    from stgnn_diag.zoo.pretrained import pretrained_cfg
    from stgnn_diag.zoo.registry import get_entry

    checked = 0
    for name in list_models(pretrained=True):
        cfg = pretrained_cfg(name, True)
        line = _architecture(name, cfg)
        defaults = get_entry(name).defaults
        differs = sorted(k for k, v in cfg["model_kwargs"].items() if defaults.get(k) not in (None, v))
        if not differs:  # the forecasters: trained with their own defaults (hidden 32)
            assert line == ""
            continue
        model = stgnn_diag.create_model(name, pretrained=True)
        for k in differs:
            assert f"`{k}={cfg['model_kwargs'][k]!r}` (default `{defaults[k]!r}`)" in line
            assert getattr(model, k, cfg["model_kwargs"][k]) == cfg["model_kwargs"][k]
        assert f"({sum(p.numel() for p in model.parameters() if p.requires_grad)} trainable parameters)" in line
        assert line in render_card(name)
        checked += 1
    if any("_template_" in n for n in list_models(pretrained=True)):
        assert checked  # the template entries (hidden 64) ship weights trained at the budget's hidden 32


def test_every_shipped_tag_card_names_each_argument_it_differs_in_and_counts_the_model_it_loads_into():
    # a tag trained with a constructor option the entry leaves at its default (input_mask=True) is a different
    # model: its card must say so and count that model's parameters, not the entry's
    import stgnn_diag
    from stgnn_diag.zoo.cards import _architecture, entry_defaults
    from stgnn_diag.zoo.pretrained import pretrained_cfg, pretrained_tags

    seen_option = False
    for name in list_models(pretrained=True):
        defaults = entry_defaults(name)
        for tag in pretrained_tags(name):
            cfg = pretrained_cfg(name, tag)
            differs = sorted(k for k, v in cfg["model_kwargs"].items() if defaults.get(k) not in (None, v))
            line = _architecture(name, cfg)
            if not differs:
                assert line == ""
                continue
            for k in differs:
                assert f"`{k}={cfg['model_kwargs'][k]!r}`" in line, (name, tag, k)
            seen_option |= "input_mask" in differs
            model = stgnn_diag.create_model(name, pretrained=tag)
            assert f"({sum(p.numel() for p in model.parameters() if p.requires_grad)} trainable parameters)" in line
    assert seen_option  # the input-mask tags of tas_attn_none
