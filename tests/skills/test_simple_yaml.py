"""The frontmatter fast path returns exactly what ruamel.yaml returns, or defers to it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml.error import YAMLError

from protoagent.skills.discovery import BUNDLED_ROOT
from protoagent.skills.frontmatter import parse_skill_text
from protoagent.skills.simple_yaml import parse_simple
from protoagent.skills.yaml_cache import parse_yaml, parse_yaml_fully

TYPED_WORDS = ["true", "True", "FALSE", "null", "Null", "~", "yes", "on", "1.0", "010", "0x1F", "1_000", "-1", "+5"]
TYPED_WORDS += ["2024-01-01", ".inf", ".NaN", "=", "<<", "1e3", "12:30", "0o17", "-", "?", "a: b", "x #c", "ends:"]
ANY_CHARS = "abcXYZ019 -_:#,.'\"[]{}!&*|>%@`?/\\~\u00e9\u2014\u00a0\t\u2028\x85\r"
SAFE_CHARS = "abcdXYZ0129 .,/()-_=+\u00e9\u2014\u00a0"
HEADERS = ["|", "|-", "|+", ">", ">-", ">+", "|2", ">-  ", "| # c", "|-1"]
JUNK = [
    "# comment",
    "#",
    "  # indented comment",
    "k: # c",
    "  continued text",
    "---",
    "...",
    "- stray",
    "? k",
    "&a x: y",
    "k: &a v",
    "k: *a",
]
JUNK += ["k: !!str x", "k: [a, b]", "k: {a: b}", "    ", "%YAML 1.1", "k:v", " k: v", "k: 'open", 'k: "a\\nb"']
KEYS = ["name", "description", "license", "allowed-tools", "metadata", "true", "null", "x y", "_k", "a-b", "k.j", "1"]

NEAR_SAFE_CHARS = "ab #:,-'\"![]{}|>"
token = st.sampled_from(TYPED_WORDS) | st.text(ANY_CHARS, max_size=16) | st.text(NEAR_SAFE_CHARS, max_size=8)
safe_token = st.text(SAFE_CHARS, min_size=1, max_size=24).map(lambda s: "w" + s.rstrip(" "))
key = st.sampled_from(KEYS) | st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,8}", fullmatch=True)
flow_word = st.from_regex(r"w[a-z0-9_ ./()+=-]{0,8}", fullmatch=True).map(lambda s: s.rstrip(" "))
safe_key = st.from_regex(r"k[a-z0-9_-]{0,8}", fullmatch=True)


def quoted(value: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """A token as it is written: plain, single-quoted (escaped) or double-quoted (raw)."""
    return st.one_of(
        value,
        value.map(lambda s: "'" + s.replace("'", "''") + "'"),
        value.map(lambda s: '"' + s + '"'),
    )


@st.composite
def block(
    draw: st.DrawFn, keys: st.SearchStrategy[str], headers: list[str], lines: st.SearchStrategy[str], odd: bool
) -> str:
    """A block scalar; ``odd`` adds leading blank and more-indented lines."""
    indent = " " * draw(st.integers(1, 4))
    body = [indent + draw(lines)]
    body += draw(st.lists(st.one_of(lines.map(lambda s: indent + s), st.just("")), max_size=6))
    if odd and draw(st.booleans()):
        body.insert(draw(st.integers(0, len(body))), indent + "  " + draw(lines))
    if odd and draw(st.booleans()):
        body.insert(0, "")
    return f"{draw(keys)}: {draw(st.sampled_from(headers))}\n" + "\n".join(body)


@st.composite
def nested(
    draw: st.DrawFn, outer: st.SearchStrategy[str], keys: st.SearchStrategy[str], values: st.SearchStrategy[str]
) -> str:
    indent = " " * draw(st.sampled_from([0, 2, 4]))
    if draw(st.booleans()):
        items = draw(st.lists(values, min_size=1, max_size=4))
        return f"{draw(outer)}:\n" + "\n".join(f"{indent}- {v}" for v in items)
    inner = " " * draw(st.sampled_from([2, 4]))
    pairs = draw(st.lists(st.tuples(keys, values), min_size=1, max_size=4, unique_by=lambda pair: pair[0]))
    return f"{draw(outer)}:\n" + "\n".join(f"{inner}{k}: {v}" for k, v in pairs)


@st.composite
def multiline(draw: st.DrawFn, keys: st.SearchStrategy[str], lines: st.SearchStrategy[str], odd: bool) -> str:
    """A plain scalar continued on indented lines, starting on the key's line or the next one."""
    parts = draw(st.lists(lines | st.just(""), min_size=1, max_size=5))
    indents = st.integers(0 if odd else 1, 3).map(lambda n: " " * n)
    body = "\n".join(draw(indents) + part if part else "" for part in parts)
    first, blank = draw(lines), "\n" * draw(st.integers(0, 2))
    return f"{draw(keys)}:\n{blank}  {first}\n{body}" if draw(st.booleans()) else f"{draw(keys)}: {first}\n{body}"


