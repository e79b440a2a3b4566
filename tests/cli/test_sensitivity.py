"""The command line and the checkpoint / window helpers, on the real METR-LA data (one window, tiny model)."""
import argparse
import json

import pytest
import torch

import stgnn_diag
from stgnn_diag.cli import sensitivity as cli
from stgnn_diag.sensitivity import (CheckpointFormatError, build_model, check_window_index, dataset_window,
                                    read_checkpoint)
import stgnn_diag.sensitivity.data as data_mod
from stgnn_diag.datasets import make_splits


def parse(argv):
    p = argparse.ArgumentParser()
    cli.add_parser(p.add_subparsers())
    return p.parse_args(["sensitivity", *argv])


@pytest.fixture
def loaded(monkeypatch, metr_la):
    """Serve the METR-LA fixture loaded once for the whole test run instead of loading it again."""
    monkeypatch.setattr(data_mod, "get_dataset", lambda *a, **k: metr_la)
    return metr_la


@pytest.mark.realdata
def test_cli_on_an_untrained_model(loaded, tmp_path, capsys):
    args = parse(["--model", "tts_template_mask", "--hidden-size", "8", "--index", "-1", "--out", str(tmp_path),
                  "--no-progress"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "share on the own node (hop 0)" in out and "isolated nodes: [26]" in out
    rep = json.loads((tmp_path / "sensitivity.json").read_text())
    s = rep["summary"]
    assert s["engine"] == "structured" and rep["meta"]["trained"] is False and rep["meta"]["window"] == 6849
    assert 0 < s["node_diagonal_share"] < 1 and s["hop0_over_hop1"] > 1
    assert s["unreachable_share"] == 0.0  # no message crosses to the isolated sensor
    assert rep["hop_lag_profile"]["hops"][-1] == "inf" and rep["graph"]["isolated_nodes"] == [26]
    assert all(a["diag"] == "mask" and max(a["diag_mass"]) == 0 for a in rep["attention"])
    for f in ("hop_lag.csv", "attention.csv", "hop_lag_heatmap.png", "lag_profiles.png", "attention_maps.png"):
        assert (tmp_path / f).stat().st_size > 0
        if f.endswith(".png"):
            assert (tmp_path / f).stat().st_size < 200_000


@pytest.mark.realdata
def test_cli_window_out_of_range(loaded, tmp_path, capsys):
    args = parse(["--model", "tas_template_none", "--index", "6850", "--out", str(tmp_path)])
    assert args.func(args) == 2
    err = capsys.readouterr().err
    assert "window 6850 is out of range" in err and "6850 windows" in err
    assert not any(tmp_path.iterdir())


@pytest.mark.realdata
def test_cli_with_a_lightning_style_checkpoint(loaded, tmp_path, capsys):
    torch.manual_seed(1)
    model = stgnn_diag.create_model("paper_tas", n_nodes=207, hidden_size=8, heads=2, n_layers=1)
    ckpt = {"state_dict": {**{f"model.{k}": v for k, v in model.state_dict().items()},
                           "scaler_mean": torch.tensor(54.4)},
            "hyper_parameters": {"model_name": "paper_tas",
                                 "model_kwargs": dict(n_nodes=207, hidden_size=8, heads=2, n_layers=1)}}
    path = tmp_path / "last.ckpt"
    torch.save(ckpt, path)
    args = parse(["--checkpoint", str(path), "--out", str(tmp_path / "rep"), "--no-hidden", "--no-plots",
                  "--no-progress"])
    assert args.func(args) == 0
    rep = json.loads((tmp_path / "rep" / "sensitivity.json").read_text())
    assert rep["meta"]["model"] == "paper_tas" and rep["meta"]["trained"] is True
    args = parse(["--model", "tas_template_none", "--checkpoint", str(path), "--out", str(tmp_path / "x")])
    assert args.func(args) == 2
    assert "holds a 'paper_tas' model" in capsys.readouterr().err


def test_read_checkpoint_variants(tmp_path):
    model = stgnn_diag.create_model("tas_template_none", hidden_size=8, heads=2)
    sd = model.state_dict()
    torch.save(sd, tmp_path / "bare.pt")
    got, name, kw = read_checkpoint(tmp_path / "bare.pt")
    assert name is None and kw == {} and set(got) == set(sd)
    torch.save({"state_dict": sd, "model_name": "tas_template_none", "model_kwargs": {"hidden_size": 8, "heads": 2}},
               tmp_path / "named.pt")
    m2, info = build_model(checkpoint=tmp_path / "named.pt")
    assert info["trained"] and all(torch.equal(m2.state_dict()[k], v) for k, v in sd.items())
    with pytest.raises(CheckpointFormatError, match="do not fit"):
        build_model("tas_template_none", tmp_path / "bare.pt", hidden_size=16)
    torch.save([1, 2], tmp_path / "list.pt")
    with pytest.raises(CheckpointFormatError, match="not a state_dict"):
        read_checkpoint(tmp_path / "list.pt")
    with pytest.raises(FileNotFoundError):
        read_checkpoint(tmp_path / "missing.pt")
    with pytest.raises(ValueError, match="model name"):
        build_model(checkpoint=tmp_path / "bare.pt")
    torch.save({**sd, "extra.weight": torch.zeros(2)}, tmp_path / "extra.pt")
    with pytest.raises(CheckpointFormatError, match="unexpected"):
        build_model("tas_template_none", tmp_path / "extra.pt", hidden_size=8, heads=2)


def test_checkpoint_without_a_buffer_keeps_the_constructor_value(tmp_path):
    model = stgnn_diag.create_model("tts_template_penalty", hidden_size=8, heads=2)
    buffers = {k for k, _ in model.named_buffers()}
    sd = {k: v for k, v in model.state_dict().items() if k not in buffers}
    torch.save(sd, tmp_path / "old.pt")
    if len(sd) < len(model.state_dict()):  # the model saves buffers (the diagonal penalty): drop them
        with pytest.warns(UserWarning, match="keep the values"):
            m2, info = build_model("tts_template_penalty", tmp_path / "old.pt", hidden_size=8, heads=2)
        assert info["missing_buffers"] and all(k in buffers for k in info["missing_buffers"])
    else:
        m2, info = build_model("tts_template_penalty", tmp_path / "old.pt", hidden_size=8, heads=2)
        assert info["missing_buffers"] == []
    drop = [k for k in sd if k.endswith("qkv.weight")][:1]
    torch.save({k: v for k, v in sd.items() if k not in drop}, tmp_path / "broken.pt")
    with pytest.raises(CheckpointFormatError, match="missing"):
        build_model("tts_template_penalty", tmp_path / "broken.pt", hidden_size=8, heads=2)


def test_window_index_checks(metr_la):
    w = dataset_window(-1, "val", dataset=metr_la)
    assert w.index == w.n_windows - 1 and w.x.shape == (12, 207, 1) and w.u.shape == (12, 8)
    start = int(make_splits(metr_la, "dcrnn")["val"].starts[-1])
    torch.testing.assert_close(w.x_mask[..., 0], torch.as_tensor(metr_la.speed[start:start + 12] != 0))
    with pytest.raises(IndexError, match="valid indices 0 .. 9"):
        check_window_index(10, 10, "test")
    with pytest.raises(TypeError):
        check_window_index(1.5, 10)


def test_pretrained_weights_refuse_a_window_of_another_data_set():
    from stgnn_diag.cli.sensitivity import pretrained_model
    from stgnn_diag.zoo.pretrained import PretrainedError

    model, info = pretrained_model("tts_attn_mask", True, None, 207, dataset="metr_la")
    assert info["trained"] is True
    with pytest.raises(PretrainedError, match="trained on metr_la; the window is from pems_bay"):
        pretrained_model("tts_attn_mask", True, None, 207, dataset="pems_bay")


def test_cli_takes_the_input_length_and_refuses_one_the_model_does_not_read(tmp_path, capsys):
    task = "lag_hop[steps=600,n_nodes=12]"
    args = parse(["--model", "tts_template_none", "--hidden-size", "8", "--dataset", task, "--window", "24",
                  "--align-window", "48", "--out", str(tmp_path / "a"), "--no-plots", "--no-progress", "--no-hidden"])
    assert args.func(args) == 0
    rep = json.loads((tmp_path / "a" / "sensitivity.json").read_text())
    assert rep["meta"]["input_steps"] == 24 and rep["meta"]["align_window"] == 48
    assert rep["meta"]["dataset"] == task and len(rep["hop_lag_profile"]["lags"]) == 24
    model = stgnn_diag.create_model("tts_template_none", n_nodes=12, hidden_size=8)  # 12 input steps
    torch.save(model.state_dict(), tmp_path / "w.pt")
    args = parse(["--model", "tts_template_none", "--checkpoint", str(tmp_path / "w.pt"), "--hidden-size", "8",
                  "--dataset", task, "--window", "24", "--out", str(tmp_path / "b")])
    assert args.func(args) == 2
    assert "reads 12 input steps, not --window 24" in capsys.readouterr().err
