"""A fast path for the YAML shapes nearly every SKILL.md frontmatter and agent file uses.

``parse_simple(text)`` returns exactly what ruamel.yaml's safe loader returns for a mapping of
plain keys to: plain scalars (also continued on indented lines or starting on the next line),
single-line quoted scalars without escapes, top-level ``|``/``>`` block scalars, one level of
nested ``key: scalar`` maps, block lists, and one-line flow lists of simple words (``[a, b]``);
full-line and trailing comments are skipped. For anything else (anchors, tags, flow maps,
multi-line quoted scalars, escapes, tabs, deeper nesting, floats, dates …) it returns ``None``
and the caller parses with ruamel.yaml. Plain scalars are typed by ruamel's own YAML 1.2
resolver tables, so ``1.0`` or a date is never taken for a string. Property tests check the
equivalence over generated frontmatter.
"""

from __future__ import annotations

import re
from typing import Any, Final

from ruamel.yaml.resolver import VersionedResolver

_UNSAFE: Final = re.compile(
    "[^\n -~\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]|^ +$", re.M
)
"""Tabs, carriage returns, YAML's other line breaks, byte-order marks, non-printables, blank
lines made of spaces: all legal somewhere, none worth a fast path."""
_KEY: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_-]{0,127}):(?: +(.*))?")
_ITEM: Final = re.compile(r"- +(.+)")
_BLOCK_HEADERS: Final = frozenset({"|", "|-", "|+", ">", ">-", ">+"})
_PLAIN_FIRST_UNSAFE: Final = frozenset("-?:,[]{}#&*!|>'\"%@`")
_SINGLE: Final = re.compile(r"'((?:[^']|'')*)'(?: +#.*)? *")
_DOUBLE: Final = re.compile(r'"([^"\\]*)"(?: +#.*)? *')
_DECIMAL: Final = re.compile(r"[-+]?[0-9]+")
_FLOW_LIST: Final = re.compile(r"\[([A-Za-z0-9_ ,./()+=-]*)\](?: +#.*)?")
_IMPLICIT: Final[dict[str | None, list[tuple[str, Any]]]] = VersionedResolver().versioned_resolver
"""ruamel's YAML 1.2 implicit resolvers by first character: ``(tag, regexp)`` pairs."""
_KINDS: Final[dict[str, type | None]] = {
    "tag:yaml.org,2002:str": str,
    "tag:yaml.org,2002:null": None,
    "tag:yaml.org,2002:bool": bool,
    "tag:yaml.org,2002:int": int,
}
_NO: Final = object()
"""Returned by the scalar readers for a shape the fast path does not take."""


def parse_simple(text: str) -> dict[str, Any] | None:
    """The mapping ruamel.yaml would load from ``text``, or ``None`` to say "use ruamel.yaml"."""
    if not text.endswith("\n") or _UNSAFE.search(text):
        return None
    lines = text[:-1].split("\n")
    out: dict[str, Any] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line or line[0] == "#":
            continue
        match = _KEY.fullmatch(line)
        if match is None or match.group(1) in out or _resolve(match.group(1)) is not str:
            return None
        rest = (match.group(2) or "").rstrip(" ")
        if rest in _BLOCK_HEADERS:
            value, i = _block_scalar(lines, i, rest)
        elif rest and rest[0] != "#":
            value, i = _value(rest, lines, i)
        else:
            value, i = _nested(lines, i)
        if value is _NO:
            return None
        out[match.group(1)] = value
    return out or None


def _resolve(plain: str) -> type | None:
    """The Python type ruamel's YAML 1.2 resolver gives a plain scalar (``None`` for null); the
    same lookup as ``VersionedResolver.resolve`` without its per-call version detection."""
    for tag, regexp in _IMPLICIT.get(plain[:1], []) + _IMPLICIT.get(None, []):
        if regexp.match(plain):
            return _KINDS.get(str(tag), object)
    return str


def _scalar(raw: str) -> Any:
    """One single-line scalar: single- or double-quoted (no escapes), or plain; then an optional
    comment."""
    if not raw:
        return _NO
    if raw[0] == "'":
        single = _SINGLE.fullmatch(raw)
        return _NO if single is None else single.group(1).replace("''", "'")
    if raw[0] == '"':
        double = _DOUBLE.fullmatch(raw)
        return _NO if double is None else double.group(1)
    if raw[0] == "[":
        return _flow_list(raw)
    return _plain(raw.partition(" #")[0].rstrip(" "))


