"""A timm-style model registry: ``register_model``, ``create_model``, ``list_models``.

Entries are small functions returning an ``nn.Module``; their keyword defaults are the entry's
configuration and ``create_model(name, **overrides)`` overrides any of them. Names may carry a
namespace (``"tsl:GraphWaveNetModel"``); a namespace is served by a provider registered with
:func:`register_namespace` or declared as an entry point of the group :data:`NAMESPACE_GROUP` (how the
package's own ``tsl:`` / ``pygt:`` namespaces and a third-party package's reach the zoo without the zoo
importing them). Providers load on the first namespaced lookup, so optional integrations stay lazy.
"""
from __future__ import annotations

import difflib
import fnmatch
import functools
import inspect
import warnings
from importlib.metadata import entry_points
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple, Union

from torch import nn


class UnknownModelError(ValueError):
    """Raised for a name that is not in the zoo; the message lists the closest registered names."""


class UnknownArgumentError(ValueError, TypeError):
    """Raised for an override an entry does not take (a misspelt ``--set hiden_size=8``), with close names."""


@dataclass(frozen=True)
class ModelEntry:
    """One zoo entry: its name, factory, one-line summary, default configuration, tags and the weight tags it
    ships (``pretrained_tags``; the first is what ``pretrained=True`` loads); ``model_class`` is the class its
    factory builds, when it declares one (see :func:`~stgnn_diag.zoo.entry.entry_class`).

    ``native`` is ``False`` for an entry an integration namespace serves (``"tsl:GraphWaveNetModel"``): it ships
    no weights and no card, its configuration records the overrides only, and its defaults are its library's.
    Callers ask ``get_entry(name).native`` rather than parse the name."""

    name: str
    fn: Callable[..., nn.Module]
    summary: str
    defaults: Dict[str, object] = field(default_factory=dict)
    tags: Tuple[str, ...] = ()
    pretrained_tags: Tuple[str, ...] = ()
    model_class: Optional[type] = None
    native: bool = True

    @property
    def accepts(self) -> Optional[frozenset]:
        """The keyword arguments the entry takes (``None``: whatever its function's signature says)."""
        return getattr(self.model_class, "entry_accepts", None)


@dataclass(frozen=True)
class Namespace:
    """A provider of ``prefix:Name`` entries: ``names()`` lists them, ``create(name, **kw)`` builds one."""

    names: Callable[[], List[str]]
    create: Callable[..., nn.Module]


_ENTRIES: Dict[str, ModelEntry] = {}
_NAMESPACES: Dict[str, Namespace] = {}

#: Entry-point group of zoo namespaces: ``prefix = module:provider``, the provider having ``names()`` and
#: ``create(name, **kwargs)`` (a :class:`Namespace`). In ``setup.cfg``::
#:
#:     [options.entry_points]
#:     stgnn_diag.zoo_namespaces =
#:         tsl = stgnn_diag.integrations.namespaces:TSL
NAMESPACE_GROUP = "stgnn_diag.zoo_namespaces"


def register_model(fn: Optional[Callable] = None, *, name: Optional[str] = None, tags: Tuple[str, ...] = (),
                   model_class: Optional[type] = None, pretrained_tags: Tuple[str, ...] = ()):
    """Decorator adding an entry-point function to the zoo (under ``name`` or the function's name).

    Args:
        name: the entry's name (default: the function's).
        tags: labels ``list_models(tag=...)`` does not use but ``stgnn-diag models`` shows.
        model_class: the class the function builds, with the defaults (``entry_defaults``) and accepted
            arguments (``entry_accepts``) of :func:`~stgnn_diag.zoo.entry.entry_class`; without one, the
            defaults are the function's keyword defaults.
        pretrained_tags: the weight tags the package ships for the entry.

    Example::

        @register_model
        def my_tts(hidden_size=32, **kwargs):
            \"\"\"A TTS model with 2 temporal layers.\"\"\"
            return TTSAttentionModel(**{"input_size": 1, "temporal_layers": 2, "hidden_size": hidden_size, **kwargs})
    """

    def wrap(f: Callable) -> Callable:
        key = name or f.__name__
        if _namespaced(key) is not None:
            raise ValueError(f"Model name {key!r} may not contain ':' (reserved for namespaces).")
        if key in _ENTRIES:
            raise ValueError(f"A model named {key!r} is already registered.")
        doc = inspect.getdoc(f) or ""
        if model_class is not None:
            defaults = model_class.entry_defaults  # the class's own: one place to change a default
        else:
            defaults = {k: p.default for k, p in inspect.signature(f).parameters.items()
                        if p.default is not inspect.Parameter.empty and k != "pretrained"}
        _ENTRIES[key] = ModelEntry(key, f, doc.splitlines()[0] if doc else "", defaults, tuple(tags),
                                   tuple(pretrained_tags), model_class)
        return f

    return wrap(fn) if fn is not None else wrap


