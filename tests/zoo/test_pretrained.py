"""Pretrained tags: export from a finished unit, create_model(pretrained=...), its errors, evaluate --pretrained."""
import json
import shutil

import numpy as np
import pytest
import torch

import stgnn_diag
from stgnn_diag.bench.weights import _command, export_unit
from stgnn_diag.cli import main
from stgnn_diag.training import TrainConfig, evaluate, train
from stgnn_diag.zoo.cards import render_pretrained
from stgnn_diag.zoo.pretrained import PretrainedError

from ..training.test_engine import TINY
from tests.calendar import calendar_u


@pytest.fixture(scope="module")
def shipped(tmp_path_factory, metr_la_root):
    """A tiny trained unit exported as the tag ``tiny`` into its own weights folder."""
    base = tmp_path_factory.mktemp("pretrained")
    unit = base / "unit"
    res = train(TrainConfig(out=str(unit / "run"), data_root=str(metr_la_root), **TINY))
    (unit / "result.json").write_text(json.dumps(res))
    cfg_path = export_unit(unit, "tiny", out_dir=base / "weights")
    return base, res, json.loads(cfg_path.read_text())


@pytest.fixture
def weights_env(shipped, monkeypatch):
    monkeypatch.setenv("STGNN_DIAG_WEIGHTS", str(shipped[0] / "weights"))
    return shipped


def test_export_records_what_a_user_needs(weights_env):
    _, res, cfg = weights_env
    assert cfg["name"] == "tts_attn_penalty" and cfg["tag"] == "tiny" and cfg["metrics"]["mae@12"] == res["metrics"]["mae@12"]
    assert {"scaler_mean", "scaler_std", "covariates", "covariate_encoding", "window", "horizon",
            "edge_direction"} <= set(cfg["inputs"])
    assert cfg["model_kwargs"]["hidden_size"] == 8 and len(cfg["sha256"]) == 64
    assert "stgnn-diag bench --models tts_attn_penalty" in cfg["command"]


def test_export_and_card_name_the_budget_with_its_overrides(shipped, tmp_path, monkeypatch):
    # a unit trained with budget overrides (a bench unit's budget_label): the card says so, not the bare preset
    base, res, _ = shipped
    unit = tmp_path / "unit"
    shutil.copytree(base / "unit", unit)
    (unit / "result.json").write_text(json.dumps({**res, "budget_label": "cpu-small+e10-tb750"}))
    cfg = json.loads(export_unit(unit, "long", out_dir=tmp_path / "weights").read_text())
    assert cfg["budget"] == res["budget"] and cfg["budget_label"] == "cpu-small+e10-tb750"
    monkeypatch.setenv("STGNN_DIAG_WEIGHTS", str(tmp_path / "weights"))
    assert "budget `cpu-small+e10-tb750` (" in render_pretrained("tts_attn_penalty")


def test_export_command_repeats_the_budget_overrides():
    res = {"model": "paper_tas", "seed": 0, "budget": "cpu-15min", "protocol": "dcrnn", "horizon": 12,
           "overrides": {"lr": 0.002, "max_windows": None, "max_time": "15m"}}
    cmd = _command(res)
    assert "--budgets cpu-15min --lr 0.002 --max-time 15m --protocols dcrnn" in cmd and "max-windows" not in cmd
    assert "--lr" not in _command({**res, "overrides": {}})


def test_export_command_repeats_the_model_overrides_so_the_grid_rebuilds_the_same_unit():
    import shlex

    from stgnn_diag.cli.bench import grid_from_args
    from stgnn_diag.cli import build_parser

    res = {"model": "tas_attn_none", "seed": 1, "budget": "cpu-15min", "protocol": "dcrnn", "horizon": 12,
           "overrides": {"max_epochs": 10}, "model_overrides": {"input_mask": True, "hidden_size": 48, "graph_conv": "gcn"}}
    cmd = _command(res)
    assert "--set-for tas_attn_none input_mask=true --set-for tas_attn_none hidden_size=48" in cmd
    args = build_parser().parse_args(shlex.split(cmd.replace("<folder>", "out"))[1:])
    (unit,) = grid_from_args(args).units()
    assert dict(unit.model_overrides) == res["model_overrides"] and dict(unit.overrides)["max_epochs"] == 10


