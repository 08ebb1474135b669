"""The JSON form of a frozen dataclass: its fields in declared order, as plain JSON values.

A record's ``to_json`` declares only where its JSON differs from its fields (a key spelled
otherwise, a field left out); every value is converted one way: tuples and lists become lists,
mappings plain dicts, paths their string, and a nested record its own ``to_json()``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import fields
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


def json_form(
    record: DataclassInstance, *, rename: Mapping[str, str] | None = None, omit: Collection[str] = ()
) -> dict[str, Any]:
    """``record``'s fields in declared order, but those in ``omit``, keyed by ``rename`` or their name."""
    keys = rename or {}
    return {keys.get(f.name, f.name): json_value(getattr(record, f.name)) for f in fields(record) if f.name not in omit}


def json_value(value: object) -> Any:
    """``value`` as plain JSON data (``TypeError`` for a value that has no JSON form)."""
    if value is None or isinstance(value, str | int | float):
        return value
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, tuple | list):
        return [json_value(item) for item in value]
    if isinstance(value, Mapping):
        return {key: json_value(item) for key, item in value.items()}
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    raise TypeError(f"a {type(value).__name__} has no JSON form; give it a to_json method")
