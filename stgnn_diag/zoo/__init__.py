"""The model zoo: registry plus the built-in entries (imported here so they register).

The ``tsl:`` / ``pygt:`` entries come from :mod:`stgnn_diag.integrations.namespaces`, declared as entry points
(:data:`~stgnn_diag.zoo.registry.NAMESPACE_GROUP`) so that the zoo does not import the integrations."""
from . import attention_variants  # noqa: F401  (registers the entries)
from .registry import (ModelEntry, UnknownArgumentError, UnknownModelError, check_model_arguments, check_model_name,
                       create_model, get_entry, list_models, register_model, register_namespace,
                       resolved_config)
from .saving import from_pretrained, save_pretrained

__all__ = ["ModelEntry", "UnknownArgumentError", "UnknownModelError", "check_model_arguments", "check_model_name", "create_model", "get_entry", "list_models",
           "register_model", "register_namespace", "resolved_config", "save_pretrained", "from_pretrained"]
