"""Values typed on a command line or in a name: ``--set hidden_size=8`` and ``lag_hop[hop=3,graph=grid]``.

One parser for every place the package reads ``KEY=VALUE`` text (the CLI's ``--set``, the bench's model
overrides, data set names with arguments), so ``residual=False`` means the same everywhere. It sits below every
other module of the package and imports none of them.
"""
from __future__ import annotations

import json
from typing import Any, Dict, Optional, Sequence, Tuple

__all__ = ["parse_value", "parse_key_values", "split_bracketed"]

#: Python's spellings of the JSON constants, as users type them after ``--set`` (``residual=False``).
_PYTHON_CONSTANTS = {"True": True, "False": False, "None": None}


def parse_value(text: str) -> Any:
    """``"8"`` -> 8, ``"0.1"`` -> 0.1, ``"true"`` / ``"True"`` -> True, ``"None"`` -> None, ``"[1,2]"`` -> [1, 2],
    anything else -> the string."""
    if text in _PYTHON_CONSTANTS:
        return _PYTHON_CONSTANTS[text]
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_key_values(pairs: Optional[Sequence[str]], error: type = ValueError) -> Dict[str, Any]:
    """``["hidden_size=8", "heads=2"]`` -> ``{"hidden_size": 8, "heads": 2}``; ``error`` (a ``ValueError``
    subclass) for an item that is not ``KEY=VALUE`` with an identifier for a key."""
    out: Dict[str, Any] = {}
    for kv in pairs or []:
        key, sep, value = kv.partition("=")
        if not sep or not key.strip().isidentifier():
            raise error(f"Expected KEY=VALUE, got {kv!r}.")
        out[key.strip()] = parse_value(value.strip())
    return out


def split_bracketed(name: str, what: str = "name") -> Tuple[str, Dict[str, Any]]:
    """``"lag_hop[hop=3,graph=grid]"`` -> ``("lag_hop", {"hop": 3, "graph": "grid"})``; a plain name has ``{}``.
    A value may be a JSON list (``"lag_hop[lag=[1,95]]"`` -> ``{"lag": [1, 95]}``): commas inside it do not split.
    ``ValueError`` naming ``what`` for an unclosed bracket or an item that is not ``key=value``."""
    name = str(name)
    if "[" not in name:
        return name, {}
    if not name.endswith("]"):
        raise ValueError(f"{what} {name!r}: arguments go in brackets, e.g. {name.split('[')[0]}[key=value,...]")
    key, inner = name[:-1].split("[", 1)
    items = [p.strip() for p in _split_top_level(inner) if p.strip()]
    try:
        return key, parse_key_values(items)
    except ValueError as e:
        raise ValueError(f"{what} {name!r}: {e}") from None


def _split_top_level(text: str) -> list:
    """``"a=1,b=[2,3]"`` -> ``["a=1", "b=[2,3]"]``: split at the commas outside square brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]
