"""The T&S entries switch to the low-rank learned adjacency from ``LARGE_GRAPH_NODES`` nodes on."""
import torch

import stgnn_diag
from stgnn_diag.nn import AdaptiveAdjacency, LowRankAdjacency
from stgnn_diag.zoo.cards import render_card
from stgnn_diag.zoo.entry import LARGE_GRAPH_NODES
from stgnn_diag.zoo.registry import get_entry, list_models

TAS = [n for n in list_models() if n.startswith("tas_attn_")]


def adjacency_types(model):
    return {type(m) for m in model.modules() if isinstance(m, (AdaptiveAdjacency, LowRankAdjacency))}


def test_every_tas_entry_has_the_preset_and_the_tts_entries_have_none():
    assert len(TAS) == 5
    for name in TAS:
        assert get_entry(name).model_class.large_graph == {"adaptive": "lowrank"}
    assert not get_entry("tts_attn_none").model_class.large_graph


def test_below_the_threshold_the_dense_adjacency_is_built():
    model = stgnn_diag.create_model("tas_attn_none", n_nodes=LARGE_GRAPH_NODES - 1, hidden_size=8)
    assert adjacency_types(model) == {AdaptiveAdjacency}
    assert model.config["model_kwargs"]["adaptive"] is True


def test_from_the_threshold_on_the_low_rank_adjacency_is_built_and_recorded():
    model = stgnn_diag.create_model("tas_attn_mask", n_nodes=LARGE_GRAPH_NODES, hidden_size=8)
    assert adjacency_types(model) == {LowRankAdjacency}
    assert model.config["model_kwargs"]["adaptive"] == "lowrank"
    # the class itself (tsl's Predictor builds it this way) applies the same preset
    assert adjacency_types(type(model)(n_nodes=LARGE_GRAPH_NODES, hidden_size=8)) == {LowRankAdjacency}


def test_an_explicit_choice_wins_over_the_preset():
    model = stgnn_diag.create_model("tas_attn_none", n_nodes=LARGE_GRAPH_NODES, hidden_size=8, adaptive=True)
    assert adjacency_types(model) == {AdaptiveAdjacency}
    assert model.config["model_kwargs"]["adaptive"] is True


def test_a_saved_large_model_rebuilds_as_built(tmp_path):
    model = stgnn_diag.create_model("tas_attn_none", n_nodes=LARGE_GRAPH_NODES, hidden_size=8)
    stgnn_diag.save_pretrained(model, tmp_path / "m")
    again = stgnn_diag.from_pretrained(tmp_path / "m")
    assert adjacency_types(again) == {LowRankAdjacency}
    for (k, v), (_, w) in zip(model.state_dict().items(), again.state_dict().items()):
        assert torch.equal(v, w), k


def test_the_card_says_so():
    assert f"from {LARGE_GRAPH_NODES:,} nodes on" in render_card("tas_attn_none")
    assert "nodes on (`n_nodes`)" not in render_card("tts_attn_none")
