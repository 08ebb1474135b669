"""SKILL.md frontmatter: parsed with a YAML library and checked against the reference limits."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ruamel.yaml.error import YAMLError

from protoagent.frontmatter import BOM, split_frontmatter
from protoagent.skills.model import Severity
from protoagent.skills.yaml_cache import parse_yaml

Problem = tuple[Severity, str]
"""``(severity, problem)`` found while parsing or checking."""
MAX_NAME = 64
MAX_DESCRIPTION = 1024
NAME_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True, slots=True)
class ParsedSkill:
    """SKILL.md split into its frontmatter mapping and its Markdown body."""

    meta: dict[str, Any]
    body: str
    problems: tuple[Problem, ...]
    """``(severity, problem)`` pairs found while parsing."""


def parse_skill_text(text: str, load: Callable[[str], Any] = parse_yaml) -> ParsedSkill:
    """Split and parse SKILL.md. A file without frontmatter, or with YAML that does not parse
    into a mapping, yields an ``error`` problem and an empty mapping."""
    split = split_frontmatter(text)
    if split is None:
        missing: Problem = ("error", "SKILL.md has no '---' frontmatter block at the top")
        return ParsedSkill({}, text.removeprefix(BOM), (missing,))
    body = split.body
    try:
        loaded = load(split.header)
    except YAMLError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return ParsedSkill({}, body, (("error", f"frontmatter is not valid YAML: {first}"),))
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        return ParsedSkill({}, body, (("error", "frontmatter must be a YAML mapping of keys to values"),))
    return ParsedSkill({str(k): v for k, v in loaded.items()}, body, ())


def normalize_legacy_name(name: str) -> str:
    """A legacy name (``My_Skill``) in the kebab-case form the catalog uses (``my-skill``)."""
    return re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9]+", "-", name.strip().lower())).strip("-")


def check_name(raw: Any, folder: str) -> tuple[str, list[Problem]]:
    """The name the skill is known by, and the problems with the declared one."""
    problems: list[Problem] = []
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        problems.append(("warning", f"frontmatter has no 'name'; using the folder name {folder!r}"))
        raw = folder
    name = str(raw).strip()
    if not NAME_PATTERN.match(name):
        legacy = normalize_legacy_name(name)
        if not legacy or len(legacy) > MAX_NAME:
            problems.append(("error", f"name {name!r} is not kebab-case (lowercase letters, digits, '-')"))
            return name, problems
        problems.append(("warning", f"legacy name {name!r} is used as {legacy!r}; rename it to kebab-case"))
        name = legacy
    if len(name) > MAX_NAME:
        problems.append(("error", f"name is {len(name)} characters; the limit is {MAX_NAME}"))
    if name != folder:
        problems.append(("warning", f"name {name!r} differs from its folder {folder!r}"))
    return name, problems


def check_description(raw: Any) -> tuple[str, list[Problem]]:
    """The description as one string, and what makes it invalid."""
    if raw is None or not str(raw).strip():
        return "", [("error", "frontmatter has no 'description'; say what the skill does and when to use it")]
    text = " ".join(str(raw).split()) if not isinstance(raw, str) else str(raw).strip()
    problems: list[Problem] = []
    if len(text) > MAX_DESCRIPTION:
        problems.append(("error", f"description is {len(text)} characters; the limit is {MAX_DESCRIPTION}"))
    if "<" in text or ">" in text:
        problems.append(("error", "description contains '<' or '>'; angle brackets are not allowed"))
    return text, problems


def allowed_tools(raw: Any) -> tuple[tuple[str, ...], list[Problem]]:
    """``allowed-tools`` as a list or a comma/space separated string."""
    if raw is None:
        return (), []
    if isinstance(raw, str):
        return tuple(t for t in re.split(r"[,\s]+", raw) if t), []
    if isinstance(raw, list) and all(isinstance(t, str) for t in raw):
        return tuple(t.strip() for t in raw if t.strip()), []
    return (), [("warning", "'allowed-tools' must be a list or a comma-separated string; ignored")]


def check_metadata(meta: dict[str, Any]) -> list[Problem]:
    problems: list[Problem] = []
    if "metadata" in meta and not isinstance(meta["metadata"], dict):
        problems.append(("warning", "'metadata' should be a mapping of keys to values"))
    return problems
