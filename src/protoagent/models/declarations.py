"""What a model is shown of a tool's input: one rule for every declared schema and description.

Every declaration a model reads goes through here: a tool's input model (``tools.base``), an MCP
server's tool schema, the JSON-action guide and the compact small-profile protocol. The rule:
declare what the model must know to write a valid call (the properties, their types, which are
required, enumerated choices, nested shapes) and leave everything the validator applies on its
own out of the declaration: defaults (a missing argument still gets its default), bounds,
lengths and patterns (a value outside them is refused as typed feedback that says why),
``additionalProperties: false`` (an unknown argument is refused the same way), and annotations
that constrain nothing (titles, which repeat the property names, and examples). An optional
property that may be null is declared as its type, to be omitted. A description stays only where
the author wrote one: a name that is ambiguous on its own.

The validator is the full schema (a pydantic input model, an MCP server's own schema), so a call
with an argument the declaration leaves out still validates, and only the prompt gets shorter.
"""

from __future__ import annotations

import re
from typing import Any

VALIDATION_KEYS = frozenset(
    {
        "default",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
    }
)
"""Constraints the validator applies on its own: a declaration does not repeat them."""
ANNOTATION_KEYS = frozenset({"title", "examples", "$comment", "readOnly", "writeOnly", "deprecated"})
"""Keys that constrain nothing and cost prompt space."""
DATA_KEYS = frozenset({"enum", "const", "required"})
"""Keys whose values are data, never schemas: kept as they are."""
NAMED_SCHEMAS = frozenset({"properties", "$defs", "definitions", "patternProperties", "dependentSchemas"})
"""Keys holding a map of name to schema: the names are data (a property may be called ``title``)."""
SHORT_DESCRIPTION = 80
"""The compact protocol's longest description, in characters."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def declared_schema(schema: Any) -> Any:
    """The schema as declared to a model under the module's rule; the input is not modified.

    Any JSON value is accepted (an MCP server's schema is untrusted): what is not a schema
    object passes through unchanged."""
    if not isinstance(schema, dict):
        return schema
    return _declared(schema)


def compact_schema(schema: Any, limit: int = SHORT_DESCRIPTION) -> Any:
    """The declared schema with every description cut to ``limit`` characters (the compact
    protocol's prompt text); an empty description is left out."""
    return _shortened(declared_schema(schema), limit)


def short_description(text: str, limit: int = SHORT_DESCRIPTION) -> str:
    """At most ``limit`` characters of the first paragraph: all of it, else its first sentence,
    else a cut at a word."""
    flat = " ".join(_PARAGRAPH_BREAK.split(text.strip(), maxsplit=1)[0].split())
    if len(flat) <= limit:
        return flat
    first = _SENTENCE_END.split(flat, maxsplit=1)[0]
    if len(first) <= limit:
        return first
    cut = flat[: limit - 1].rsplit(" ", 1)[0]
    return cut + "…"


def _declared(node: dict[str, Any]) -> dict[str, Any]:
    optional = _optional_names(node)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in VALIDATION_KEYS or key in ANNOTATION_KEYS:
            continue
        if key == "additionalProperties" and value is False:
            continue
        if key in DATA_KEYS:
            out[key] = value
        elif key in NAMED_SCHEMAS and isinstance(value, dict):
            out[key] = {
                name: _nullable_as_type(sub, name in optional and key == "properties") for name, sub in value.items()
            }
        else:
            out[key] = _any(value)
    return out


def _any(value: Any) -> Any:
    if isinstance(value, dict):
        return _declared(value)
    if isinstance(value, list):
        return [_any(item) for item in value]
    return value


def _optional_names(node: dict[str, Any]) -> set[str]:
    properties = node.get("properties")
    required = node.get("required")
    names = set(properties) if isinstance(properties, dict) else set()
    return names - set(required) if isinstance(required, list) else names


def _nullable_as_type(sub: Any, optional: bool) -> Any:
    """An optional ``X or null`` property is declared as ``X`` (omitting it is how to say none)."""
    declared = _any(sub)
    if not (optional and isinstance(declared, dict)):
        return declared
    variants = declared.get("anyOf")
    if not (isinstance(variants, list) and len(variants) == 2 and {"type": "null"} in variants):
        return declared
    other = next(v for v in variants if v != {"type": "null"})
    if not isinstance(other, dict):
        return declared
    rest = {k: v for k, v in declared.items() if k != "anyOf"}
    return {**rest, **other}


def _shortened(node: Any, limit: int) -> Any:
    if isinstance(node, list):
        return [_shortened(item, limit) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "description" and isinstance(value, str):
            short = short_description(value, limit)
            if short:
                out[key] = short
        elif key in DATA_KEYS:
            out[key] = value
        elif key in NAMED_SCHEMAS and isinstance(value, dict):
            out[key] = {name: _shortened(sub, limit) for name, sub in value.items()}
        else:
            out[key] = _shortened(value, limit)
    return out
