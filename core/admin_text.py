"""Stored values as a person reads them on an admin page, never as Python writes them.

Django's templates print a value with `str()`, so a payload shows `None`, `True` and
`{'applies_to': []}`. These turn such values into words: nothing is "—", a yes/no is
"yes"/"no", a list is its items joined, a mapping is "key: value" pairs, and a snake_case
choice ("project_fact") reads "project fact".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

NOTHING = "—"
# A stored choice or key: lower-case words joined by underscores ("near_duplicate").
_SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")


def label(name: str) -> str:
    """A field or choice name as words: "confidence_score" -> "confidence score"."""
    return name.replace("_", " ") if _SNAKE.match(name) else name


def is_empty(value: Any) -> bool:
    """Says nothing: None, "", an empty list or mapping, or a mapping of such values only."""
    if value is None or value == "" or value == [] or value == {}:
        return True
    if isinstance(value, Mapping):
        return all(is_empty(v) for v in value.values())
    return False


def readable(value: Any, *, limit: int = 200) -> str:
    """`value` in words, cut to `limit` characters."""
    text = _words(value)
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _words(value: Any) -> str:
    if is_empty(value):
        return NOTHING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float | Decimal):
        return f"{value:.2f}".rstrip("0").rstrip(".")
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    if isinstance(value, str):
        return label(value)
    if isinstance(value, Mapping):
        return "; ".join(f"{label(str(key))}: {_words(item)}" for key, item in value.items()
                         if not is_empty(item))
    if isinstance(value, list | tuple | set):
        return ", ".join(_words(item) for item in value)
    return str(value)
