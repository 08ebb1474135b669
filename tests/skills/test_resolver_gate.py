"""What makes a skill plausible for a request: a shared meaningful word with its name or two with
its description, never a stop word alone, one incidental description word or a word of its ``Not
for ...`` clause."""

from __future__ import annotations

from pathlib import Path

import pytest

from protoagent.skills.discovery import load_skills
from protoagent.skills.model import SkillBundle
from protoagent.skills.resolver import plausible_skills

from .support import write_skill


@pytest.fixture
def deploy(tmp_path: Path) -> list[SkillBundle]:
    write_skill(
        tmp_path / ".agents/skills",
        "deploy-service",
        "name: deploy-service\ndescription: Roll out the service to staging. Not for database migrations.",
    )
    index = load_skills((tmp_path,), tmp_path / "home", bundled=False)
    return list(index.implicit("coding"))


@pytest.mark.parametrize("request_text", ["deploy it", "roll it to staging", "the services are down after deploying"])
def test_a_shared_word_of_the_name_or_description_is_plausible(deploy: list[SkillBundle], request_text: str) -> None:
    assert [b.name for b in plausible_skills(request_text, deploy)] == ["deploy-service"]


@pytest.mark.parametrize(
    "request_text",
    ["run the database migrations", "fix the code in this file and add a new one", "", "the to of and", "roll back"],
)
def test_stop_words_and_negative_clauses_alone_are_not_plausible(deploy: list[SkillBundle], request_text: str) -> None:
    assert plausible_skills(request_text, deploy) == []


def test_the_built_in_skills_meet_the_requests_they_are_for(tmp_path: Path) -> None:
    builtins = list(load_skills((), tmp_path / "home").implicit("coding"))

    def names(text: str) -> set[str]:
        return {b.name for b in plausible_skills(text, builtins)}

    assert "code-review" in names("review this change")
    assert "debug-failing-test" in names("fix the failing date parser test")
    assert "regression-test" in names("write a regression test for issue 42")
    assert "debug-failing-test" in names("test_api is flaky on CI; find out why")
    assert names("add type hints to utils.py") == set()
    assert names("add Result.get(key, default=None), the default when it is missing, with tests and docs") == set()
    named_and_fixed = (  # one incidental word of debug-failing-test's and of regression-test's descriptions
        "Result objects have no get(): add Result.get(key, default=None) that looks up a named field or a fixed "
        "index like result[key] but returns the default when it is missing, with tests and docs."
    )
    assert names(named_and_fixed) == set()
    code_words = (  # "check" and "raises" would be two of debug-failing-test's, but the first is code
        "rfc3986's Validator treats the valid port 65535 as out of range: Validator().check_validity_of('port')"
        ".validate(uri_reference('http://example.com:65535')) raises InvalidComponentsError. Fix it, add tests."
    )
    assert names(code_words) == set()
    adverbs = "Add is_valid(string) -> bool: True only when string decodes to 128 bits; it never raises."
    assert names(adverbs) == set()  # "only" and "raises" are two of debug-failing-test's words
    bug_report = "simple_eval(\"'x' * 1000000\") raises IterableTooLong, but with a list name it does not."
    assert names(bug_report) == set()  # "raises" and "name" describe the bug, not a failing test
    assert "debug-failing-test" in names("`test_api` is flaky on CI and the check fails")
