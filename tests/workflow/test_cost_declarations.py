"""The lead's tool declarations are lean: only the tools its phase can use, and a pinned byte size
on the bundled example's editing surface (issue: cost of real work, lean tool declarations)."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Sequence
from pathlib import Path

from protoagent.events import MemoryStore
from protoagent.models.openai_compat import build_request
from protoagent.models.types import ModelRequest
from protoagent.testing import ScriptedModel
from protoagent.workflow.run import RunOptions, run_task

from .support import call, fix_turns, run_workflow, say
from .test_example_request_count import EXAMPLE, OBJECTIVE, _capable_model_script

MAX_ARCHITECT_TOOL_BYTES = 3_400
"""Compact JSON of the Architect's ``tools`` array in its first request on the bundled example
(5,450 before the cut; the issue's target is 2,500, see bench/bench_tool_declarations.py)."""
MAX_HAPPY_PATH_BYTES = 11_500
"""Both request bodies of the bundled example's happy path (10,972 bytes after the cut; the
request-count test's ceiling is 27,300, 1.2x mini-swe-agent)."""


def _declared(requests: Sequence[ModelRequest]) -> list[set[str]]:
    return [{t.name for t in r.tools} for r in requests]


def test_review_criteria_is_declared_only_in_the_closing_review_and_every_other_declaration_stays_put(
    tmp_path: Path,
) -> None:
    review = {"name": "review_criteria", "arguments": {"met": [2], "note": "the bullet is there"}}
    turns = [
        call("plan_task", "architect", criteria=["unittest passes", "CHANGELOG.md gets a bullet"]),
        call("coder", "architect", task="fix the swapped return in dates.py and add a CHANGELOG.md bullet"),
        *fix_turns()[:2],
        call("create_file", "coder", path="CHANGELOG.md", content="- parse_date keeps the month\n"),
        call("report_task", "coder", status="done", summary="fixed and logged"),
        call("run_check", "architect", check_id="unittest", phase="verify"),
        {"role": "architect", "tool_calls": [review]},
    ]
    run = run_workflow(tmp_path, "fix the failing date parser test", turns)
    *working, closing = run.requests("architect")
    assert len(working) == 3 and run.model.remaining == 0
    assert all(r.tools == working[0].tools for r in working)  # a byte-stable prefix for prompt caches
    assert "review_criteria" not in {t.name for t in working[0].tools}
    assert {t.name for t in closing.tools} == {t.name for t in working[0].tools} | {"review_criteria"}
    assert run.json["status"] == "completed"


def test_task_status_and_worker_packet_are_not_declared_by_default(tmp_path: Path) -> None:
    run = run_workflow(tmp_path, "fix the failing date parser test", [say("Nothing.", "architect")])
    (declared,) = _declared(run.requests("architect"))
    assert not declared & {"task_status", "worker_packet"}
    assert {"coder", "run_check", "read_file", "plan_task"} <= declared


def test_the_bundled_examples_declarations_and_requests_stay_within_their_pinned_bytes(tmp_path: Path) -> None:
    repo = tmp_path / "date-parser"
    shutil.copytree(EXAMPLE, repo)
    model = ScriptedModel.from_lines(_capable_model_script((repo / "dates.py").read_text()))
    options = RunOptions(
        repo=repo,
        model="scripted:inline",
        store=MemoryStore(),
        approval="auto",
        provider=model,
        artifacts_root=tmp_path / "artifacts",
        data_home=tmp_path / "home",
    )
    asyncio.run(run_task(OBJECTIVE, options))
    bodies = [build_request(r, "m", max_tokens_field="max_tokens", json_format="json_object") for r in model.requests]
    assert [r.agent_role for r in model.requests] == ["architect", "coder"]
    size = len(json.dumps(bodies[0]["tools"], separators=(",", ":")))
    assert size <= MAX_ARCHITECT_TOOL_BYTES, size
    total = sum(len(json.dumps(b, separators=(",", ":"))) for b in bodies)
    assert total <= MAX_HAPPY_PATH_BYTES, total
