"""Atomic writes (stgnn_diag._io): a failed write leaves the destination as it was and nothing beside it."""
import json

import pytest

from stgnn_diag._io import atomic_write, write_bytes, write_json


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    dest = tmp_path / "sub" / "result.json"
    write_json(dest, {"a": 1})

    def half_then_fail(tmp):
        with open(tmp, "w") as f:
            f.write('{"a": 2, "trunc')
        raise KeyboardInterrupt  # an interruption in the middle of the write

    with pytest.raises(KeyboardInterrupt):
        atomic_write(dest, half_then_fail)
    assert json.loads(dest.read_text()) == {"a": 1}
    assert sorted(p.name for p in dest.parent.iterdir()) == ["result.json"]


def test_a_failed_first_write_creates_nothing(tmp_path):
    dest = tmp_path / "w.bin"
    with pytest.raises(ValueError):
        atomic_write(dest, lambda tmp: (open(tmp, "wb").write(b"x"), (_ for _ in ()).throw(ValueError("bad")))[1])
    assert list(tmp_path.iterdir()) == []


def test_writes_replace_the_destination(tmp_path):
    dest = tmp_path / "f.bin"
    write_bytes(dest, b"old")
    write_bytes(dest, b"new")
    assert dest.read_bytes() == b"new"
    write_json(tmp_path / "j.json", {"b": [1, 2], "a": None})
    assert (tmp_path / "j.json").read_text() == '{\n  "a": null,\n  "b": [\n    1,\n    2\n  ]\n}\n'
