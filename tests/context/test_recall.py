"""``recall``: a recorded result again by call id, from its artifact when it has one, in bounded pages."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel

from protoagent.agents.loop import AgentLoop
from protoagent.agents.presets import Preset
from protoagent.agents.session import AgentSession, SessionSpec
from protoagent.events import Event, MemoryStore
from protoagent.hooks.projection import ToolContextProjectionHook
from protoagent.testing import ScriptedModel, final_turn
from protoagent.tools.base import AnyTool, Prepared, Tool, ToolContext, ToolMetadata, ToolOutput
from protoagent.tools.recall import RecallTool

FULL_LOG = "".join(f"log line {n:05d}\n" for n in range(2000))
"""32,000 characters: more than one standard recall page (12,000)."""


class NoArgs(BaseModel):
    pass


class LongCommand(Tool[NoArgs]):
    """Stands for a command whose full output is journaled to an artifact; the result shows a cut."""

    name = "long_command"
    description = "Run the long command."
    input_model = NoArgs
    metadata = ToolMetadata(effect="read")

    def prepare(self, args: NoArgs, ctx: ToolContext) -> Prepared:
        return Prepared(preview="long command", effect="read")

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        assert ctx.artifacts_dir is not None
        ctx.artifacts_dir.mkdir(parents=True, exist_ok=True)
        journal = ctx.artifacts_dir / f"{ctx.call_id}.log"
        journal.write_text(FULL_LOG)
        return ToolOutput(FULL_LOG[:200] + "[... cut; the full output is in the artifact]", artifact=str(journal))


def run_calls(tmp_path: Path, *calls: tuple[str, str, dict[str, object]]) -> list[Event]:
    turns = [{"tool_calls": [{"id": cid, "name": name, "arguments": args}]} for cid, name, args in calls]
    model = ScriptedModel.from_lines([*turns, final_turn("done")])
    tools: list[AnyTool] = [LongCommand(), RecallTool()]
    preset = Preset("ops", "Run what is asked.", ("long_command",), max_steps=10)
    spec = SessionSpec(
        repo=tmp_path, model="scripted:inline", store=MemoryStore(), preset=preset, approval="auto", provider=model
    )
    spec.tools = tools
    spec.artifacts_root = tmp_path / "artifacts"
    session = AgentSession.create(spec)
    session.hooks.register(ToolContextProjectionHook.for_tools(tools).registration())
    assert asyncio.run(AgentLoop(session).run_turn("run it")).status == "completed"
    return [e for e in session.log.events if e.type == "tool.ended" and e.payload["tool"] == "recall"]


def test_recall_reads_the_full_output_from_the_artifact_in_bounded_pages(tmp_path: Path) -> None:
    first, second = run_calls(
        tmp_path,
        ("cmd_1", "long_command", {}),
        ("r_1", "recall", {"call_id": "cmd_1"}),
        ("r_2", "recall", {"call_id": "cmd_1", "start": 12000}),
    )
    page = first.payload["output"]
    assert page.startswith(f"recalled long_command cmd_1 (ok), bytes 0-12000 of {len(FULL_LOG)}")
    assert FULL_LOG[:12000] in page and page.endswith("[more: start=12000]")
    assert FULL_LOG[12000:24000] in second.payload["output"]


def test_recall_of_an_unknown_call_id_is_feedback_the_model_can_correct(tmp_path: Path) -> None:
    (ended,) = run_calls(tmp_path, ("r_1", "recall", {"call_id": "seq 18"}))
    assert ended.payload["status"] == "rejected"
    assert "no recorded result has call id 'seq 18'" in ended.payload["output"]


def test_recall_without_an_artifact_returns_the_recorded_output(tmp_path: Path) -> None:
    first, second = run_calls(
        tmp_path,
        ("cmd_1", "long_command", {}),
        ("r_1", "recall", {"call_id": "cmd_1"}),
        ("r_2", "recall", {"call_id": "r_1"}),  # a recall result has no artifact: its recorded output comes back
    )
    recorded = first.payload["output"]
    assert second.payload["output"].startswith(f"recalled recall r_1 (ok), chars 0-12000 of {len(recorded)}")
    assert recorded[:12000] in second.payload["output"]
