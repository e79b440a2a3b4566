"""Grid specs: expansion of names and patterns, unit ids, budget labels, clear errors (no data needed)."""
import json

import pytest

import stgnn_diag
from stgnn_diag.baselines import BASELINES
from stgnn_diag.bench.grid import GridSpec, expand_models
from stgnn_diag.bench.unit import GridError, Unit, budget_label
from stgnn_diag._values import parse_key_values


def test_patterns_expand_with_list_models_and_baselines_are_split_off():
    models, baselines = expand_models(["tas_attn_*", "tts_attn_penalty", "historical_average", "last_*"])
    assert models == stgnn_diag.list_models("tas_attn_*") + ["tts_attn_penalty"]
    assert len(models) == 6
    assert baselines == ["historical_average"] + sorted(b for b in BASELINES if b.startswith("last_"))
    # namespaced entries are zoo models (trained), duplicates collapse
    models, _ = expand_models(["tsl:GraphWaveNetModel", "tsl:Graph*", "pygt:TGCN"])
    assert models == ["tsl:GraphWaveNetModel", "pygt:TGCN"]


@pytest.mark.parametrize("names,match", [(["tas_attn_zzz*"], "matches no zoo model"),
                                         (["tts_attn_penalti"], "Did you mean: tts_attn_penalty"),
                                         (["tsl:GraphWaveNet"], "Unknown model")])
def test_unknown_models_and_empty_patterns_are_errors(names, match):
    with pytest.raises(GridError, match=match):
        expand_models(names)


def test_units_ids_and_order():
    g = GridSpec(models=["tts_attn_none", "tas_attn_mask", "last_value"], seeds=[0, 1], horizons=[12, 36])
    units = g.units()
    ids = [u.unit_id for u in units]
    # per horizon: the baseline once, then seed 0 for every model, then seed 1
    assert ids[:5] == ["last_value__dcrnn__h12__cpu-small",
                       "tts_attn_none__dcrnn__h12__cpu-small__s0", "tas_attn_mask__dcrnn__h12__cpu-small__s0",
                       "tts_attn_none__dcrnn__h12__cpu-small__s1", "tas_attn_mask__dcrnn__h12__cpu-small__s1"]
    assert len(units) == 2 * (1 + 2 * 2) and len(set(ids)) == len(ids)
    assert ids[5] == "last_value__dcrnn__h36__cpu-small"
    assert all(u.seed is None for u in units if u.kind == "baseline")
    # a namespaced name becomes a file-name-safe id
    u = GridSpec(models=["tsl:GraphWaveNetModel"]).units()[0]
    assert u.unit_id == "tsl-GraphWaveNetModel__dcrnn__h12__cpu-small__s0" and u.model == "tsl:GraphWaveNetModel"


def test_budget_label_carries_every_override():
    assert budget_label("cpu-small") == "cpu-small"
    assert budget_label("cpu-small", {"max_epochs": 1, "max_windows": 300, "lr": 0.001}) == "cpu-small+e1-lr0.001-w300"
    assert budget_label("paper", {"batch_size": 64}) != budget_label("paper", {"batch_size": 32})
    assert budget_label("cpu-15min", {"max_time": "15m"}) == "cpu-15min+t15m"
    g = GridSpec(models=["tts_attn_none"], overrides={"max_epochs": 1, "limit_train_batches": 2})
    assert g.units()[0].unit_id == "tts_attn_none__dcrnn__h12__cpu-small+e1-tb2__s0"


def test_model_overrides_by_pattern_merge_in_order():
    g = GridSpec(models=["tts_attn_none", "tas_attn_none"],
                 model_overrides={"*": {"hidden_size": 8, "heads": 2}, "tts_*": {"spatial_layers": 1, "heads": 1}})
    by = {u.model: dict(u.model_overrides) for u in g.units()}
    assert by == {"tts_attn_none": {"hidden_size": 8, "heads": 1, "spatial_layers": 1},
                  "tas_attn_none": {"hidden_size": 8, "heads": 2}}
    with pytest.raises(GridError, match="matches none"):
        GridSpec(models=["tts_attn_none"], model_overrides={"tas_*": {"n_layers": 1}}).units()


@pytest.mark.parametrize("kw,match", [(dict(budgets=["gpu-huge"]), "Unknown budget 'gpu-huge'"),
                                      (dict(budgets=["cpu_small"]), "Did you mean 'cpu-small'"),
                                      (dict(protocols=["tsl"]), "Unknown protocol 'tsl'"),
                                      (dict(horizons=[0]), "Horizons must be >= 1"),
                                      (dict(overrides={"hidden_size": 8}), "Unknown budget overrides"),
                                      (dict(seeds=[]), "at least one value in seeds"),
                                      (dict(overrides={"max_time": "15 minutes"}), "give a positive duration"),
                                      (dict(overrides={"max_time": 900}), "duration string")])
