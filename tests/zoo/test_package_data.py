"""The shipped weights are package data (a built wheel carries them) and the CLI shows their cards."""
import hashlib
import json
from pathlib import Path

import pytest

import stgnn_diag
from stgnn_diag.cli import main
from stgnn_diag.zoo import pretrained


def test_the_weights_folder_is_inside_the_package_and_every_file_verifies():
    package = Path(stgnn_diag.__file__).resolve().parent
    assert pretrained.WEIGHTS_DIR.resolve().parent.parent == package  # stgnn_diag/zoo/weights
    configs = sorted(pretrained.WEIGHTS_DIR.glob("*.json"))
    assert len(configs) >= 21
    for path in configs:
        cfg = json.loads(path.read_text())
        pt = pretrained.WEIGHTS_DIR / cfg["weights"]
        assert pt.is_file(), pt
        assert hashlib.sha256(pt.read_bytes()).hexdigest() == cfg["sha256"], pt.name
        assert path.name == f"{cfg['name']}.{cfg['tag']}.json"


def test_setup_cfg_ships_the_weights_and_py_typed():
    cfg = (Path(__file__).resolve().parents[2] / "setup.cfg").read_text()
    assert "stgnn_diag.zoo = weights/*.pt, weights/*.json" in cfg and "py.typed" in cfg
    assert (Path(stgnn_diag.__file__).parent / "py.typed").is_file()


def test_models_card_prints_the_card(capsys):
    assert main(["models", "--card", "tts_attn_penalty"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# `tts_attn_penalty`") and "stgnn_diag/zoo/weights/tts_attn_penalty.metr_la_cpu15.pt" in out


@pytest.mark.parametrize("argv, says", [
    (["models", "--card", "tts_atn_penalty"], "Did you mean: tts_attn_penalty"),
    (["models", "--card", "tsl:STIDModel"], "integration entry"),
    (["models", "nomatch*"], "no zoo entry matches 'nomatch*'"),
])
def test_a_card_or_listing_that_does_not_exist_is_one_line_and_status_2(argv, says, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert says in captured.err and captured.err.count("\n") == 1 and captured.out == ""
