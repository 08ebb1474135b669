"""Bytes of the tool declarations each agent's requests carry on the editing surface.

Method
------
The bundled example (``examples/date-parser``, objective "fix the failing date parser test") is
run once with the scripted capable-model answers of the pinned happy path (Architect: ``coder``
then ``run_check``; Coder: ``edit_file`` then ``report_task``), on the standard profile. Each
request is rendered as an OpenAI-compatible request body and its ``tools`` array measured as
compact JSON (``separators=(",", ":")``), per tool and in total, for the Architect's first
request and the Coder's request, beside the same figures of two earlier states: ``BEFORE_TOOLS``
(with ``code_context`` added, before task_status and worker_packet left the default offer,
review_criteria moved to the closing review and the descriptions were first cut) and
``PREVIOUS_TOOLS`` (after that first cut, before the one declaration rule of
``protoagent.models.declarations``: no defaults, bounds or patterns declared, rarely needed
arguments valid but undeclared, ``explorer`` off the Architect's default offer, shorter
descriptions). A second run of the same path, unbatched (the Architect runs its check in a
request of its own after the change), shows that every Architect request declares the same tools
(a byte-stable prefix; ``review_criteria`` joins only in the closing review request of a run whose
checks cannot see a criterion). The issue's target: every Architect request at most 2,500 bytes.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from protoagent.events import MemoryStore
from protoagent.models.openai_compat import build_request
from protoagent.models.types import ModelRequest
from protoagent.testing import ScriptedModel
from protoagent.workflow.run import RunOptions, run_task

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "date-parser"
OBJECTIVE = "fix the failing date parser test"
WRONG = "    return int(year), int(day), int(month)\n"
RIGHT = "    return int(year), int(month), int(day)\n"
TARGET = 2_500
BEFORE = {"architect": 5_264, "coder": 2_398}
"""Compact JSON bytes of the ``tools`` array when the issue was filed (before any cut)."""
BEFORE_TOOLS = {
    "architect": {
        "task_status": 146,
        "plan_task": 453,
        "read_file": 484,
        "list_directory": 286,
        "search_regex": 479,
        "code_context": 451,
        "coder": 236,
        "tester": 235,
        "explorer": 250,
        "run_check": 445,
        "execute_command": 753,
        "review_criteria": 497,
        "worker_packet": 406,
        "skill": 314,
    },
    "coder": {"read_file": 484, "edit_file": 667, "create_file": 384, "replace_file": 517, "report_task": 396},
}
"""Per tool, compact JSON bytes before the first cut (5,450 bytes for the Architect, 2,454 for Coder)."""
PREVIOUS_TOOLS = {
    "architect": {
        "plan_task": 333,
        "read_file": 294,
        "list_directory": 208,
        "search_regex": 329,
        "code_context": 422,
        "coder": 215,
        "tester": 227,
        "explorer": 226,
        "run_check": 298,
        "execute_command": 507,
        "skill": 248,
    },
    "coder": {"read_file": 294, "edit_file": 597, "create_file": 264, "replace_file": 401, "report_task": 378},
}
"""Per tool, compact JSON bytes after the first cut, before the declaration rule (3,319 and 1,940)."""
PREVIOUS_REQUEST = {"architect": 7_540, "coder": 3_608}
"""Whole request bodies of the happy path before the declaration rule (compact JSON bytes)."""


def _script(source: str, *, batched: bool = True) -> list[dict[str, Any]]:
    """The happy path; unbatched, the Architect runs its check in a second request after the change."""
    number = f"{source.splitlines(keepends=True).index(WRONG) + 1:>4}| "
    edit = {
        "path": "dates.py",
        "old": number + WRONG,
        "new": number + RIGHT,
        "expected_revision": hashlib.sha256(source.encode()).hexdigest(),
    }
    assign = {"task": "In dates.py parse_date returns (year, day, month); return (year, month, day)."}
    verify = {"name": "run_check", "arguments": {"check_id": "unittest", "phase": "verify"}}
    delegate = {"name": "coder", "arguments": assign}
    coder = {
        "role": "coder",
        "text": "",
        "tool_calls": [
            {"name": "edit_file", "arguments": edit},
            {"name": "report_task", "arguments": {"status": "done", "summary": "fixed the order"}},
        ],
    }
    if batched:
        return [{"role": "architect", "text": "", "tool_calls": [delegate, verify]}, coder]
    return [
        {"role": "architect", "text": "", "tool_calls": [delegate]},
        coder,
        {"role": "architect", "text": "", "tool_calls": [verify]},
    ]


def _compact(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":")))


def _requests(*, batched: bool) -> tuple[str, list[ModelRequest]]:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "date-parser"
        shutil.copytree(EXAMPLE, repo)
        model = ScriptedModel.from_lines(_script((repo / "dates.py").read_text(), batched=batched))
        options = RunOptions(
            repo=repo,
            model="scripted:inline",
            store=MemoryStore(),
            approval="auto",
            provider=model,
            artifacts_root=Path(tmp) / "artifacts",
            data_home=Path(tmp) / "home",
        )
        report = asyncio.run(run_task(OBJECTIVE, options))
    return report.status, model.requests


def _body(request: ModelRequest) -> dict[str, Any]:
    return build_request(request, "m", max_tokens_field="max_tokens", json_format="json_object")


def _array(sizes: dict[str, int]) -> int:
    """Compact JSON bytes of an array of declarations of these sizes (brackets and commas)."""
    return sum(sizes.values()) + len(sizes) + 1


def _row(name: str, figures: list[dict[str, int]]) -> str:
    cells = [f"{f[name]:5d}" if name in f else "    -" for f in figures]
    return f"  {cells[0]}  (previous {cells[1]}, before {cells[2]})  {name}"


def main() -> None:
    status, requests = _requests(batched=True)
    print(f"run: {status}, {len(requests)} requests")
    for role in ("architect", "coder"):
        request = next(r for r in requests if r.agent_role == role)
        body = _body(request)
        tools = body.get("tools", [])
        total = _compact(tools)
        before, previous = BEFORE_TOOLS[role], PREVIOUS_TOOLS[role]
        print(
            f"{role}: {len(tools)} tools, {total} B (previous {_array(previous)} B, "
            f"before the first cut {_array(before)} B, at the issue {BEFORE[role]} B), "
            f"whole request {_compact(body)} B (previous {PREVIOUS_REQUEST[role]} B)"
        )
        shown = {tool["function"]["name"]: _compact(tool) for tool in tools}
        for name in dict.fromkeys((*before, *previous, *shown)):
            print(_row(name, [shown, previous, before]))
    _, unbatched = _requests(batched=False)
    leads = [_body(r).get("tools", []) for r in unbatched if r.agent_role == "architect"]
    sizes = [_compact(tools) for tools in leads]
    same = all(tools == leads[0] for tools in leads)
    names = ", ".join(t["function"]["name"] for t in leads[-1])
    print(f"architect, unbatched run: {len(leads)} requests declaring {sizes} B, identical: {same}: {names}")
    met = same and max(sizes) <= TARGET
    print(f"target: every Architect request <= {TARGET} B: {'met' if met else 'not met'}")


if __name__ == "__main__":
    main()