def test_create_model_pretrained_loads_the_trained_weights(weights_env):
    base, _, cfg = weights_env
    assert stgnn_diag.list_models(pretrained=True) == ["tts_attn_penalty"]
    assert stgnn_diag.list_models("tas_*", pretrained=True) == []
    model = stgnn_diag.create_model("tts_attn_penalty", pretrained=True)
    ckpt = torch.load(base / "unit" / "run" / "checkpoints" / "last.ckpt", weights_only=True)["state_dict"]
    for k, v in model.state_dict().items():
        assert torch.equal(v, ckpt["model." + k]), k
    assert model.pretrained_cfg["tag"] == "tiny"
    same = stgnn_diag.create_model("tts_attn_penalty", checkpoint_path=base / "unit" / "run" / "checkpoints" / "last.ckpt",
                                   **cfg["model_kwargs"])
    assert all(torch.equal(a, b) for a, b in zip(same.state_dict().values(), model.state_dict().values()))


def test_pretrained_errors_name_the_cause(weights_env, tmp_path, monkeypatch):
    with pytest.raises(PretrainedError, match=r"hidden_size=16 \(the weights have 8\)"):
        stgnn_diag.create_model("tts_attn_penalty", pretrained=True, hidden_size=16)
    with pytest.raises(PretrainedError, match=r"no pretrained tag 'nope'; its tags: \['tiny'\]"):
        stgnn_diag.create_model("tts_attn_penalty", pretrained="nope")
    with pytest.raises(PretrainedError, match="has no pretrained weights"):
        stgnn_diag.create_model("tas_attn_mask", pretrained=True)
    # a changed weights file: both hashes in the message
    copy = tmp_path / "w"
    copy.mkdir()
    for f in (weights_env[0] / "weights").iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    pt = copy / "tts_attn_penalty.tiny.pt"
    data = bytearray(pt.read_bytes())
    data[len(data) // 2] ^= 0xFF
    pt.write_bytes(bytes(data))
    monkeypatch.setenv("STGNN_DIAG_WEIGHTS", str(copy))
    with pytest.raises(PretrainedError, match="does not verify: sha256 [0-9a-f]{64}, expected " + weights_env[2]["sha256"]):
        stgnn_diag.create_model("tts_attn_penalty", pretrained=True)


def test_evaluate_pretrained_reproduces_the_metrics_and_saves_predictions(weights_env, metr_la_root, tmp_path):
    _, res, _ = weights_env
    out = tmp_path / "pred.npz"
    got = evaluate("tts_attn_penalty", pretrained=True, data_root=metr_la_root, max_windows=600, progress=False,
                   save_predictions=out)
    for k, v in res["metrics"].items():
        assert got["metrics"][k] == pytest.approx(v, abs=1e-6), k
    saved = np.load(out)
    assert saved["predictions"].shape == (got["windows"], 12, 207) and saved["window_starts"].shape == (got["windows"],)
    assert main(["evaluate", "--model", "tts_attn_penalty", "--pretrained", "--protocol", "paper",
                 "--data-root", str(metr_la_root), "--max-windows", "600", "--no-progress"]) == 2


@pytest.mark.slow
def test_sensitivity_runs_on_the_shipped_weights(weights_env, metr_la_root, tmp_path, capsys):
    out = tmp_path / "sens"
    assert main(["sensitivity", "--model", "tts_attn_penalty", "--pretrained", "--data-root", str(metr_la_root),
                 "--out", str(out), "--no-plots", "--no-hidden", "--no-progress"]) == 0
    assert "trained" in capsys.readouterr().out
    assert any(out.iterdir())
    assert main(["sensitivity", "--model", "tts_attn_penalty", "--pretrained", "nope", "--data-root",
                 str(metr_la_root), "--out", str(out)]) == 2


def test_model_config_save_pretrained_and_from_pretrained(shipped, tmp_path):
    """A trained run goes into a plain folder (config.json + weights.pt) and back as the same model."""
    from stgnn_diag.training import load_checkpoint

    base, _, _ = shipped
    model = stgnn_diag.create_model("tas_attn_mask", n_nodes=5, hidden_size=8, heads=2)
    assert json.loads(json.dumps(model.config)) == model.config  # JSON-serialisable
    assert model.config["name"] == "tas_attn_mask" and model.config["model_kwargs"]["diag"] == "mask"
    assert model.config["model_kwargs"]["n_layers"] == 2  # the entry's defaults are part of it
    module = load_checkpoint(base / "unit" / "run" / "checkpoints" / "last.ckpt")
    folder = module.save_pretrained(tmp_path / "mine")
    cfg = json.loads((folder / "config.json").read_text())
    assert cfg["inputs"]["scaler_std"] == pytest.approx(module.scaler_std.item()) and cfg["inputs"]["window"] == 12
    again = stgnn_diag.from_pretrained(folder)
    assert type(again) is type(module.model) and again.config == module.model.config
    x, u = torch.randn(2, 12, 207, 1), calendar_u(2, 12)
    ei = module.edge_index
    with torch.no_grad():
        torch.testing.assert_close(again(x, ei, module.edge_weight, u=u), module.model(x, ei, module.edge_weight, u=u))
    with pytest.raises(PretrainedError, match="hidden_size=16"):
        stgnn_diag.from_pretrained(folder, hidden_size=16)
    (folder / "weights.pt").write_bytes((folder / "weights.pt").read_bytes()[:-10] + b"0" * 10)
    with pytest.raises(PretrainedError, match="does not verify"):
        stgnn_diag.from_pretrained(folder)
    with pytest.raises(PretrainedError, match="no config.json"):
        stgnn_diag.from_pretrained(tmp_path)
    plain = torch.nn.Linear(2, 2)
    with pytest.raises(ValueError, match="create_model"):
        stgnn_diag.save_pretrained(plain, tmp_path / "plain")


def test_weights_saved_before_an_option_existed_build_the_model_they_were_trained_as(shipped, tmp_path, monkeypatch):
    """An option added after weights were saved (absent from their configuration) takes its constructor
    default when they are loaded, the model as it was trained, even once the zoo entry's default for it has
    changed; a new model takes the entry's new default."""
    from stgnn_diag.training import load_checkpoint
    from stgnn_diag.training.module import ForecastModule
    from stgnn_diag.training.safe_load import load_file
    from stgnn_diag.zoo.registry import get_entry

    base, _, cfg = shipped
    entry = get_entry("tts_attn_penalty")
    assert entry.defaults is entry.model_class.entry_defaults  # one place holds an entry's defaults
    monkeypatch.setitem(entry.defaults, "level_skip", True)  # the entry's default changed since
    assert stgnn_diag.create_model("tts_attn_penalty", n_nodes=5, hidden_size=8).level_skip is True

    def without_options(kwargs):
        return {k: v for k, v in kwargs.items() if k not in ("level_skip", "input_mask")}

    weights = tmp_path / "weights"  # a shipped tag whose JSON predates both options
    weights.mkdir()
    for f in (base / "weights").iterdir():
        (weights / f.name).write_bytes(f.read_bytes())
    (weights / "tts_attn_penalty.tiny.json").write_text(
        json.dumps({**cfg, "model_kwargs": without_options(cfg["model_kwargs"])}))
    monkeypatch.setenv("STGNN_DIAG_WEIGHTS", str(weights))
    tagged = stgnn_diag.create_model("tts_attn_penalty", pretrained="tiny")
    assert tagged.level_skip is False and tagged.config["model_kwargs"]["level_skip"] is False

    folder = load_checkpoint(base / "unit" / "run" / "checkpoints" / "last.ckpt").save_pretrained(tmp_path / "mine")
    saved = json.loads((folder / "config.json").read_text())  # a save_pretrained folder that predates them
    (folder / "config.json").write_text(json.dumps({**saved, "model_kwargs": without_options(saved["model_kwargs"])}))
    assert stgnn_diag.from_pretrained(folder).level_skip is False

    ckpt = load_file(base / "unit" / "run" / "checkpoints" / "last.ckpt")  # a training checkpoint that predates them
    ckpt["hyper_parameters"]["model_kwargs"] = without_options(ckpt["hyper_parameters"]["model_kwargs"])
    torch.save(ckpt, tmp_path / "old.ckpt")
    assert load_checkpoint(tmp_path / "old.ckpt").model.level_skip is False
    assert ForecastModule.load_from_checkpoint(tmp_path / "old.ckpt").model.level_skip is False
    x, u = torch.randn(2, 12, 207, 1), calendar_u(2, 12)
    module = load_checkpoint(tmp_path / "old.ckpt")
    with torch.no_grad():  # the model it was trained as: the tag gives the same forecast
        torch.testing.assert_close(tagged(x, module.edge_index, module.edge_weight, u=u),
                                   module.model(x, module.edge_index, module.edge_weight, u=u))


def test_a_misspelt_argument_is_named_with_close_matches(capsys):
    from stgnn_diag.zoo import UnknownArgumentError

    with pytest.raises(UnknownArgumentError, match=r"no argument 'hiden_size' \(did you mean 'hidden_size'"):
        stgnn_diag.create_model("tts_attn_penalty", n_nodes=3, hiden_size=8)
    assert main(["bench", "--models", "tas_attn_*", "--set", "hiden_size=8", "--dry-run", "--results",
                 "/nonexistent/x"]) == 2
    assert "did you mean 'hidden_size'" in capsys.readouterr().err
    assert main(["train", "--model", "tts_attn_none", "--set", "hiden_size=8", "--out", "/nonexistent/y"]) == 2
    assert "did you mean 'hidden_size'" in capsys.readouterr().err


@pytest.fixture(scope="module")
def fallback_tag(metr_la_root, tmp_path_factory):
    """A tiny unit trained without the seasonal fallback, exported with it as tag ``fb``; the same unit trained
    with the option (its checkpoint holds the table that training fitted)."""
    base = tmp_path_factory.mktemp("fallback")
    over = {**TINY["model_overrides"], "input_mask": True, "level_skip": True}
    unit = base / "unit"
    res = train(TrainConfig(out=str(unit / "run"), data_root=str(metr_la_root), **{**TINY, "model_overrides": over}))
    (unit / "result.json").write_text(json.dumps(res))
    cfg = json.loads(export_unit(unit, "fb", out_dir=base / "weights", seasonal_fallback=True,
                                 data_root=metr_la_root).read_text())
    trained_with = train(TrainConfig(out=str(base / "with"), data_root=str(metr_la_root),
                                     **{**TINY, "model_overrides": {**over, "seasonal_fallback": True}}))
    return base, unit, res, cfg, trained_with


def test_a_tag_exported_with_the_seasonal_fallback_is_the_unit_trained_with_it(fallback_tag, metr_la_root, tmp_path,
                                                                               monkeypatch):
    # the option acts in evaluation mode only: switched on after training, the weights, the card's metrics and
    # the shipped tag's evaluation (its table fitted at load) are those of the same unit trained with it
    base, unit, res, cfg, trained_with = fallback_tag
    assert cfg["metrics"]["mae@3"] != pytest.approx(res["metrics"]["mae@3"], abs=1e-6)  # a sensor is down in a window
    for k, v in trained_with["metrics"].items():
        assert cfg["metrics"][k] == pytest.approx(v, abs=1e-5), k
    assert cfg["seasonal_fallback"]["metrics_without"] == res["metrics"] and cfg["model_kwargs"]["seasonal_fallback"]
    assert "--set-for tts_attn_penalty seasonal_fallback=true" in cfg["command"]
    monkeypatch.setenv("STGNN_DIAG_WEIGHTS", str(base / "weights"))
    card = render_pretrained("tts_attn_penalty")
    assert f"| `tts_attn_penalty` without `seasonal_fallback` | {res['metrics']['mae@3']:.3f} |" in card
    assert "Not in the weights file: `fallback.table`, `fallback.fitted`" in card
    got = evaluate("tts_attn_penalty", pretrained="fb", data_root=metr_la_root, max_windows=600, progress=False)
    for k, v in cfg["metrics"].items():
        if k not in ("split", "windows"):
            assert got["metrics"][k] == pytest.approx(v, abs=1e-5), k
    budget = {**(res.get("budget_resolved") or res["config"]["budget_resolved"]), "patience": 3}
    shutil.copytree(unit, tmp_path / "es")
    (tmp_path / "es" / "result.json").write_text(json.dumps({**res, "budget_resolved": budget}))
    with pytest.raises(ValueError, match="trained with early stopping"):
        export_unit(tmp_path / "es", "es", out_dir=tmp_path / "weights", seasonal_fallback=True, data_root=metr_la_root)


def test_a_fallback_tag_ships_without_its_table_and_fits_it_at_load(fallback_tag, metr_la_root, tmp_path, monkeypatch):
    from stgnn_diag.training import fit_fallback_table, load_checkpoint

    base, _, _, cfg, _ = fallback_tag
    assert cfg["fitted_at_load"] == ["fallback.table", "fallback.fitted"]
    state = torch.load(base / "weights" / cfg["weights"], weights_only=True)
    assert not {"fallback.table", "fallback.fitted"} & set(state) and "head.mlp.0.fc1.weight" in state
    monkeypatch.setenv("STGNN_DIAG_WEIGHTS", str(base / "weights"))
    model = stgnn_diag.create_model("tts_attn_penalty", pretrained="fb").eval()
    assert not bool(model.fallback.fitted)
    x, u = torch.randn(2, 12, 207, 1), calendar_u(2, 12, 207)
    mask = torch.ones_like(x, dtype=torch.bool)
    mask[:, :, 5] = False  # node 5 down for the whole window
    ei = torch.tensor([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="fit_fallback_table"):
        model(x, ei, u=u, x_mask=mask)
    fit_fallback_table(model, data_root=metr_la_root)  # from the training split the tag names
    # the table that training with the option fitted (train's own path, saved in its checkpoint)
    want = load_checkpoint(base / "with" / "checkpoints" / "last.ckpt").model.fallback.table
    torch.testing.assert_close(model.fallback.table, want, rtol=0, atol=0)
    with torch.no_grad():
        y = model(x, ei, u=u, x_mask=mask)
    torch.testing.assert_close(y[:, :, 5], model.fallback.lookup(u[:, -1], 12)[:, :, 5])

    from stgnn_diag.cli.sensitivity import pretrained_model  # stgnn-diag sensitivity --pretrained fb
    tagged, _ = pretrained_model("tts_attn_penalty", "fb", None, 207, data_root=metr_la_root)
    torch.testing.assert_close(tagged.fallback.table, want, rtol=0, atol=0)

    bad = {**cfg, "inputs": {**cfg["inputs"], "scaler_mean": cfg["inputs"]["scaler_mean"] + 1.0}}
    other = stgnn_diag.create_model("tts_attn_penalty", pretrained="fb")
    other.pretrained_cfg = bad
    with pytest.raises(ValueError, match="scaler"):
        fit_fallback_table(other, data_root=metr_la_root)
    # the JSON must list what the file leaves out, and may list only the seasonal table
    folder = tmp_path / "w"
    shutil.copytree(base / "weights", folder)
    monkeypatch.setenv("STGNN_DIAG_WEIGHTS", str(folder))
    path = folder / "tts_attn_penalty.fb.json"
    path.write_text(json.dumps({k: v for k, v in cfg.items() if k != "fitted_at_load"}))
    with pytest.raises(PretrainedError, match=r"missing: \['fallback.fitted', 'fallback.table'\]"):
        stgnn_diag.create_model("tts_attn_penalty", pretrained="fb")
    path.write_text(json.dumps({**cfg, "fitted_at_load": cfg["fitted_at_load"] + ["head.mlp.0.fc1.weight"]}))
    with pytest.raises(PretrainedError, match="only the seasonal table"):
        stgnn_diag.create_model("tts_attn_penalty", pretrained="fb")
