"""Approval choices every interface offers: allow once, allow for this session, deny with a reason."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

import pytest

from protoagent.agents.session import builtin_tools
from protoagent.events import MemoryStore, SessionLog
from protoagent.interfaces.cli.render import answer_from_reply
from protoagent.models.types import ToolCall
from protoagent.processes.runner import ProcessRegistry
from protoagent.tools.approvals import (
    ApprovalAnswer,
    ApprovalRequest,
    ApprovalService,
    GrantError,
    SessionRule,
    rules_from_events,
)
from protoagent.tools.pipeline import Guard, GuardInput, ToolEnvironment, ToolPipeline
from protoagent.tools.registry import ToolRegistry
from protoagent.tools.services import RunServices


class Scripted:
    """An SDK-style approval callback that replays answers and records what it was asked."""

    def __init__(self, *answers: ApprovalAnswer) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.asked.append(request)
        return self.answers.pop(0)


def pipeline_for(root: Path, service: ApprovalService, guards: list[Guard] | None = None) -> ToolPipeline:
    log = SessionLog(MemoryStore(), "s_choices")
    log.append("session.created", {"preset": "t", "model": "scripted", "root": str(root), "approval_policy": "ask"})
    env = ToolEnvironment(root, root.parent / "artifacts", RunServices(processes=ProcessRegistry()))
    return ToolPipeline(ToolRegistry(builtin_tools()), service, log, env, guards=guards or [])


def write(call_id: str, path: str, content: str, root: Path) -> ToolCall:
    """Replace the whole file at its current revision."""
    revision = hashlib.sha256((root / path).read_bytes()).hexdigest()
    return ToolCall(call_id, "replace_file", {"path": path, "content": content, "expected_revision": revision})


def command(call_id: str, *argv: str) -> ToolCall:
    return ToolCall(call_id, "execute_command", {"argv": list(argv), "env": {"PATH": "/usr/bin:/bin"}})


def run(pipeline: ToolPipeline, call: ToolCall) -> str:
    return asyncio.run(pipeline.run(call)).status


def decided(pipeline: ToolPipeline, call_id: str) -> dict[str, Any]:
    return next(
        e.payload for e in pipeline.log.events if e.type == "approval.decided" and e.payload["call_id"] == call_id
    )


def test_allow_for_session_adds_a_rule_recorded_in_the_log(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    answers = Scripted(ApprovalAnswer.for_session())
    pipeline = pipeline_for(tmp_path, ApprovalService("ask", answers))
    assert run(pipeline, write("c1", "a.txt", "one\n", tmp_path)) == "ok"
    assert run(pipeline, write("c2", "a.txt", "two\n", tmp_path)) == "ok"
    assert [r.call_id for r in answers.asked] == ["c1"]
    assert (tmp_path / "a.txt").read_text() == "two\n"
    added = [e.payload for e in pipeline.log.events if e.type == "approval.rule_added"]
    assert added == [
        {"call_id": "c1", "rule": {"tool": "replace_file", "effect": "write", "paths": ["a.txt"], "command": ""}}
    ]
    assert decided(pipeline, "c2")["source"] == "rule"
    assert decided(pipeline, "c2")["rule"]["paths"] == ["a.txt"]


def test_session_rule_covers_only_the_same_tool_and_path(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    answers = Scripted(ApprovalAnswer.for_session(), ApprovalAnswer.deny("not b"), ApprovalAnswer.deny("no edits"))
    pipeline = pipeline_for(tmp_path, ApprovalService("ask", answers))
    run(pipeline, write("c1", "a.txt", "one\n", tmp_path))
    assert run(pipeline, ToolCall("c2", "create_file", {"path": "b.txt", "content": "bee\n"})) == "denied"
    revision = hashlib.sha256(b"one\n").hexdigest()
    edit = ToolCall("c3", "edit_file", {"path": "a.txt", "old": "one\n", "new": "uno\n", "expected_revision": revision})
    assert run(pipeline, edit) == "denied"
    assert [r.call_id for r in answers.asked] == ["c1", "c2", "c3"]
    assert not (tmp_path / "b.txt").exists() and (tmp_path / "a.txt").read_text() == "one\n"


def test_session_rule_for_a_command_covers_only_the_exact_same_command(tmp_path: Path) -> None:
    answers = Scripted(ApprovalAnswer.for_session(), ApprovalAnswer.deny())
    pipeline = pipeline_for(tmp_path, ApprovalService("ask", answers))
    assert run(pipeline, command("c1", "echo", "hi")) == "ok"
    assert run(pipeline, command("c2", "echo", "hi")) == "ok"
    assert run(pipeline, command("c3", "echo", "hi", "there")) == "denied"
    assert [r.call_id for r in answers.asked] == ["c1", "c3"]
    rule = decided(pipeline, "c2")["rule"]
    assert rule["paths"] == [] and "echo hi" in rule["command"] and "sandbox:" in rule["command"]


def test_session_rule_never_widens_past_a_guard_denial(tmp_path: Path) -> None:
    frozen: list[str] = []

    def freeze(view: GuardInput) -> str | None:
        return "a.txt is frozen now" if frozen else None

    (tmp_path / "a.txt").write_text("old\n")
    answers = Scripted(ApprovalAnswer.for_session())
    pipeline = pipeline_for(tmp_path, ApprovalService("ask", answers), [freeze])
    assert run(pipeline, write("c1", "a.txt", "one\n", tmp_path)) == "ok"
    frozen.append("yes")
    result = asyncio.run(pipeline.run(write("c2", "a.txt", "two\n", tmp_path)))
    assert result.status == "denied" and "frozen" in result.output
    assert (tmp_path / "a.txt").read_text() == "one\n"


def test_session_rule_never_widens_past_the_workspace() -> None:
    answers = Scripted(ApprovalAnswer.for_session(), ApprovalAnswer.deny())
    service = ApprovalService("ask", answers)
    outside = ApprovalRequest("c1", "shell", "execute", "run: touch /etc/x", (), inside_workspace=False)
    first = asyncio.run(service.decide(outside))
    assert first.allow and first.rule is None and "allowed once only" in first.reason
    again = ApprovalRequest("c2", "shell", "execute", "run: touch /etc/x", (), inside_workspace=False)
    assert not asyncio.run(service.decide(again)).allow
    assert service.rules == ()


def test_session_rule_never_widens_past_a_deny_policy() -> None:
    service = ApprovalService("deny", Scripted())
    rule = SessionRule("write_file", "write", ("a.txt",))
    service.restore_rules([rule])
    decision = asyncio.run(service.decide(ApprovalRequest("c1", "write_file", "write", "+x", ("a.txt",))))
    assert not decision.allow and decision.source == "policy"


def test_deny_reason_is_what_the_model_sees(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    answers = Scripted(ApprovalAnswer.deny("use notes.md instead"))
    pipeline = pipeline_for(tmp_path, ApprovalService("ask", answers))
    result = asyncio.run(pipeline.run(write("c1", "a.txt", "one\n", tmp_path)))
    assert result.status == "denied" and "use notes.md instead" in result.output
    assert (tmp_path / "a.txt").read_text() == "old\n"


def test_one_time_grant_stays_consumed_under_a_session_rule() -> None:
    service = ApprovalService("ask", Scripted(ApprovalAnswer.for_session()))
    first = ApprovalRequest("c1", "write_file", "write", "+x", ("a.txt",))
    asyncio.run(service.decide(first))
    second = ApprovalRequest("c2", "write_file", "write", "+y", ("a.txt",))
    decision = asyncio.run(service.decide(second))
    assert decision.source == "rule" and decision.grant is not None
    decision.grant.consume(second)
    with pytest.raises(GrantError, match="already used"):
        decision.grant.consume(second)


def test_rules_restore_from_the_log(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    pipeline = pipeline_for(tmp_path, ApprovalService("ask", Scripted(ApprovalAnswer.for_session())))
    run(pipeline, write("c1", "a.txt", "one\n", tmp_path))
    restored = ApprovalService("ask", Scripted())
    restored.restore_rules(rules_from_events(pipeline.log.events))
    decision = asyncio.run(restored.decide(ApprovalRequest("c9", "replace_file", "write", "+z", ("a.txt",))))
    assert decision.allow and decision.source == "rule"


def test_a_denial_has_no_session_scope() -> None:
    with pytest.raises(ValueError, match="no scope"):
        ApprovalAnswer(False, "no", "session")


@pytest.mark.parametrize(
    ("reply", "allow", "scope", "reason"),
    [
        ("y", True, "once", "approved once on the terminal"),
        ("s", True, "session", "approved for this session on the terminal"),
        ("", False, "once", "declined on the terminal"),
        ("use the other file", False, "once", "declined on the terminal: use the other file"),
    ],
)
def test_terminal_reply_maps_to_the_three_choices(reply: str, allow: bool, scope: str, reason: str) -> None:
    assert answer_from_reply(reply) == ApprovalAnswer(allow, reason, scope)  # type: ignore[arg-type]
