"""The one way a Markdown file with YAML frontmatter (SKILL.md, an agent file) is split.

The file opens with a ``---`` line, then the YAML, then a closing ``---`` line, then the body. A
byte-order mark before the first fence is dropped and a fence line may end in spaces or tabs
(editors add both), so a skill and an agent file written the same way are read the same way.
Parsing the YAML is the caller's: skills read it safely, agent files keep it round-trippable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BOM = "\ufeff"
_OPENING = re.compile(r"---[ \t]*\r?\n")
_BLOCK = re.compile(r"---[ \t]*\r?\n(.*?)^---[ \t]*\r?$\n?", re.S | re.M)


@dataclass(frozen=True, slots=True)
class Frontmatter:
    """A file split at its fences: the YAML text exactly as written, and the body after it."""

    header: str
    body: str


def opens_frontmatter(text: str) -> bool:
    """Whether ``text`` starts with an opening ``---`` line (after any byte-order mark)."""
    return _OPENING.match(text.removeprefix(BOM)) is not None


def split_frontmatter(text: str) -> Frontmatter | None:
    """The frontmatter block and body of ``text``, or ``None`` when it has no opening fence or its
    frontmatter is never closed (:func:`opens_frontmatter` says which)."""
    match = _BLOCK.match(text.removeprefix(BOM))
    if match is None:
        return None
    return Frontmatter(match.group(1), text.removeprefix(BOM)[match.end() :])
