"""Which model lines are worth a check run, and how the winner becomes an exact edit."""

from __future__ import annotations

from protoagent.repair.candidates import CandidateEdit
from protoagent.repair.edits import code_prefix, copies_expected_value, exact_span, expected_values, replace_line
from protoagent.repair.localize import Localization, SourceFunction

SOURCE = 'def name(profile):\n    return profile["nmae"]\n'
OLD = '    return profile["nmae"]'


def edit(new: str, old: str = OLD, line: int = 2) -> CandidateEdit:
    return CandidateEdit("profiles.py", line, old, new)


def localization(test_line: str) -> Localization:
    function = SourceFunction("profiles.py", "name", 1, tuple(SOURCE.splitlines()), (2,))
    return Localization(("test_p.py::test_name",), test_line, "KeyError: 'nmae'", (function,))


def test_prose_after_the_code_is_cut_and_a_line_that_never_parses_is_dropped() -> None:
    trimmed = code_prefix(SOURCE, edit('    return profile["name"] is the fixed line.'))
    assert trimmed is not None and trimmed.new == '    return profile["name"]'
    assert code_prefix(SOURCE, edit("    Here is the fixed line:")) is None


def test_a_line_that_is_the_old_one_once_cut_is_dropped() -> None:
    assert code_prefix(SOURCE, edit(OLD + " is correct")) is None


def test_copying_the_tests_expected_literal_into_the_source_is_refused() -> None:
    found = localization('assert name({"name": "Ada"}) == "Ada"')
    assert copies_expected_value(edit("    return 'Ada'"), found)
    assert not copies_expected_value(edit('    return profile["name"]'), found)
    # A literal the file already holds elsewhere is its own, not the test's.
    assert not copies_expected_value(edit("    return 'Ada'"), found, "DEFAULT = 'Ada'\n")


def test_the_applied_span_is_widened_until_it_occurs_once() -> None:
    text = "def a():\n    return 1\n\n\ndef b():\n    return 1\n"
    old, new = exact_span(text, [edit("    return 2", old="    return 1", line=6)])
    assert text.count(old) == 1
    assert text.replace(old, new) == replace_line(text, edit("    return 2", old="    return 1", line=6))


def test_expected_values_are_the_compared_literals_not_the_call_arguments() -> None:
    assert expected_values('self.assertEqual(parse_date("2024-03-15"), (2024, 3, 15))') == {"2024", "3", "15"}
    assert expected_values('assert name({"name": "Ada"}) == "Ada"') == {"'Ada'"}
