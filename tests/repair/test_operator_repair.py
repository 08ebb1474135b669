"""The operator phase of guided repair: the failing test is traced in the scratch copy and general
edit operators at the lines it ran fix a bug with no model candidate at all; the checks decide."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from protoagent.checks.types import CheckSpec
from protoagent.processes.runner import ProcessRegistry
from protoagent.processes.sandbox import select_sandbox
from protoagent.repair.localize import SourceFunction
from protoagent.repair.operators import line_candidates, parts, pools
from protoagent.repair.scratch import ScratchWorkspace
from protoagent.repair.trace import executed_lines

from .support import DATES, ended, repo, small_run

OLD = "    return int(year), int(day), int(month)"
RIGHT = "    return int(year), int(month), int(day)"
BRANCHES = """def label(n):
    if n > 0:
        kind = "positive"
    else:
        kind = "other"
    return kind
"""


def test_a_bug_report_is_fixed_by_an_operator_at_a_traced_line_with_no_model_candidate(tmp_path: Path) -> None:
    objective = "parse_date('2024-03-15') returns (2024, 15, 3) instead of (2024, 3, 15)"
    report, events, root = small_run(tmp_path, objective, [], surface=None)  # the model proposes nothing
    tried = [e.payload for e in events if e.type == "repair.candidate"]
    assert tried and tried[-1]["passed"] and [t["passed"] for t in tried[:-1]] == [False] * (len(tried) - 1)
    assert {t["line"] for t in tried} <= {6, 7}  # only the lines the failing test ran
    assert tried[-1]["new"] == RIGHT
    [edit] = ended(events, "edit_file")
    assert (edit.agent, edit.payload["status"]) == ("coder", "ok")
    assert (root / "dates.py").read_text() == DATES.replace(OLD, RIGHT)
    # The tests the repair fixed support a bug report that has no verb.
    assert report.evidence.verified and report.evidence.criteria_supported
    assert sorted(p.name for p in root.iterdir() if p.name != ".git") == ["dates.py", "test_dates.py"]


def test_the_trace_holds_only_lines_the_failing_test_ran_and_the_types_of_their_locals(tmp_path: Path) -> None:
    test = "from branches import label\n\n\ndef test_label():\n    assert label(3) == 'other'\n"
    root = repo(tmp_path, {"branches.py": BRANCHES, "test_branches.py": test})
    check = CheckSpec("pytest", (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"))
    sandbox = select_sandbox("auto")  # the run's sandbox: the trace is written inside the scratch copy
    with ScratchWorkspace(root, sys.executable, sandbox, processes=ProcessRegistry()) as scratch:
        executed = asyncio.run(executed_lines(scratch, check, ["test_branches.py::test_label"]))
        leftover = sorted(p.name for p in scratch.root.iterdir())
    assert executed is not None
    assert executed.ran("branches.py") - {1} == {2, 3, 6}  # the call (its def line) and what ran: no else
    assert executed.names_at("branches.py", 6) == {"n": "int", "kind": "str"}
    assert leftover == ["branches.py", "test_branches.py"]


def test_operators_change_one_part_and_names_keep_their_type() -> None:
    function = SourceFunction("b.py", "label", 1, tuple(BRANCHES.splitlines()), (2, 3, 5, 6))
    pool = pools(function, BRANCHES)
    condition = {c.edit.new.strip() for c in line_candidates(function, 2, pool)}
    assert {"if n < 0:", "if n <= 0:", "if n > 1:", "if n > -1:", "if not n > 0:"} <= condition
    assigned = {c.edit.new.strip() for c in line_candidates(function, 3, pool)}
    assert 'kind = "other"' in assigned  # another literal of the function
    assert not any(a.startswith("n =") for a in assigned)  # an assignment's target stays
    returned = {c.edit.new.strip() for c in line_candidates(function, 6, pool, {"n": "int", "kind": "str"})}
    assert "return n" not in returned  # a name of another type is not offered
    fstring = [p.text for p in parts('    return f".dev{parsed.post}"') if p.kind in ("fpiece", "name", "attr")]
    assert fstring == [".dev", "parsed", "post"]
