"""One parser for KEY=VALUE text: the CLI's ``--set``, the bench's overrides, data set names with arguments."""
import pytest

from stgnn_diag._values import parse_key_values, parse_value, split_bracketed


@pytest.mark.parametrize("text, value", [("8", 8), ("0.1", 0.1), ("true", True), ("False", False), ("None", None),
                                         ("null", None), ("[1,2]", [1, 2]), ("gcn", "gcn"), ("1e-3", 1e-3),
                                         ("", "")])
def test_values_are_read_as_json_with_python_constants(text, value):
    got = parse_value(text)
    assert got == value and type(got) is type(value)


def test_key_values_and_the_error_type():
    assert parse_key_values(["a=1", " b = x "]) == {"a": 1, "b": "x"}
    assert parse_key_values(None) == {}

    class Custom(ValueError):
        pass

    for bad in (["a"], ["=1"], ["not an id=1"]):
        with pytest.raises(Custom, match="KEY=VALUE"):
            parse_key_values(bad, error=Custom)


def test_bracketed_names():
    assert split_bracketed("tas_attn_none") == ("tas_attn_none", {})
    assert split_bracketed("lag_hop[hop=3,graph=grid,alpha=0.5,]") == ("lag_hop", {"hop": 3, "graph": "grid",
                                                                                   "alpha": 0.5})
    assert split_bracketed("lag_hop[lag=[1,95],hop=2]") == ("lag_hop", {"lag": [1, 95], "hop": 2})
    with pytest.raises(ValueError, match="data set 'lag_hop\\[hop=3': arguments go in brackets"):
        split_bracketed("lag_hop[hop=3", "data set")
    with pytest.raises(ValueError, match="model 'm\\[k\\]'"):
        split_bracketed("m[k]", "model")
