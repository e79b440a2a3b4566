"""The one checkpoint reader: a file that would run code is refused, by every command that reads files."""
import pickle

import pytest
import torch

from stgnn_diag.cli import main
from stgnn_diag.training.safe_load import CheckpointReadError, UnsafeCheckpointError, load_file


class Payload:
    """Pickles as a call of ``builtins.exec``: loading it with ``weights_only=False`` writes ``mark``."""

    def __init__(self, mark):
        self.mark = str(mark)

    def __reduce__(self):
        return exec, (f"open({self.mark!r}, 'w').write('ran')",)


class NotOurs:  # a class of a package outside the trusted ones
    pass


def _evil(tmp_path):
    mark = tmp_path / "ran.txt"
    path = tmp_path / "evil.ckpt"
    torch.save({"state_dict": {}, "hyper_parameters": {"model_name": "tas_attn_none", "x": Payload(mark)}}, path)
    return path, mark


def test_a_code_payload_is_refused_and_never_runs(tmp_path):
    path, mark = _evil(tmp_path)
    with pytest.raises(UnsafeCheckpointError, match="exec"):
        load_file(path)
    assert not mark.exists()
    # the same payload does run when loaded the unsafe way: the test's payload is real
    torch.load(path, weights_only=False)
    assert mark.read_text() == "ran"


def test_classes_of_untrusted_packages_are_refused_unless_named(tmp_path):
    path = tmp_path / "other.ckpt"
    torch.save({"thing": NotOurs()}, path)
    with pytest.raises(pickle.UnpicklingError, match="NotOurs"):
        load_file(path)
    assert isinstance(load_file(path, extra_prefixes=(__name__ + ".",))["thing"], NotOurs)


def test_plain_weights_and_broken_files(tmp_path):
    path = tmp_path / "w.pt"
    torch.save({"w": torch.ones(2)}, path)
    assert torch.equal(load_file(path)["w"], torch.ones(2))
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(path.read_bytes()[:40])
    with pytest.raises(CheckpointReadError, match="not a readable checkpoint"):
        load_file(bad)
    with pytest.raises(FileNotFoundError):
        load_file(tmp_path / "missing.ckpt")


@pytest.mark.parametrize("command", [["evaluate", "--checkpoint"], ["sensitivity", "--model", "tas_attn_none",
                                                                     "--checkpoint"]])
def test_commands_refuse_the_payload_with_one_line(command, tmp_path, capsys, metr_la_root):
    path, mark = _evil(tmp_path)
    args = command + [str(path), "--data-root", str(metr_la_root)]
    if command[0] == "sensitivity":
        args += ["--out", str(tmp_path / "sens")]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not loaded" in err[0] and "exec" in err[0]
    assert not mark.exists()
