"""The README's Python examples run as written, in order, in one namespace (as a reader pastes them), on the
real METR-LA data."""
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(text: str):
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


def test_the_readme_has_examples():
    blocks = python_blocks(README.read_text())
    assert len(blocks) >= 4
    assert any("create_model" in b for b in blocks) and any("pretrained=True" in b for b in blocks)


@pytest.mark.realdata
def test_readme_python_examples_run(metr_la_root, monkeypatch, tmp_path):
    pl = pytest.importorskip("pytorch_lightning")

    class ShortTrainer(pl.Trainer):  # the tsl example tests a pretrained model: two test batches suffice here
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **{**kwargs, "limit_test_batches": 2, "enable_progress_bar": False,
                                       "enable_model_summary": False})

    monkeypatch.setenv("STGNN_DIAG_DATA", str(metr_la_root))
    monkeypatch.chdir(tmp_path)  # save_pretrained(model, "my_model") writes into the current directory
    monkeypatch.setattr(pl, "Trainer", ShortTrainer)
    namespace = {}
    for block in python_blocks(README.read_text()):
        exec(compile(block, str(README), "exec"), namespace)
    assert tuple(namespace["y_hat"].shape) == (8, 12, 207, 1)
    assert tuple(namespace["pred"].shape) == (4 * 207, 12, 1)
    assert namespace["model"].pretrained_cfg["tag"]
