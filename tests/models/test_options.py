"""ForecasterOptions is the one declaration of the forecasters' options: the constructor signature, the docs
and the checks come from it."""
import inspect
import re
from dataclasses import fields

import pytest

from stgnn_diag.models.forecaster_base import STForecasterBase
from stgnn_diag.models.options import ForecasterOptions
from stgnn_diag.models.tas_forecaster import TASForecaster
from stgnn_diag.models.tts_forecaster import TTSForecaster
from stgnn_diag.zoo.registry import constructor_arguments, constructor_defaults


def test_the_constructor_signature_is_the_options():
    params = list(inspect.signature(STForecasterBase.__init__).parameters.values())[1:]
    assert [(p.name, p.default) for p in params] == [
        (f.name, inspect.Parameter.empty if f.name == "input_size" else f.default) for f in fields(ForecasterOptions)]


def test_the_zoo_reads_every_option_and_the_arrangements_own():
    names = {f.name for f in fields(ForecasterOptions)}
    assert constructor_arguments(TASForecaster) == names | {"n_layers"}
    assert constructor_arguments(TTSForecaster) == names | {"temporal_layers", "spatial_layers", "spatial_on"}
    assert constructor_defaults(TASForecaster)["hidden_size"] == 32
    assert constructor_defaults(TTSForecaster)["spatial_on"] == "summary"


def test_every_option_is_documented_in_the_class_docstring():
    doc = STForecasterBase.__doc__
    assert "{options}" not in doc
    for f in fields(ForecasterOptions):
        assert f"\n        {f.name}: " in doc, f.name
        assert f.metadata["doc"], f.name


@pytest.mark.parametrize("kwargs, message", [
    (dict(heads=0), "heads must be a positive integer, got 0"),
    (dict(hidden_size=True), "hidden_size must be a positive integer, got True"),
    (dict(ffn_size=-1), "ffn_size must be an integer >= 0"),
    (dict(residual="yes"), "residual must be True or False, got 'yes'"),
    (dict(n_nodes=0), "n_nodes must be a positive integer (the sensors of the graph) or None"),
    (dict(exog_size=1, tod_embedding=0, dow_embedding=False), "no part of the model reads u"),
    (dict(exog_size=1), "dow_embedding=True needs exog_size >= 8"),
    (dict(level_skip=True, output_size=2), "needs output_size <= input_size"),
])
def test_a_bad_option_is_refused_naming_it(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        TASForecaster(input_size=1, **kwargs)


def test_positional_and_keyword_options_build_the_same_model():
    a = TASForecaster(1, None, 6, 5, 16, 0, n_layers=1)
    b = TASForecaster(input_size=1, horizon=6, n_nodes=5, hidden_size=16, exog_size=0, n_layers=1)
    assert a.options == b.options
    assert (a.horizon, a.n_nodes, a.hidden_size, a.output_size) == (6, 5, 16, 1)


def test_resolved_switches_the_calendar_off_without_covariates():
    opts = ForecasterOptions(input_size=2, exog_size=0).resolved()
    assert (opts.tod_embedding, opts.dow_embedding, opts.output_size) == (0, False, 2)
    model = TTSForecaster(input_size=2, exog_size=0, n_nodes=3)
    assert model.options == ForecasterOptions(input_size=2, exog_size=0, n_nodes=3).resolved()
    assert model.resolved_options == {"tod_embedding": 0, "dow_embedding": False}


@pytest.mark.parametrize("kwargs, message", [
    (dict(heads=0), "heads must be a positive integer, got 0"),
    (dict(output_size=0), "output_size must be a positive integer or None, got 0"),
    (dict(emb_size=True), "emb_size must be a positive integer, got True"),
    (dict(exog_size=-1), "exog_size must be an integer >= 0, got -1"),
    (dict(n_nodes=0), "n_nodes must be a positive integer (the sensors of the graph) or None"),
])
def test_the_templates_check_their_options_by_the_same_kinds(kwargs, message):
    from stgnn_diag.models.tas_attention_model import TASAttentionModel
    from stgnn_diag.models.tts_attention_model import TTSAttentionModel

    for cls in (TASAttentionModel, TTSAttentionModel):
        with pytest.raises(ValueError, match=re.escape(message)):
            cls(input_size=1, **kwargs)
