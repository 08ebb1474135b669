"""The Coding skills that localize carry the "exact identifier → graph" rule: when it fires, which
operation follows, what is forbidden after it, and when text search is still the way."""

from __future__ import annotations

import pytest

from protoagent.skills.discovery import BUNDLED_ROOT


@pytest.mark.parametrize("skill", ["debug-failing-test", "code-review", "regression-test"])
def test_a_localizing_skill_says_when_to_switch_to_code_context_and_what_not_to_do_after(skill: str) -> None:
    body = (BUNDLED_ROOT / skill / "SKILL.md").read_text(encoding="utf-8")
    rule = " ".join(body[body.index("Exact identifier → graph") :].split()).lower()
    assert "fires when" in rule  # when the transition fires
    assert "next call: `code_context" in rule  # which operation follows
    assert "forbidden after it fires: `search_regex`" in rule  # what may not follow it
    assert "only when `code_context` rejects the name" in rule and "index incomplete" in rule  # the fallback
    assert "qualify" in rule  # ambiguity
    assert "is not among your tools" in rule  # an agent whose file opts out of code_context searches
