"""Every line of a localized function is ranked by what the failure says about it."""

from __future__ import annotations

import ast

from protoagent.repair.ranking import rank_lines

MEAN = """def mean(values):
    total = 0
    count = 0
    seen = set()
    for value in values:
        seen.add(value)
        total += value
        count += 1
    average = total / count
    log = len(seen)
    return count
"""
CLAMP = """def clamp(x, lower, upper):
    note = "clamping"
    if upper > lower:
        raise ValueError("bad bounds")
    return min(max(x, lower), upper)
"""


def _ranked(source: str, hot: frozenset[int] = frozenset()) -> tuple[int, ...]:
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    return rank_lines(node, range(2, (node.end_lineno or 2) + 1), set(hot))


def test_a_returned_name_ranks_first_and_what_flows_into_it_before_what_does_not() -> None:
    ranked = _ranked(MEAN)
    assert ranked[0] == 11  # return count
    assert ranked.index(8) < ranked.index(10)  # count += 1 flows into the return; log = len(seen) does not
    assert ranked.index(3) < ranked.index(4)  # count = 0 before seen = set()
    assert sorted(ranked) == list(range(2, 12))  # every line is ranked, none left out


def test_the_condition_that_let_the_traceback_line_run_ranks_right_after_it() -> None:
    ranked = _ranked(CLAMP, hot=frozenset({4}))
    assert ranked[:2] == (4, 3)
    assert ranked.index(3) < ranked.index(2)  # the condition before an unrelated literal
