"""Arguments for an MCP tool checked against the server's declared input schema, before approval.

With ``jsonschema`` installed (the ``mcp`` SDK depends on it) the whole schema is checked.
Without it, or when the server's schema is not valid JSON Schema, a minimal check runs:
required keys, unknown keys when ``additionalProperties`` is false, and top-level types.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

MAX_PROBLEMS = 8
JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


@dataclass(frozen=True, slots=True)
class ArgumentCheck:
    problems: tuple[str, ...]
    checker: str
    """``jsonschema`` or ``minimal`` (required keys and top-level types only)."""


def check_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> ArgumentCheck:
    try:
        jsonschema: Any = importlib.import_module("jsonschema")
    except ImportError:
        return ArgumentCheck(minimal_problems(schema, arguments), "minimal")
    validator_class = jsonschema.validators.validator_for(schema)
    try:
        validator_class.check_schema(schema)
    except jsonschema.SchemaError:
        return ArgumentCheck(minimal_problems(schema, arguments), "minimal")
    errors = sorted(validator_class(schema).iter_errors(arguments), key=lambda e: [str(p) for p in e.absolute_path])
    problems = tuple(f"{_where(e.absolute_path)}: {e.message}" for e in errors[:MAX_PROBLEMS])
    return ArgumentCheck(problems, "jsonschema")


def _where(path: Any) -> str:
    return ".".join(str(p) for p in path) or "(arguments)"


def minimal_problems(schema: dict[str, Any], arguments: dict[str, Any]) -> tuple[str, ...]:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    problems = [f"{key}: required property is missing" for key in schema.get("required") or [] if key not in arguments]
    if schema.get("additionalProperties") is False:
        problems += [f"{key}: not a declared property" for key in arguments if key not in properties]
    for key, value in arguments.items():
        declared = properties.get(key)
        wanted = declared.get("type") if isinstance(declared, dict) else None
        names = [wanted] if isinstance(wanted, str) else wanted if isinstance(wanted, list) else []
        if names and not any(_is_type(value, name) for name in names):
            problems.append(f"{key}: {value!r} is not of type {' or '.join(map(str, names))}")
    return tuple(problems[:MAX_PROBLEMS])


def _is_type(value: Any, name: Any) -> bool:
    kinds = JSON_TYPES.get(str(name))
    if kinds is None:
        return True
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, kinds)
