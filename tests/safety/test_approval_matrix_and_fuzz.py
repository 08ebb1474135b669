"""T3 (the approval matrix) and T11 (fuzzed tool arguments and model replies)."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protoagent.agents.session import builtin_tools
from protoagent.events import MemoryStore, SessionLog
from protoagent.models.json_actions import parse_action
from protoagent.models.tool_arguments import parse_arguments
from protoagent.models.types import ToolCall, ToolSchema
from protoagent.processes.runner import ProcessRegistry
from protoagent.tools.approvals import ApprovalAnswer, ApprovalRequest, ApprovalService
from protoagent.tools.pipeline import ToolEnvironment, ToolPipeline
from protoagent.tools.registry import ToolRegistry
from protoagent.tools.services import RunServices

POLICIES = ("ask", "auto-edit", "auto", "deny", "never")
PROCESSES = ProcessRegistry()


def _pipeline(root: Path, policy: str, tty: bool) -> ToolPipeline:
    async def refuse(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer.deny("the person said no")

    log = SessionLog(MemoryStore(), "s_safety")
    log.append("session.created", {"preset": "t", "model": "scripted", "root": str(root), "approval_policy": policy})
    approvals = ApprovalService(policy, refuse if tty else None)  # type: ignore[arg-type]
    env = ToolEnvironment(root, root.parent / f"{root.name}-artifacts", RunServices(processes=PROCESSES))
    return ToolPipeline(ToolRegistry(builtin_tools()), approvals, log, env)


def _effect_call(effect: str, target: Path) -> ToolCall:
    if effect == "write":
        return ToolCall("c1", "create_file", {"path": str(target), "content": "made\n"})
    return ToolCall("c1", "execute_command", {"argv": ["touch", str(target)]})


def test_approval_matrix_a_denial_never_runs_and_the_file_never_exists(tmp_path: Path) -> None:
    combos = list(itertools.product(POLICIES, ("write", "execute"), (True, False), ("inside", "outside")))
    denials = 0
    for index, (policy, effect, tty, where) in enumerate(combos):
        root = (tmp_path / f"ws{index}").resolve()
        root.mkdir()
        target = root / "made.txt" if where == "inside" else tmp_path / f"outside{index}.txt"
        pipeline = _pipeline(root, policy, tty)
        result = asyncio.run(pipeline.run(_effect_call(effect, target)))
        if result.status in ("denied", "rejected"):
            denials += 1
            assert not target.exists(), (policy, effect, tty, where)
            started = [e for e in pipeline.log.events if e.type == "process.started"]
            assert started == [], (policy, effect, tty, where)
        if policy == "auto" and effect == "execute":
            # A command allowed inside the workspace can still name outside paths; confining
            # what it writes is the sandbox's job (T2), not the approval policy's.
            continue
        if where == "outside":
            assert not target.exists(), (policy, effect, tty, where)
        if policy in ("deny", "never", "ask") or where == "outside":
            assert result.status in ("denied", "rejected"), (policy, effect, tty, where, result.output)
        if policy == "auto" and effect == "write" and where == "inside":
            assert result.status == "ok" and target.exists()
    PROCESSES.shutdown()
    print(f"T3 approval matrix: {len(combos)} combinations, {denials} denied, 0 denied effects ran")


READ = ToolSchema("read_file", "read", {"type": "object", "properties": {"path": {"type": "string"}}})
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
TOOL_NAMES = [tool.name for tool in builtin_tools()]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=st.text(max_size=200) | JSON_VALUES.map(json.dumps) | st.integers(1, 3000).map(lambda n: "[" * n))
def test_fuzzed_model_replies_never_raise(raw: str) -> None:
    parsed = parse_arguments(raw)
    assert isinstance(parsed, dict)
    turn = parse_action(raw, [READ])
    assert isinstance(turn.text, str)


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz").resolve()
    (root / "a.py").write_text("x = 1\n")
    return root


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(TOOL_NAMES) | st.text(max_size=20),
    arguments=st.dictionaries(st.text(max_size=12), JSON_VALUES, max_size=5),
)
def test_fuzzed_tool_arguments_are_results_never_exceptions(fuzz_root: Path, name: str, arguments: Any) -> None:
    pipeline = _pipeline(fuzz_root, "deny", False)
    result = asyncio.run(pipeline.run(ToolCall("c1", name, arguments)))
    assert result.status in ("ok", "error", "denied", "rejected")
    assert [e.type for e in pipeline.log.events][-1] == "tool.ended"