def _flow_list(raw: str) -> Any:
    """``[a, b c, d]`` on one line: plain words only, typed like any plain scalar."""
    match = _FLOW_LIST.fullmatch(raw)
    if match is None:
        return _NO
    inner = match.group(1).strip(" ")
    items = [item.strip(" ") for item in inner.split(",")] if inner else []
    values = [_plain(item) for item in items]
    return _NO if _NO in values else values


def _plain_line_ok(text: str) -> bool:
    return bool(text) and text[0] not in _PLAIN_FIRST_UNSAFE and ": " not in text and not text.endswith(":")


def _plain(raw: str) -> Any:
    """A plain scalar as ruamel's resolver types it: string, null, boolean or decimal integer."""
    if not _plain_line_ok(raw):
        return _NO
    kind = _resolve(raw)
    if kind is str:
        return raw
    if kind is None:
        return None
    if kind is bool:
        return raw.lower() == "true"
    if kind is int and _DECIMAL.fullmatch(raw):
        return int(raw)
    return _NO


def _continued(lines: list[str], i: int) -> int:
    """The end of the indented lines from ``i`` on, trailing blank lines left out."""
    end = i
    while end < len(lines) and (not lines[end] or lines[end][0] == " "):
        end += 1
    while end > i and not lines[end - 1]:
        end -= 1
    return end


def _value(rest: str, lines: list[str], i: int) -> tuple[Any, int]:
    """The scalar after ``key:``, with the indented lines that continue a plain one."""
    end = _continued(lines, i)
    if end == i:
        return _scalar(rest), i
    return _multiline_plain([rest, *lines[i:end]]), end


def _multiline_plain(parts: list[str]) -> Any:
    """A plain scalar over several lines: each line trimmed, then folded like ``>``."""
    body = [part.strip(" ") for part in parts]
    if not all(_plain_line_ok(line) and " #" not in line for line in body if line):
        return _NO
    return _plain(_fold(body))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _nested(lines: list[str], i: int) -> tuple[Any, int]:
    """The value of a key with nothing after its colon: null, a list, or a one-level map."""
    start = i
    while i < len(lines) and not lines[i]:
        i += 1
    if i == len(lines):
        return None, i
    first = lines[i]
    indent = _indent(first)
    if indent == 0 and not first.startswith("- "):
        return None, start
    is_list = first[indent:].startswith("- ")
    if not is_list and _KEY.fullmatch(first[indent:]) is None:
        end = _continued(lines, i)
        return _multiline_plain(lines[i:end]), end
    items: list[Any] = []
    mapping: dict[str, Any] = {}
    while i < len(lines):
        line = lines[i]
        if not line:
            i += 1
            continue
        depth = _indent(line)
        if depth < indent or (indent == 0 and not line.startswith("- ")):
            break
        if depth > indent:
            return _NO, i
        if is_list:
            item = _ITEM.fullmatch(line[indent:])
            value = _scalar(item.group(1).rstrip(" ")) if item else _NO
            items.append(value)
        else:
            entry = _KEY.fullmatch(line[indent:])
            if entry is None or not entry.group(2) or entry.group(1) in mapping or _resolve(entry.group(1)) is not str:
                return _NO, i
            value = mapping[entry.group(1)] = _scalar(entry.group(2).rstrip(" "))
        if value is _NO:
            return _NO, i
        i += 1
    if i < len(lines) and _indent(lines[i]) > 0:
        return _NO, i  # a dedent that does not return to the top level
    return (items if is_list else mapping), i


def _block_scalar(lines: list[str], i: int, header: str) -> tuple[Any, int]:
    """A top-level literal (``|``) or folded (``>``) block scalar with strip/clip/keep chomping."""
    block: list[str] = []
    while i < len(lines) and (not lines[i] or lines[i].startswith(" ")):
        block.append(lines[i])
        i += 1
    if not block or not block[0]:
        return _NO, i  # no content, or leading blank lines
    indent = _indent(block[0])
    content = block[:]
    while not content[-1]:
        content.pop()
    trailing = len(block) - len(content)
    if any(line and _indent(line) < indent for line in content):
        return _NO, i
    body = [line[indent:] for line in content]
    if header[0] == ">":
        if any(line.startswith(" ") for line in body):
            return _NO, i  # more-indented lines keep their breaks; ruamel handles them
        text = _fold(body)
    else:
        text = "\n".join(body)
    chomp = header[1:]
    if chomp == "-":
        return text, i
    return text + "\n" * (1 + trailing if chomp == "+" else 1), i


def _fold(body: list[str]) -> str:
    """Folding: a single break between two lines is a space; ``n`` blank lines are ``n`` breaks."""
    out = body[0]
    blanks = 0
    for line in body[1:]:
        if not line:
            blanks += 1
            continue
        out += ("\n" * blanks if blanks else " ") + line
        blanks = 0
    return out
