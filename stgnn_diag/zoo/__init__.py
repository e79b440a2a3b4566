"""The model zoo: registry plus the built-in entries (imported here so they register)."""
from . import attention_variants  # noqa: F401  (registers the entries)
from .registry import (ModelEntry, UnknownArgumentError, UnknownModelError, check_model_arguments, check_model_name,
                       create_model, get_entry, list_models, register_model, register_namespace,
                       resolved_config)
from .saving import from_pretrained, save_pretrained  # noqa: E402
from ..integrations import namespaces  # noqa: F401,E402  (registers tsl: / pygt:, imports neither package)

__all__ = ["ModelEntry", "UnknownArgumentError", "UnknownModelError", "check_model_arguments", "check_model_name", "create_model", "get_entry", "list_models",
           "register_model", "register_namespace", "resolved_config", "save_pretrained", "from_pretrained"]