def document(entry: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(entry, min_size=1, max_size=6).map(lambda entries: "\n".join(entries) + "\n")


def common_document(risky: bool = False) -> st.SearchStrategy[str]:
    """Entries of the common shapes under distinct top-level keys (``k0``, ``k1`` …); ``risky``
    puts one entry of any shape among them, so that one entry decides fast path or fallback."""

    def entry(top: str) -> st.SearchStrategy[str]:
        keys = st.just(top)
        return st.one_of(
            quoted(safe_token).map(lambda value: f"{top}: {value}"),
            quoted(safe_token).map(lambda value: f"# about {top}\n{top}: {value}  # a comment"),
            block(keys, HEADERS[:6], safe_token, odd=False),
            nested(keys, safe_key, quoted(safe_token)),
            multiline(keys, safe_token, odd=False),
            st.lists(flow_word, max_size=4).map(lambda words: f"{top}: [" + ", ".join(words) + "]"),
        )

    def join(parts: tuple[str, ...]) -> str:
        return "\n".join(parts) + "\n"

    entries = st.integers(0, 5).flatmap(lambda n: st.tuples(*(entry(f"k{i}") for i in range(n))))
    if not risky:
        return st.tuples(entry("k"), entries).map(lambda t: join((t[0], *t[1])))
    return st.tuples(entries, RISKY_ENTRY, st.integers(0, 5)).map(lambda t: join((*t[0][: t[2]], t[1], *t[0][t[2] :])))


ANY_ENTRY = st.one_of(
    st.tuples(key, quoted(token), st.sampled_from([" ", "  "])).map(lambda t: f"{t[0]}:{t[2]}{t[1]}"),
    block(key, HEADERS, st.text(ANY_CHARS, max_size=12) | st.text(NEAR_SAFE_CHARS, max_size=8), odd=True),
    nested(key, key, quoted(token)),
    multiline(key, token, odd=True),
    key.map(lambda k: f"{k}:"),
    st.sampled_from(JUNK),
)

RISKY_LINES = ["wa #c", "wa:", "wa: b", "w #", "#c", "- wa", "wa#b", "w:b", "w'q'", "[w]", "w [x] {y}", "w -"]
near_safe = st.sampled_from(TYPED_WORDS + RISKY_LINES) | st.text(NEAR_SAFE_CHARS, min_size=1, max_size=6).map(
    lambda s: "w" + s
)
RISKY_ENTRY = ANY_ENTRY | st.one_of(
    near_safe.map(lambda value: f"kr: {value}"),
    multiline(st.just("kr"), st.one_of(safe_token, safe_token, near_safe), odd=False),
    multiline(st.just("kr"), st.one_of(safe_token, safe_token, near_safe), odd=True),
    nested(st.just("kr"), safe_key, st.one_of(safe_token, near_safe)),
    st.tuples(st.lists(flow_word | near_safe | st.just(""), max_size=4), st.sampled_from([",", ", ", " ,"])).map(
        lambda t: "kr: [" + t[1].join(t[0]) + "]"
    ),
)
"""Common shapes with one risky token: the fast path must see the risk and defer."""


def typed(value: Any) -> Any:
    """A value with every scalar's type spelled out, so ``True`` never equals ``1``."""
    if isinstance(value, dict):
        return ("map", [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("seq", [typed(v) for v in value])
    return (type(value).__name__, value)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=document(ANY_ENTRY))
def test_fast_path_result_equals_ruamel_whenever_it_answers(text: str) -> None:
    fast = parse_simple(text)
    if fast is not None:
        assert typed(fast) == typed(parse_yaml_fully(text))


@settings(max_examples=350, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=common_document(risky=True))
def test_one_risky_entry_among_common_ones_is_parsed_exactly_or_deferred(text: str) -> None:
    fast = parse_simple(text)
    if fast is not None:
        assert typed(fast) == typed(parse_yaml_fully(text))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=common_document())
def test_common_frontmatter_shapes_take_the_fast_path(text: str) -> None:
    """Plain (one or more lines) and quoted scalars, comments, folded/literal blocks, one-level maps
    and lists never need ruamel."""
    fast = parse_simple(text)
    assert fast is not None, text
    assert typed(fast) == typed(parse_yaml_fully(text))


FIXTURE_SHAPES = [
    "name: pdf-tools\ndescription:\n  Extract text from PDF\n  files and fill forms.\n",
    "name: big\ndescription: |-\n" + "\n".join("  " + "word " * 20 for _ in range(12)) + "\n",
    'name: "review"\ndescription: >\n  Review code\n  changes.\n',
    "name: other-name\ndescription: Does things.\n",
    "name: tagged\ndescription: Use with <Tag> elements.\n",
    "description: Has no name.\n",
    "name: keys\ndescription: Keys.\ntriggers:\n  - on push\nmetadata:\n  author: someone\n  version: '1.2'\n"
    "allowed-tools: Read, Grep Bash\nlicense: MIT\n",
    "name: keys\ndescription: K.\nallowed-tools: [read_file, shell]\n",
    "name: keys\ndescription: K.\nallowed-tools: [Bash(git add:*), Read]\n",
    "tags: [a, 1.5]\n",
    "tags: [a b, 7, true, null]  # flow list\n",
    "tags: [a, ]\n",
    "tags: [a.b, c/d, e=f, (g)]\n",
    "tags: [-a]\n",
    "name: My_Skill\ndescription: Legacy.\n",
    "interface:\n  display_name: Deploy\npolicy:\n  allow_implicit_invocation: false\n",
    "dependencies:\n  tools:\n    - type: builtin\n      value: shell\n",
    "name: dated\ndescription: Since 2024.\nmetadata:\n  version: 1.0\n  created: 2024-01-01\n",
    "# yaml-language-server: $schema=skill.json\nname: commented # trailing\ndescription: 'It''s quoted' # note\n",
    "name: folded\ndescription: Starts here\n  and goes on\n\n  with a paragraph.\n",
    "name: ended\ndescription: Starts here\n  and ends # at a comment\n",
    "name: odd\ndescription: Starts here\n  and: is a key\n",
    "name: anchors\ndescription: &d Shared.\nsummary: *d\n",
]


def _bundled_texts() -> list[str]:
    texts = []
    for path in sorted(BUNDLED_ROOT.glob("*/SKILL.md")) + sorted(BUNDLED_ROOT.glob("*/agents/*.yaml")):
        text = path.read_text(encoding="utf-8")
        texts.append(text.split("---\n")[1] if path.name == "SKILL.md" else text)
    return texts


@pytest.mark.parametrize("text", FIXTURE_SHAPES + _bundled_texts())
def test_fixture_and_bundled_frontmatter_parse_exactly_as_ruamel_does(text: str) -> None:
    assert _outcome(parse_yaml, text) == _outcome(parse_yaml_fully, text)


def _outcome(parse: Callable[[str], Any], text: str) -> Any:
    """The typed value, or the error for text that is not valid YAML."""
    try:
        return typed(parse(text))
    except YAMLError as exc:
        return ("error", type(exc).__name__)


def test_bundled_skills_and_the_common_fixture_shapes_take_the_fast_path() -> None:
    fast = [text for text in FIXTURE_SHAPES + _bundled_texts() if parse_simple(text) is not None]
    assert len(fast) >= 10
    assert all(parse_simple(text) is not None for text in _bundled_texts())


def test_invalid_yaml_is_left_to_ruamel_and_still_a_diagnostic(tmp_path: Path) -> None:
    parsed = parse_skill_text("---\nname: x\ndescription: a: b\n---\nbody\n")
    assert parsed.meta == {} and parsed.problems[0][1].startswith("frontmatter is not valid YAML")
    assert parse_simple("name: x\nname: y\n") is None  # duplicate keys: ruamel's error, not a guess
