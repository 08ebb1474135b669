"""The lead's tool declarations are lean: only the tools its phase can use, and a pinned byte size
on the bundled example's editing surface (issue: cost of real work, lean tool declarations)."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from protoagent.events import MemoryStore
from protoagent.models.openai_compat import build_request
from protoagent.models.types import ModelRequest
from protoagent.testing import ScriptedModel
from protoagent.workflow.run import RunOptions, run_task

from .support import DATE_REPO, call, fix_turns, run_workflow, say
from .test_example_request_count import EXAMPLE, OBJECTIVE, _capable_model_script

MAX_ARCHITECT_TOOL_BYTES = 2_460
"""Compact JSON of the Architect's ``tools`` array in every request on the bundled example: 2,454
bytes under the one declaration rule (3,319 before it, 5,450 before the first cut; the issue's
target is 2,500, see bench/bench_tool_declarations.py)."""
MAX_CODER_TOOL_BYTES = 1_880
"""The Coder's ``tools`` array: 1,873 bytes with edit_file's append (1,874 before it, 1,940 before the
declaration rule)."""
MAX_HAPPY_PATH_BYTES = 10_250
"""Both request bodies of the bundled example's happy path, the workspace path written as ``/repo``:
10,205 bytes (10,212 before the Architect was told when to leave the Tester out; 11,148 with the
path as it was, before the declaration rule; 11,500 was the pin; the
request-count test's ceiling is 27,300, 1.2x mini-swe-agent)."""


def _declared(requests: Sequence[ModelRequest]) -> list[set[str]]:
    return [{t.name for t in r.tools} for r in requests]


def _body(request: ModelRequest) -> dict[str, Any]:
    return build_request(request, "m", max_tokens_field="max_tokens", json_format="json_object")


def _tool_bytes(request: ModelRequest) -> int:
    return len(json.dumps(_body(request)["tools"], separators=(",", ":")))


def test_review_criteria_is_declared_only_in_the_closing_review_which_declares_what_a_review_uses(
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
    assert _tool_bytes(working[0]) <= MAX_ARCHITECT_TOOL_BYTES  # so every working request is within the pin
    assert "review_criteria" not in {t.name for t in working[0].tools}
    # The closing request (a fresh conversation) declares only what a review can use.
    assert {t.name for t in closing.tools} == {"review_criteria", "coder", "run_check", "read_file"}
    assert _tool_bytes(closing) < _tool_bytes(working[0]) // 2
    assert run.json["status"] == "completed"


def test_task_status_worker_packet_and_explorer_are_not_declared_by_default(tmp_path: Path) -> None:
    run = run_workflow(tmp_path, "fix the failing date parser test", [say("Nothing.", "architect")])
    (declared,) = _declared(run.requests("architect"))
    assert not declared & {"task_status", "worker_packet", "explorer"}
    assert {"coder", "run_check", "read_file", "plan_task", "skill"} <= declared  # skill: the bundled catalog
    assert "explorer" not in run.requests("architect")[0].system  # no prompt names a tool not offered


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
    assert [r.agent_role for r in model.requests] == ["architect", "coder"]
    architect, coder = model.requests
    assert _tool_bytes(architect) <= MAX_ARCHITECT_TOOL_BYTES, _tool_bytes(architect)
    assert _tool_bytes(coder) <= MAX_CODER_TOOL_BYTES, _tool_bytes(coder)
    total = sum(len(json.dumps(_body(r), separators=(",", ":")).replace(str(repo), "/repo")) for r in model.requests)
    assert total <= MAX_HAPPY_PATH_BYTES, total


def test_an_argument_left_undeclared_still_validates_a_missing_one_gets_its_default_and_a_timeout_is_told(
    tmp_path: Path,
) -> None:
    show = "import os, sys; print(os.environ.get('MODE'), os.getcwd().endswith('sub'), len(sys.argv))"
    turns = [
        call("execute_command", "architect", argv=["python", "-c", show], cwd="sub", env={"MODE": "lean"}),
        call("execute_command", "architect", argv=["python", "-c", "print('x' * 3000)"], output_limit=100),
        call("execute_command", "architect", argv=["python", "-c", "import time; time.sleep(30)"], timeout=0.5),
        say("Looked.", "architect"),
    ]
    run = run_workflow(tmp_path, "what does MODE say here?", turns, files={"sub/keep.txt": "k\n"}, surface="editing")
    declared = run.requests("architect")[0].tools
    execute = next(t for t in declared if t.name == "execute_command")
    assert execute.parameters == {
        "properties": {"argv": {"items": {"type": "string"}, "type": "array"}},
        "required": ["argv"],
        "type": "object",
    }
    shown, cut, slow = (e.payload for e in run.ended("execute_command"))
    assert shown["status"] == "ok" and "lean True 1" in shown["output"], shown
    assert cut["status"] == "ok" and "bytes omitted" in cut["output"] and len(cut["output"]) < 1_000, cut
    assert Path(cut["data"]["cwd"]) == run.root.resolve()  # cwd left out: its default, the workspace root
    assert slow["status"] == "error" and "timed out after 0.5 s" in slow["output"]
    assert "pass timeout (seconds, at most 3600)" in slow["output"]


def test_skill_is_declared_only_when_the_lead_may_load_a_skill(tmp_path: Path) -> None:
    manual = "policy:\n  allow_implicit_invocation: false\n"
    files = {**DATE_REPO}
    for name in ("code-review", "debug-failing-test", "regression-test"):  # shadow the bundled ones
        files[f".agents/skills/{name}/SKILL.md"] = f"---\nname: {name}\ndescription: Only on request.\n---\nSteps.\n"
        files[f".agents/skills/{name}/agents/openai.yaml"] = manual
    quiet = run_workflow(tmp_path / "quiet", "fix the failing date parser test", [say("No.", "architect")], files=files)
    assert "skill" not in _declared(quiet.requests("architect"))[0]
    named = run_workflow(
        tmp_path / "named", "$code-review the date parser", [say("Reviewed.", "architect")], files=files
    )
    assert "skill" in _declared(named.requests("architect"))[0]  # a named skill's resources need the tool