def test_invalid_grids_are_clear_errors(kw, match):
    with pytest.raises(GridError, match=match):
        GridSpec(**{"models": ["tts_attn_none"], **kw}).units()


def test_json_grid_file_round_trip(tmp_path):
    spec = {"models": ["tts_attn_*", "historical_average"], "seeds": [0, 2], "horizons": [36],
            "overrides": {"max_epochs": 2}, "model_overrides": {"*": {"hidden_size": 16}}}
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(spec))
    g = GridSpec.from_json(path)
    assert GridSpec.from_dict(g.to_dict()).units() == g.units()
    assert len(g.units()) == 1 + 2 * 5
    assert {u.unit_id for u in g.units() if u.kind == "baseline"} == {"historical_average__dcrnn__h36__cpu-small+e2"}
    path.write_text(json.dumps({**spec, "epochs": 3}))
    with pytest.raises(GridError, match="Unknown grid keys"):
        GridSpec.from_json(path)
    path.write_text("{not json")
    with pytest.raises(GridError, match="not valid JSON"):
        GridSpec.from_json(path)


def test_unit_json_round_trip_and_key_values():
    u = GridSpec(models=["tts_attn_none"], model_overrides={"*": {"hidden_size": 8}},
                 overrides={"max_windows": 50}).units()[0]
    assert Unit.from_dict(json.loads(json.dumps(u.to_dict()))) == u
    # Python's spellings of the constants are the constants, not strings (a string "False" is truthy)
    assert parse_key_values(["residual=False", "input_mask=True", "emb_size=None"]) == \
        {"residual": False, "input_mask": True, "emb_size": None}
    assert parse_key_values(["hidden_size=8", "diag_p=0.2", "residual=false", "graph_conv=gcn"]) == \
        {"hidden_size": 8, "diag_p": 0.2, "residual": False, "graph_conv": "gcn"}
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_key_values(["hidden_size"])
    with pytest.raises(GridError, match="KEY=VALUE"):
        parse_key_values(["=3"], error=GridError)


def test_model_overrides_are_in_the_unit_id():
    """Two units that differ only in their model overrides never share a result folder."""
    from stgnn_diag.bench.unit import Unit

    base = dict(model="tts_attn_none", kind="model", protocol="dcrnn", horizon=12, window=12, budget="cpu-small", seed=0)
    plain = Unit(**base)
    a = Unit(**base, model_overrides=(("hidden_size", 8),))
    b = Unit(**base, model_overrides=(("hidden_size", 16),))
    assert plain.unit_id == "tts_attn_none__dcrnn__h12__cpu-small__s0"
    assert len({plain.unit_id, a.unit_id, b.unit_id}) == 3
    assert a.unit_id.startswith("tts_attn_none__dcrnn__h12__cpu-small__m") and a.unit_id.endswith("__s0")
    assert Unit(**base, model_overrides=(("hidden_size", 8),)).unit_id == a.unit_id  # stable


def test_windows_are_an_axis_scored_on_the_targets_of_the_longest():
    spec = GridSpec(models=["tts_attn_none", "historical_average"], window=[12, 48], seeds=[0, 1])
    units = spec.units()
    assert sorted({(u.kind, u.window) for u in units}) == [("baseline", 12), ("baseline", 48), ("model", 12),
                                                           ("model", 48)]
    assert len([u for u in units if u.kind == "model"]) == 4  # 2 windows x 2 seeds
    assert all(dict(u.overrides)["align_window"] == 48 for u in units)
    ids = [u.unit_id for u in units]
    assert "tts_attn_none__dcrnn__h12__w48__cpu-small+a48__s1" in ids
    assert "tts_attn_none__dcrnn__h12__cpu-small+a48__s0" in ids  # T = 12 on the aligned targets: its own id
    assert GridSpec.from_dict(spec.to_dict()).units() == units


def test_one_window_keeps_the_protocol_and_a_short_alignment_is_refused():
    (unit,) = GridSpec(models=["tts_attn_none"], window=24).units()
    assert "align_window" not in dict(unit.overrides) and unit.unit_id == "tts_attn_none__dcrnn__h12__w24__cpu-small__s0"
    with pytest.raises(GridError, match="align_window must be an integer >= every window"):
        GridSpec(models=["tts_attn_none"], window=[12, 96], overrides={"align_window": 48}).units()