def register_namespace(prefix: str, names: Callable[[], List[str]], create: Callable[..., nn.Module]) -> None:
    """Serve ``prefix:Name`` entries from an integration (tsl, PyG Temporal, ...)."""
    _NAMESPACES[prefix] = Namespace(names, create)


@functools.lru_cache(maxsize=None)
def _load_declared_namespaces() -> None:
    """Register the providers of the installed packages' :data:`NAMESPACE_GROUP` entry points, once; one that
    fails to import is left out with a warning naming it (the rest of the zoo still works)."""
    for point in entry_points(group=NAMESPACE_GROUP):
        if point.name in _NAMESPACES:
            continue
        try:
            provider = point.load()
        except Exception as err:  # a broken third-party plugin must not break the zoo
            warnings.warn(f"zoo namespace {point.name!r} ({point.value}) could not be loaded: {err}")
            continue
        register_namespace(point.name, provider.names, provider.create)


def _namespaces() -> Dict[str, Namespace]:
    """Every namespace: those registered in code and those the installed packages declare."""
    _load_declared_namespaces()
    return _NAMESPACES


def _namespaced(name: str) -> Optional[Tuple[str, str]]:
    """``(prefix, sub)`` for a ``prefix:Name`` string, ``None`` for a plain name: the one place a name is parsed."""
    prefix, sep, sub = name.partition(":")
    return (prefix, sub) if sep else None


def _all_names() -> List[str]:
    out = sorted(_ENTRIES)
    for prefix, ns in sorted(_namespaces().items()):
        out += [f"{prefix}:{n}" for n in ns.names()]
    return out


def list_models(pattern: Optional[str] = None, pretrained: bool = False, tag: Optional[str] = None,
                native: Optional[bool] = None) -> List[str]:
    """Sorted registered names, optionally filtered by a shell-style ``pattern`` (``"tas_*"``); with
    ``pretrained=True`` (or a ``tag``) only the entries that ship weights (with that tag); ``native=True`` only
    the package's own entries, ``native=False`` only the integration namespaces' (see :class:`ModelEntry`)."""
    from .pretrained import has_pretrained

    names = sorted(_ENTRIES) if native else _all_names()
    if native is False:
        names = [n for n in names if n not in _ENTRIES]
    if pattern is not None:
        names = [n for n in names if fnmatch.fnmatchcase(n, pattern)]
    if pretrained or tag is not None:
        names = [n for n in names if n in _ENTRIES and has_pretrained(n, tag)]
    return names


def _unknown(name: str) -> UnknownModelError:
    close = difflib.get_close_matches(name, _all_names(), n=5, cutoff=0.5)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    return UnknownModelError(f"Unknown model {name!r}.{hint} See stgnn_diag.list_models() or `stgnn-diag models`.")


def get_entry(name: str) -> ModelEntry:
    """The :class:`ModelEntry` of a zoo name: a registered entry, or (``native=False``) a ``prefix:Name`` that a
    namespace serves; :class:`UnknownModelError` with the closest names otherwise."""
    if not isinstance(name, str):
        raise TypeError(f"Model name must be a string, got {type(name).__name__}.")
    if name in _ENTRIES:
        return _ENTRIES[name]
    split = _namespaced(name)
    namespaces = _namespaces()
    if split is None or split[0] not in namespaces or split[1] not in namespaces[split[0]].names():
        raise _unknown(name)
    prefix, sub = split
    return ModelEntry(name, functools.partial(namespaces[prefix].create, sub), f"{prefix} integration entry {sub}",
                      native=False)


def check_model_name(name: str) -> None:
    """Raise :class:`UnknownModelError` (with close matches) unless ``name`` is in the zoo, either a
    registered entry or a ``prefix:Name`` served by a namespace."""
    get_entry(name)


def create_model(name: str, pretrained: Union[bool, str] = False, checkpoint_path=None, **overrides) -> nn.Module:
    """Build a registered model; ``overrides`` replace the entry's defaults (e.g. ``n_nodes=207``).

    Args:
        name: a zoo name (``stgnn_diag.list_models()``).
        pretrained: ``True`` (the entry's default tag) or a tag (``"metr_la_cpu15"``): build the
            architecture the shipped weights were trained with and load them (sha256 verified,
            ``weights_only=True``); an override that contradicts the weights is an error.
        checkpoint_path: a weights file to load instead (a ``state_dict``, or a training checkpoint's).
    """
    entry = get_entry(name)
    if not entry.native:
        if pretrained or checkpoint_path:
            raise ValueError(f"{name!r} is an integration entry: it ships no weights here.")
        return _with_config(entry.fn(**overrides), name, overrides)
    _check_argument_names(entry, overrides)
    if pretrained:
        from .pretrained import check_overrides, load_weights, pretrained_cfg

        cfg = pretrained_cfg(name, pretrained)
        check_overrides(cfg, overrides)
        kwargs = {**saved_model_kwargs(name, cfg["model_kwargs"]), **overrides}
        model = load_weights(_with_config(entry.fn(**kwargs), name, {**entry.defaults, **kwargs}), cfg)
        model.pretrained_cfg = cfg
        return model
    model = _with_config(entry.fn(**overrides), name, {**entry.defaults, **overrides})
    if checkpoint_path is not None:
        from .pretrained import load_state_file

        load_state_file(model, checkpoint_path)
    return model


