"""``recall``: a recorded tool result again, by its call id (what a projected receipt points to).

Read-only. The result comes from the call's ``tool.ended`` event, or from its artifact (a
command's full output journal) when the event names one inside this session's artifact
folder. Output is bounded per request; ``start`` pages through a long result. The session
wiring puts the ``SessionLog`` into ``RunServices.session_log``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel, Field

from protoagent.errors import ConfigError, ToolRejected
from protoagent.events.catalog import ToolEnded
from protoagent.events.log import SessionLog
from protoagent.events.queries import facts
from protoagent.tools.base import AnyTool, Prepared, Tool, ToolContext, ToolMetadata, ToolOutput

RECALL_CHARS = {"small": 3000, "standard": 12_000}
"""Characters one recall returns, per profile."""


class RecallInput(BaseModel):
    # No field descriptions: the schema is declared on every later request, and the receipt
    # and the ``[more: start=N]`` line already show the exact arguments to pass.
    call_id: str
    start: int = Field(0, ge=0)


def _ended(log: SessionLog, call_id: str, agent: str) -> ToolEnded:
    found: ToolEnded | None = None
    for event, ended in facts(log.events, ToolEnded):
        if ended.call_id == call_id:
            if event.agent == agent:
                return ended
            found = found or ended
    if found is None:
        raise ToolRejected(f"no recorded result has call id {call_id!r}; copy it from a receipt", kind="unknown_call")
    return found


def _artifact(ended: ToolEnded, folder: Path | None) -> Path | None:
    """The result's artifact file when it lies inside this session's artifact folder."""
    locator = ended.artifact
    if not locator or folder is None:
        return None
    path = Path(locator).resolve()
    inside = path.is_relative_to(folder.resolve())
    return path if inside and path.is_file() else None


def _read_artifact(path: Path, start: int, limit: int) -> tuple[str, int]:
    """``limit`` bytes from ``start`` (decoded leniently) and the artifact's size in bytes."""
    with path.open("rb") as handle:
        handle.seek(start)
        data = handle.read(limit)
    return data.decode("utf-8", errors="replace"), path.stat().st_size


class RecallTool(Tool[RecallInput]):
    name = "recall"
    description = "Show a projected tool result again, by its call id."
    metadata = ToolMetadata(effect="read")

    def prepare(self, args: RecallInput, ctx: ToolContext) -> Prepared:
        log = ctx.services.session_log
        if log is None:
            raise ConfigError("the session wiring must put the SessionLog into RunServices.session_log")
        ended = _ended(log, args.call_id, ctx.agent_role)
        return Prepared(preview=f"recall {args.call_id}", effect="read", state=(ended, args.start))

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        ended, start = prepared.state
        limit = RECALL_CHARS[ctx.profile]
        artifact = _artifact(ended, ctx.artifacts_dir)
        if artifact is not None:
            text, total = await asyncio.to_thread(_read_artifact, artifact, start, limit)
            unit = "bytes"
        else:
            output = ended.output
            text, total, unit = output[start : start + limit], len(output), "chars"
        end = min(start + limit, total)
        header = f"recalled {ended.tool} {ended.call_id} ({ended.status}), "
        header += f"{unit} {start}-{end} of {total}; recorded output, files may have changed since"
        more = f"\n[more: start={end}]" if end < total else ""
        data = {"call_id": ended.call_id, "start": start, "end": end, "total": total, "unit": unit}
        return ToolOutput(f"{header}\n{text}{more}", data=data)


RECALL_TOOLS: tuple[type[AnyTool], ...] = (RecallTool,)
