"""The three hooks mounted on a real session: requests shaped at the boundary, the log untouched."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path

from protoagent.agents.loop import AgentLoop
from protoagent.agents.presets import Preset
from protoagent.agents.session import AgentSession, SessionSpec
from protoagent.context.admission import TASK_RECORD_MARK
from protoagent.context.projection import settings_for
from protoagent.context.tokens import EstimatingCounter, estimate_request
from protoagent.events import MemoryStore, derive_messages
from protoagent.hooks.admission import ContextAdmissionHook
from protoagent.hooks.compact_protocol import CompactProtocolHook, WorkerCard
from protoagent.hooks.projection import ToolContextProjectionHook
from protoagent.testing import ScriptedModel, final_turn, tool_turn

from .support import BigReadTool, big, payloads


def test_hooks_shape_requests_and_leave_the_log_unchanged(tmp_path: Path) -> None:
    first = [tool_turn("read_file", path=f"f{n}.py") for n in range(7)] + [final_turn("read the first half")]
    turns = first + [tool_turn("read_file", path=f"f{n}.py") for n in range(7, 9)] + [final_turn("done")]
    model = ScriptedModel.from_lines(turns)
    preset = Preset("small-coder", "Edit what the task asks.", ("read_file",), max_steps=20, profile="small")
    tools = [BigReadTool()]
    spec = SessionSpec(
        repo=tmp_path, model="scripted:inline", store=MemoryStore(), preset=preset, approval="auto", provider=model
    )
    spec.tools = tools
    session = AgentSession.create(spec)
    compact = CompactProtocolHook(identity="You are ProtoAgent's Coder.", cards=[WorkerCard("coder", "task", "edits")])
    admission = ContextAdmissionHook(window=4500, profile="small", task_record=lambda _tools: "goal: read all files")
    for registration in (
        admission.registration(),
        ToolContextProjectionHook.for_tools(tools, settings_for("small", 4500)).registration(),
        compact.registration(),
    ):
        session.hooks.register(registration)
    assert session.hooks.owners == ["tool-context-projection", "compact-protocol", "context-admission"]

    loop = AgentLoop(session)
    assert asyncio.run(loop.run_turn("TASK: read the files")).status == "completed"
    assert asyncio.run(loop.run_turn("TASK: read the rest")).status == "completed"
    events = session.log.events
    frozen = copy.deepcopy(payloads(events))

    last = model.requests[-1]
    assert last.system.startswith("You are ProtoAgent's Coder.\nEdit what the task asks.")
    assert last.messages[0].content == "TASK: read the files"
    assert last.messages[1].content == f"{TASK_RECORD_MARK}\ngoal: read all files"
    receipts = [m.content for m in last.messages if m.content.startswith("[projected result of read_file")]
    assert receipts and all('to see it again: re-run read_file(path="f' in r for r in receipts)
    # The current turn's reads stay exact.
    assert [m.content for m in last.messages if m.role == "tool"][-2:] == [big(f"f{n}.py") for n in range(7, 9)]
    assert estimate_request(last, EstimatingCounter(), output_reserve=1024).total <= 4500
    # The durable history keeps every exact output.
    exact = [m.content for m in derive_messages(events) if m.role == "tool"]
    assert exact == [big(f"f{n}.py") for n in range(9)]
    assert payloads(session.log.events) == frozen
