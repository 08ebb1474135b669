"""Facts of a JavaScript or TypeScript file from the tree-sitter grammars (parsed, never run).

Definitions are exact (functions, classes, methods, fields, module-level variables, interfaces,
type aliases, enums); references are by name (no import resolution), which the query says.
"""

from __future__ import annotations

import functools
from typing import Any

from protoagent.navigation.facts import UNKNOWN, Definition, DefKind, FileFacts, Language, Reference, RefKind

JS_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs")
TS_SUFFIXES = (".ts", ".mts", ".cts")
TSX_SUFFIXES = (".tsx",)

_DEFINING: dict[str, DefKind] = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "class": "class",
    "method_definition": "method",
    "abstract_method_signature": "method",
    "method_signature": "method",
    "function_signature": "function",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
}
_FIELDS = frozenset({"public_field_definition", "field_definition"})
_DECLARATIONS = frozenset({"lexical_declaration", "variable_declaration"})
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_NAMES = frozenset({"identifier", "type_identifier", "property_identifier", "shorthand_property_identifier"})


@functools.cache
def _parser(flavour: str) -> Any:
    import tree_sitter

    if flavour == "javascript":
        import tree_sitter_javascript

        language = tree_sitter.Language(tree_sitter_javascript.language())
    else:
        import tree_sitter_typescript

        raw = (
            tree_sitter_typescript.language_tsx() if flavour == "tsx" else tree_sitter_typescript.language_typescript()
        )
        language = tree_sitter.Language(raw)
    return tree_sitter.Parser(language)


def flavour_of(path: str) -> str | None:
    if path.endswith(".min.js") or path.endswith(".d.ts"):
        return None  # minified bundles and declaration files repeat what sources define
    if path.endswith(JS_SUFFIXES):
        return "javascript"
    if path.endswith(TS_SUFFIXES):
        return "typescript"
    if path.endswith(TSX_SUFFIXES):
        return "tsx"
    return None


def js_facts(path: str, revision: str, module: str, data: bytes) -> FileFacts:
    flavour = flavour_of(path) or "javascript"
    tree = _parser(flavour).parse(data)
    walker = _Walker()
    walker.walk(tree.root_node)
    language: Language = "javascript" if flavour == "javascript" else "typescript"
    error = "parsed with errors; some symbols may be missing" if tree.root_node.has_error else ""
    return FileFacts(
        path, revision, language, module, tuple(walker.definitions), tuple(walker.references), {}, error=error
    )


class _Walker:
    def __init__(self) -> None:
        self.definitions: list[Definition] = []
        self.references: list[Reference] = []
        self._skip: int | None = None
        self._classes: set[str] = set()
        """The name node of the definition just recorded (its name is no reference)."""

    def walk(self, root: Any) -> None:
        # Each node travels with its parent and grandparent: asking tree-sitter for a node's
        # parent walks down from the root every time.
        pending: list[tuple[Any, str, Any, Any]] = [(root, "", None, None)]
        while pending:
            node, scope, parent, grand = pending.pop()
            inner = self._visit(node, scope, parent, grand)
            pending.extend((child, inner, node, parent) for child in reversed(node.children))

    def _visit(self, node: Any, scope: str, parent: Any, grand: Any) -> str:
        kind = node.type
        if kind in _DEFINING:
            name = node.child_by_field_name("name")
            if name is not None:
                defined: DefKind = _DEFINING[kind]
                if defined == "function" and scope in self._classes:
                    defined = "method"
                qual = self._define(scope, _text(name), defined, node, name)
                if defined == "class":
                    self._classes.add(qual)
                return qual
            return scope
        if kind in _FIELDS:
            name = node.child_by_field_name("name") or node.child_by_field_name("property")
            if name is not None:
                self._define(scope, _text(name), "attribute", node, name)
            return scope
        if kind in _DECLARATIONS:
            for declarator in node.named_children:
                self._declarator(declarator, scope)
            return scope
        if kind in ("pair", "assignment_expression"):
            self._function_valued(node, scope)
            return scope
        if kind in _NAMES:
            self._reference(node, scope, parent, grand)
        return scope

    def _declarator(self, node: Any, scope: str) -> None:
        """``const f = () => ...`` defines a function at any level; other variables count at the top."""
        if node.type != "variable_declarator":
            return
        name = node.child_by_field_name("name")
        if name is None or name.type != "identifier":
            return
        value = node.child_by_field_name("value")
        kind: DefKind = "function" if value is not None and value.type in _FUNCTION_VALUES else "variable"
        if kind == "function" or not scope:
            self._define(scope, _text(name), kind, node, name)

    def _function_valued(self, node: Any, scope: str) -> None:
        """``key: () => ...`` in an object and ``a.b = function () {...}`` define functions too."""
        value = node.child_by_field_name("value" if node.type == "pair" else "right")
        if value is None or value.type not in _FUNCTION_VALUES:
            return
        target = node.child_by_field_name("key" if node.type == "pair" else "left")
        if target is None:
            return
        if target.type == "member_expression":
            owner, prop = target.child_by_field_name("object"), target.child_by_field_name("property")
            if prop is None:
                return
            prefix = f"{_text(owner)}." if owner is not None and owner.type in ("identifier", "this") else ""
            self._define(scope, prefix + _text(prop), "function", node, prop)
        elif target.type in ("identifier", "property_identifier"):
            self._define(scope, _text(target), "function", node, target)

    def _define(self, scope: str, name: str, kind: DefKind, node: Any, name_node: Any) -> str:
        qual = f"{scope}.{name}" if scope else name
        self.definitions.append(Definition(qual, kind, node.start_point[0] + 1, node.end_point[0] + 1))
        self._skip = name_node.id
        return qual

    def _reference(self, node: Any, scope: str, parent: Any, grand: Any) -> None:
        if self._skip == node.id:
            return
        if parent is not None and parent.type == "variable_declarator" and parent.child_by_field_name("name") == node:
            return
        used: RefKind = "read"
        head: tuple[str, ...] = (_text(node),)
        if node.type == "property_identifier":
            if parent is None or parent.type != "member_expression":
                return  # an object literal's key or a definition's name is no use of a symbol
            head = (UNKNOWN, _text(node))
            called = grand is not None and grand.type == "call_expression"
            used = "call" if called and grand.child_by_field_name("function") == parent else "read"
        elif parent is not None and parent.type == "call_expression" and parent.child_by_field_name("function") == node:
            used = "call"
        self.references.append(Reference(node.start_point[0] + 1, node.start_point[1], scope, head, used))


def _text(node: Any) -> str:
    raw: bytes = node.text or b""
    return raw.decode("utf-8", errors="replace")