def resolved_config(name: str, **overrides) -> Dict:
    """The configuration ``create_model(name, **overrides).config`` would carry (``{"name", "model_kwargs"}``,
    every constructor argument of a native entry), without allocating the model: it is built on the
    ``meta`` device. The bench compares it with the configuration a stored result was trained with, so a
    zoo entry whose defaults changed since (another number of layers, say) is not taken for that result."""
    import torch

    if not get_entry(name).native:  # integration entries record their overrides only
        return {"name": name, "model_kwargs": dict(overrides)}
    with torch.device("meta"):
        return create_model(name, **overrides).config


def constructor_arguments(cls: type) -> set:
    """Names of the keyword arguments the constructors in ``cls``'s MRO declare (up to ``nn.Module``)."""
    out = set()
    for klass in cls.__mro__:
        if issubclass(klass, nn.Module) and klass is not nn.Module and "__init__" in vars(klass):
            out |= {p.name for p in inspect.signature(klass.__init__).parameters.values()
                    if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"}
    return out


def _check_argument_names(entry: ModelEntry, overrides: Dict) -> None:
    """Raise :class:`UnknownArgumentError` for an override the entry does not take (with close names),
    where the entry says what it takes (its ``model_class``, or a signature without ``**kwargs``)."""
    accepts = entry.accepts
    if accepts is None:
        params = inspect.signature(entry.fn).parameters.values()
        if any(p.kind == p.VAR_KEYWORD for p in params):
            return
        accepts = {p.name for p in params}
    unknown = [k for k in overrides if k not in accepts]
    if unknown:
        hints = [f"{k!r} (did you mean {', '.join(map(repr, close))}?)" if close else repr(k)
                 for k in unknown for close in [difflib.get_close_matches(k, sorted(accepts), n=3, cutoff=0.6)]]
        raise UnknownArgumentError(f"{entry.name} takes no argument {', '.join(hints)}; its arguments: "
                                   f"{', '.join(sorted(accepts))}.")


def check_model_arguments(name: str, overrides: Dict) -> None:
    """Raise :class:`UnknownArgumentError` if the registered entry ``name`` does not take every key of
    ``overrides`` (nothing is built)."""
    _check_argument_names(get_entry(name), overrides)


def constructor_defaults(model: Union[nn.Module, type]) -> Dict:
    """Keyword defaults of the constructors in the MRO of ``model`` (a module or its class) up to ``nn.Module``
    (a subclass's defaults over its bases': an architecture passes ``**kwargs`` on to its base)."""
    out: Dict = {}
    for klass in reversed((model if isinstance(model, type) else type(model)).__mro__):
        if issubclass(klass, nn.Module) and klass is not nn.Module and "__init__" in vars(klass):
            params = inspect.signature(klass.__init__).parameters.values()
            out.update({p.name: p.default for p in params if p.default is not inspect.Parameter.empty})
    return out


def saved_model_kwargs(name: str, model_kwargs: Dict) -> Dict:
    """The arguments that rebuild the model of a saved configuration of entry ``name`` (a checkpoint's, a
    ``save_pretrained`` folder's, a shipped tag's ``model_kwargs``: every constructor argument of the day): an
    option of the entry's class's ``ADDED_OPTIONS`` that the configuration lacks was added after it was saved,
    and takes its constructor default, which builds the model as it was, not the entry's default, which may
    have changed since (``create_model(name, **model_kwargs)`` would take that one)."""
    entry = get_entry(name)
    if not entry.native:
        return dict(model_kwargs)
    klass = entry.model_class
    added = getattr(klass, "ADDED_OPTIONS", ())
    before = {k: v for k, v in constructor_defaults(klass).items() if k in added} if added else {}
    return {**{k: v for k, v in before.items() if k not in model_kwargs}, **model_kwargs}


def _with_config(model: nn.Module, name: str, kwargs: Dict) -> nn.Module:
    """Attach ``model.config = {"name", "model_kwargs"}`` (what ``save_pretrained`` writes); for the package's
    own entries every constructor argument is in it, so a later change of a default cannot change what a
    saved configuration builds."""
    full = ({**constructor_defaults(model), **kwargs, **getattr(model, "resolved_options", {})} if name in _ENTRIES
            else dict(kwargs))
    model.config = {"name": name, "model_kwargs": full}
    return model
