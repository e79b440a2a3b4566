"""What a zoo entry is made of: its model class (the architecture with the entry's defaults) and its builder.

Each entry of :mod:`.attention_variants` is one ``@register_model def <name>(pretrained=False, **kwargs)``
whose body is ``build(<its class>, pretrained, kwargs)``; the class made by :func:`entry_class` carries the
defaults, so ``type(create_model(name))(**kwargs)`` builds the named variant (tsl's
``Predictor(model_class=..., model_kwargs=...)`` idiom).
"""
from __future__ import annotations

from typing import Dict, Optional, Type, Union

from torch import nn

from .registry import constructor_arguments

__all__ = ["build", "entry_class"]


def _class_name(entry_name: str) -> str:
    """``"tts_attn_penalty"`` -> ``"TTSAttnPenalty"`` (the arrangement in capitals)."""
    return "".join(p.upper() if p in ("tas", "tts") else p.capitalize() for p in entry_name.split("_"))


#: From this many nodes on, an entry with a large-graph preset builds it (unless the caller sets its keys).
LARGE_GRAPH_NODES = 1000


def entry_class(cls: Type[nn.Module], name: str, defaults: Dict[str, object],
                large_graph: Optional[Dict[str, object]] = None, large_graph_note: str = "") -> type:
    """A subclass of ``cls`` named after entry ``name`` whose constructor starts from ``defaults``.

    ``large_graph``: the options that replace defaults from :data:`LARGE_GRAPH_NODES` nodes on (a part that is
    quadratic in the nodes swapped for a linear one), unless the caller passes them; the model's ``config``
    records what was built, so a saved model rebuilds as it was. ``large_graph_note``: why, for the card.

    It has tsl's ``filter_model_args_`` (drops the keys the entry does not take), ``entry_name``,
    ``entry_defaults`` and ``large_graph``. Assign it to a module-level name equal to its ``__name__`` (the safe
    checkpoint loader and pickle find it by that name).
    """
    accepted = set(defaults) | constructor_arguments(cls)

    def __init__(self, **overrides):
        kwargs = {**klass.entry_defaults, **overrides}
        applied = {}
        if klass.large_graph and int(kwargs.get("n_nodes") or 0) >= LARGE_GRAPH_NODES:
            applied = {k: v for k, v in klass.large_graph.items() if k not in overrides}
        cls.__init__(self, **{**kwargs, **applied})
        if applied:
            self.resolved_options = {**getattr(self, "resolved_options", {}), **applied}

    def filter_model_args_(klass, model_args: dict) -> None:
        """Drop (in place) the keys of ``model_args`` the entry does not take, as tsl's models do."""
        for key in [k for k in model_args if k not in accepted]:
            del model_args[key]

    klass = type(_class_name(name), (cls,), {
        "__init__": __init__, "__doc__": f"The ``{name}`` zoo entry: :class:`~{cls.__module__}.{cls.__name__}` "
                                          f"with the entry's defaults (``entry_defaults``).",
        "__module__": "stgnn_diag.zoo.attention_variants", "filter_model_args_": classmethod(filter_model_args_),
        "entry_name": name, "entry_defaults": dict(defaults), "entry_accepts": frozenset(accepted),
        "large_graph": dict(large_graph or {}), "large_graph_note": large_graph_note})
    return klass


def build(klass: type, pretrained: Union[bool, str], kwargs: dict) -> nn.Module:
    """The body of an entry function: ``klass(**kwargs)`` with its ``config`` (as ``create_model`` gives it), or with ``pretrained`` (``True`` or a tag) the
    shipped weights loaded through :func:`~stgnn_diag.zoo.create_model` (which builds the architecture they
    were trained with and checks their sha256)."""
    from .registry import _with_config, create_model

    if pretrained:
        return create_model(klass.entry_name, pretrained=pretrained, **kwargs)
    return _with_config(klass(**kwargs), klass.entry_name, {**klass.entry_defaults, **kwargs})
