from stgnn_diag import list_models
from stgnn_diag.zoo.cards import CARDS_DIR, render_card


def test_every_registered_model_has_an_up_to_date_card():
    names = [n for n in list_models() if ":" not in n]
    assert names
    for name in names:
        card = CARDS_DIR / f"{name}.md"
        assert card.exists(), f"missing model card {card}; run `python -m stgnn_diag.zoo.cards`"
        assert card.read_text() == render_card(name), f"stale card {card}; run `python -m stgnn_diag.zoo.cards`"
