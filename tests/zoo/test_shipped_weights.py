"""The weights shipped in the package (stgnn_diag/zoo/weights): they verify, and `evaluate --pretrained` reproduces their card's
metrics on the full canonical test set (one T&S and one TTS entry)."""
import pytest

import stgnn_diag
from stgnn_diag.training import evaluate
from stgnn_diag.zoo.pretrained import pretrained_cfg, pretrained_tags

SHIPPED = stgnn_diag.list_models(pretrained=True)


def test_every_native_forecaster_variant_with_weights_builds_and_verifies():
    assert any(n.startswith("tas_attn_") for n in SHIPPED) and any(n.startswith("tts_attn_") for n in SHIPPED), \
        f"stgnn_diag/zoo/weights should ship at least one T&S and one TTS entry, found {SHIPPED}"
    for name in SHIPPED:
        for tag in pretrained_tags(name):  # every tag, not only the default one
            model = stgnn_diag.create_model(name, pretrained=tag)  # sha256 checked, strict load
            cfg = model.pretrained_cfg
            assert cfg["tag"] == tag and cfg["name"] == name
            assert cfg["inputs"]["window"] == model.window and cfg["model_kwargs"]["n_nodes"] == 207


def test_every_native_zoo_entry_ships_weights():
    native = stgnn_diag.list_models(native=True)   # tsl: / pygt: entries are the ecosystem's
    assert native and not set(native) - set(SHIPPED), f"no shipped weights for {sorted(set(native) - set(SHIPPED))}"


@pytest.mark.slow
@pytest.mark.parametrize("prefix", ["tas_attn_", "tts_attn_"])
def test_evaluate_pretrained_reproduces_the_card_on_the_full_test_set(prefix, metr_la_root):
    name = next(n for n in SHIPPED if n.startswith(prefix))
    cfg = pretrained_cfg(name)
    got = evaluate(name, pretrained=True, data_root=metr_la_root, progress=False)
    assert got["windows"] == cfg["metrics"]["windows"] == 6850
    for k in ("mae@3", "mae@6", "mae@12", "mae@avg", "rmse@12", "mape@12"):
        assert got["metrics"][k] == pytest.approx(cfg["metrics"][k], abs=1e-3), k
