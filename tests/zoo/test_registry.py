"""The zoo's entries are explicit functions: one ``@register_model def <name>(pretrained=False, **kwargs)`` each."""
import inspect

import stgnn_diag
from stgnn_diag.zoo import attention_variants
from stgnn_diag.zoo.registry import get_entry, list_models


def test_every_native_entry_is_a_function_of_its_own_name_in_the_entries_module():
    native = list_models(native=True)
    assert len(native) == 21
    source = inspect.getsource(attention_variants)
    for name in native:
        fn = getattr(attention_variants, name)
        assert get_entry(name).fn is fn and f"def {name}(pretrained" in source
        assert list(inspect.signature(fn).parameters)[:1] == ["pretrained"]
        klass = get_entry(name).model_class
        assert getattr(attention_variants, klass.__name__) is klass and klass.entry_name == name


def test_calling_an_entry_equals_create_model():
    a = attention_variants.tts_attn_penalty(n_nodes=5, hidden_size=8)
    b = stgnn_diag.create_model("tts_attn_penalty", n_nodes=5, hidden_size=8)
    assert type(a) is type(b) and a.config == b.config
    assert sorted(k for k, _ in a.named_parameters()) == sorted(k for k, _ in b.named_parameters())


def test_an_entry_with_pretrained_loads_the_shipped_weights():
    model = attention_variants.tas_attn_none(pretrained=True)
    ref = stgnn_diag.create_model("tas_attn_none", pretrained=True)
    assert model.pretrained_cfg["sha256"] == ref.pretrained_cfg["sha256"]
    for (k, v), (_, w) in zip(model.state_dict().items(), ref.state_dict().items()):
        assert (v == w).all(), k


def test_the_declared_tags_are_the_shipped_ones():
    from stgnn_diag.zoo.pretrained import pretrained_tags

    for name in list_models(native=True):
        assert sorted(pretrained_tags(name)) == sorted(get_entry(name).pretrained_tags), name
        assert pretrained_tags(name)[0] == get_entry(name).pretrained_tags[0]  # pretrained=True's tag


def test_namespace_entries_are_entries_with_native_false():
    import pytest

    from stgnn_diag.zoo import UnknownModelError

    foreign = list_models(native=False)
    assert foreign and all(n not in list_models(native=True) for n in foreign)
    assert sorted(foreign + list_models(native=True)) == sorted(list_models())
    entry = get_entry("tsl:STIDModel")
    assert entry.native is False and entry.name == "tsl:STIDModel" and entry.pretrained_tags == ()
    assert get_entry("tas_attn_none").native is True
    model = stgnn_diag.create_model("tsl:STIDModel", n_nodes=5, input_size=1, horizon=12, window=12)
    assert model.config == {"name": "tsl:STIDModel", "model_kwargs": {"n_nodes": 5, "input_size": 1, "horizon": 12,
                                                                       "window": 12}}
    for bad in ("tsl:NoSuchModel", "nosuch:STIDModel", "tas_attn_nonee"):
        with pytest.raises(UnknownModelError):
            get_entry(bad)
    with pytest.raises(ValueError, match="ships no weights"):
        stgnn_diag.create_model("tsl:STIDModel", pretrained=True)


def test_the_integration_namespaces_are_declared_entry_points_of_the_installed_package():
    from importlib.metadata import entry_points

    from stgnn_diag.zoo.registry import NAMESPACE_GROUP

    declared = {p.name: p.value for p in entry_points(group=NAMESPACE_GROUP)}
    assert declared["tsl"] == "stgnn_diag.integrations.namespaces:TSL"
    assert declared["pygt"] == "stgnn_diag.integrations.namespaces:PYGT"


def test_a_third_party_namespace_reaches_the_zoo_and_a_broken_one_warns(monkeypatch):
    import types
    import sys
    import warnings
    from importlib.metadata import EntryPoint

    import torch
    from stgnn_diag.zoo import registry

    plugin = types.ModuleType("toy_zoo_plugin")
    plugin.PROVIDER = registry.Namespace(lambda: ["Tiny"], lambda name, **kw: torch.nn.Linear(kw.get("n", 2), 1))
    monkeypatch.setitem(sys.modules, "toy_zoo_plugin", plugin)
    points = [EntryPoint("toy", "toy_zoo_plugin:PROVIDER", registry.NAMESPACE_GROUP),
              EntryPoint("broken", "no_such_module_anywhere:X", registry.NAMESPACE_GROUP)]
    monkeypatch.setattr(registry, "entry_points", lambda group: points if group == registry.NAMESPACE_GROUP else [])
    monkeypatch.setattr(registry, "_NAMESPACES", dict(registry._NAMESPACES))
    registry._load_declared_namespaces.cache_clear()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert "toy:Tiny" in list_models(native=False)
        assert any("'broken'" in str(w.message) and "no_such_module_anywhere" in str(w.message) for w in caught)
        entry = get_entry("toy:Tiny")
        assert entry.native is False
        assert entry.fn(n=3).in_features == 3
    finally:
        registry._load_declared_namespaces.cache_clear()
