"""The zoo's entries are explicit functions: one ``@register_model def <name>(pretrained=False, **kwargs)`` each."""
import inspect

import stgnn_diag
from stgnn_diag.zoo import attention_variants
from stgnn_diag.zoo.registry import get_entry, list_models


def test_every_native_entry_is_a_function_of_its_own_name_in_the_entries_module():
    native = [n for n in list_models() if ":" not in n]
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

    for name in list_models():
        if ":" not in name:
            assert sorted(pretrained_tags(name)) == sorted(get_entry(name).pretrained_tags), name
            assert pretrained_tags(name)[0] == get_entry(name).pretrained_tags[0]  # pretrained=True's tag
