"""Where the findings report takes each model's weights from: train runs or bench units, in folder order."""
from stgnn_diag.sensitivity.findings import short_source
from stgnn_diag.sensitivity.findings.models import find_checkpoint


def _ckpt(path):
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    return str(path)


def test_find_checkpoint_takes_train_runs_and_bench_units_in_folder_order(tmp_path):
    runs, bench, other = tmp_path / "runs", tmp_path / "bench", tmp_path / "other"
    s1 = _ckpt(bench / "tts_attn_none__dcrnn__h12__cpu-15min__s1" / "run" / "checkpoints" / "last.ckpt")
    s0 = _ckpt(bench / "tts_attn_none__dcrnn__h12__cpu-15min__s0" / "run" / "checkpoints" / "last.ckpt")
    run = _ckpt(runs / "tas_attn_none-2026" / "checkpoints" / "last.ckpt")
    _ckpt(bench / "tas_attn_noresid__dcrnn__h12__cpu-15min__s0" / "run" / "checkpoints" / "last.ckpt")
    assert find_checkpoint("tts_attn_none", [str(bench)]) == s0 != s1          # lowest seed first
    assert find_checkpoint("tas_attn_none", [str(bench), str(runs)]) == run   # not tas_attn_noresid's
    assert find_checkpoint("tts_attn_none", [str(other), str(runs), str(bench)]) == s0
    assert find_checkpoint("tts_attn_mask", [str(bench), str(runs)]) is None


def test_short_source_names_the_bench_unit():
    src = "checkpoint `models/results/table1-paper/tas_attn_none__dcrnn__h12__paper+e20__s0/run/checkpoints/last.ckpt` (hidden 64)"
    assert short_source(src) == "checkpoint, paper+e20 s0"
    assert short_source("checkpoint `runs/tas_attn_none-1/checkpoints/last.ckpt` (hidden 32)") == "checkpoint"
    assert short_source("untrained (seeded initialisation)") == "untrained"
    assert short_source("brief training: 100 AdamW steps of 16 windows (lr 3e-3), last-20-step loss 0.215 "
                        "(scaled MAE)") == "100 steps, loss 0.215"


def test_pretrained_weights_are_a_source():
    """``--pretrained``: the entry's shipped weights, named with their tag and seed in the tables."""
    import argparse

    from stgnn_diag.sensitivity.findings.models import get_model

    model, src = get_model("tts_attn_mask", argparse.Namespace(pretrained=True), splits=None)
    assert not model.training and src.startswith("pretrained `tts_attn_mask.metr_la_cpu15`")
    assert short_source(src) == "shipped metr_la_cpu15 s0"


def test_the_graph_facts_of_the_page_are_computed_from_the_graph():
    """Sensors with no edge and pairs without a path, on a 6-node graph: {0, 1, 2} joined (one directed edge
    each way of the chain), {3, 4} joined, 5 alone; pairs without a path: 3*3 + 2*4 + 1*5 = 22."""
    import types

    import numpy as np
    import torch

    from stgnn_diag.sensitivity.findings.markdown import _isolated_sentence
    from stgnn_diag.sensitivity.findings.measurements import data_facts

    ei = torch.tensor([[0, 1, 3, 5, 0], [1, 2, 4, 5, 0]])  # 5 -> 5 and 0 -> 0 are self-loops
    ds = types.SimpleNamespace(name="Toy", adj=np.zeros((6, 6)), edge_index=ei)
    facts = data_facts(ds)
    assert facts == {"name": "Toy", "n_nodes": 6, "n_edges": 3, "isolated": [5], "unreachable_pairs": 22}
    assert "One sensor (index 5)" in _isolated_sentence(facts) and "22 ordered" in _isolated_sentence(facts)


def test_the_architecture_sentences_come_from_the_model_config():
    from stgnn_diag import create_model
    from stgnn_diag.sensitivity.findings.markdown import _architectures
    from stgnn_diag.sensitivity.findings.measurements import architecture

    tas = architecture(create_model("tas_attn_none", n_nodes=5, n_layers=3, k=1))
    tts = architecture(create_model("tts_attn_none", n_nodes=5, temporal_layers=1, spatial_layers=2))
    assert (tas["temporal_layers"], tas["graph_layers"], tas["k"], tas["receptive_hops"]) == (3, 3, 1, 3)
    assert tts["graph_on"] == "each node's window summary" and tts["receptive_hops"] == 2 * tts["k"]
    text = _architectures({"tas_attn_none": {"architecture": tas}, "tts_attn_none": {"architecture": tts}})
    assert text.startswith("T&S: 3 temporal attention + 3 graph layers") and "TTS: 1 temporal attention + 2" in text
    # the tokens the layers run on: patches of steps in T&S (the zoo's default), steps in TTS
    assert (tas["patch_size"], tas["tokens"]) == (2, 6) and tas["graph_on"] == "every token of 2 steps"
    assert "attention over 6 tokens of 2 steps; 1 head;" in text and (tts["patch_size"], tts["tokens"]) == (1, 12)
    three = architecture(create_model("tas_attn_none", n_nodes=5, patch_size=3, heads=2))
    assert (three["tokens"], three["graph_on"], three["heads"]) == (4, "every token of 3 steps", 2)
