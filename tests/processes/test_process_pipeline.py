"""The process tools inside the real tool pipeline: exact previews, rejections before approval,
and the artifact locator on the result event (including a person's ``!command``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from protoagent.events import MemoryStore, SessionLog
from protoagent.models.types import ToolCall
from protoagent.processes import PROCESS_TOOLS, ProcessRegistry, user_shell_call
from protoagent.tools.approvals import ApprovalAnswer, ApprovalRequest, ApprovalService
from protoagent.tools.pipeline import ToolEnvironment, ToolPipeline
from protoagent.tools.registry import ToolRegistry
from protoagent.tools.services import RunServices


class Recorder:
    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        return ApprovalAnswer(True, "test allows")


def make_pipeline(workspace: Path, artifacts: Path, registry: ProcessRegistry, answerer: Recorder) -> ToolPipeline:
    log = SessionLog(MemoryStore(), "s_processes")
    log.append(
        "session.created", {"preset": "t", "model": "scripted", "root": str(workspace), "approval_policy": "ask"}
    )
    tools = ToolRegistry([cls() for cls in PROCESS_TOOLS])
    env = ToolEnvironment(workspace, artifacts, RunServices(processes=registry))
    return ToolPipeline(tools, ApprovalService("ask", answerer), log, env)


def test_user_command_runs_through_the_pipeline_with_its_artifact(
    workspace: Path, tmp_path: Path, registry: ProcessRegistry
) -> None:
    answerer = Recorder()
    pipeline = make_pipeline(workspace, tmp_path / "artifacts", registry, answerer)
    name, arguments = user_shell_call("!echo from-user")
    result = asyncio.run(pipeline.run(ToolCall("u1", name, arguments)))
    assert result.status == "ok"
    assert result.output == "exit code: 0\nfrom-user\n"
    assert "sandbox: none" in answerer.requests[0].preview.splitlines()
    ended = pipeline.log.last("tool.ended")
    assert ended is not None
    assert ended.payload["artifact"] == ended.payload["data"]["artifact"] == result.artifact
    assert result.artifact is None  # output that fits the inline limit is all in the event: no file
    name, arguments = user_shell_call("!seq 1 3000")
    long = asyncio.run(pipeline.run(ToolCall("u2", name, arguments)))
    ended = pipeline.log.last("tool.ended")
    assert ended is not None and ended.payload["artifact"] == long.artifact
    assert long.artifact is not None and Path(long.artifact).read_text() == "".join(f"{i}\n" for i in range(1, 3001))


def test_rejected_command_asks_no_approval_and_starts_nothing(
    workspace: Path, tmp_path: Path, registry: ProcessRegistry
) -> None:
    answerer = Recorder()
    pipeline = make_pipeline(workspace, tmp_path / "artifacts", registry, answerer)
    call = ToolCall("c1", "execute_command", {"argv": ["no-such-program-protoagent"]})
    result = asyncio.run(pipeline.run(call))
    assert result.status == "rejected"
    assert answerer.requests == []
    assert "approval.requested" not in [event.type for event in pipeline.log.events]
    assert registry.live() == []
    assert not (tmp_path / "artifacts" / "processes").exists()
