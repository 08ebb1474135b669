"""A varied session run through the real loop records the same events and derives the same
messages as the session recorded before the per-step cost work (grouped commits, lazily created
artifacts, supervisor-thread pumping), except for the one documented change: a command whose
whole output fits its inline limit (and is UTF-8) names no artifact file.

Regenerate the recording (only when events change on purpose) with
``python -m tests.perf.test_step_equivalence`` from the repository root.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from protoagent.agents.presets import get_preset
from protoagent.api import HOME_ENV
from protoagent.events import SQLiteStore, derive_messages
from protoagent.events.types import Event
from protoagent.testing import ScriptedModel, final_turn, make_repo, tool_turn
from protoagent.testing.agent_turn import run_preset_turn

RECORDING = Path(__file__).parent / "recorded_varied_steps.json"
_PROCESS_ID = re.compile(r"p_[0-9a-f]{8}")


def varied_turns() -> list[dict[str, Any]]:
    """Shell and argv commands (small, failing, large, binary output), file reads and writes,
    an unknown tool, invalid arguments and text before a call."""
    big = "i=0; while [ $i -lt 3000 ]; do echo line-$i; i=$((i+1)); done"
    return [
        tool_turn("shell", say="looking", command="echo hi"),
        tool_turn("shell", command=big),
        tool_turn("execute_command", argv=["/bin/sh", "-c", "echo out; echo err >&2; exit 3"]),
        tool_turn("shell", command="printf 'a\\377b\\n'"),
        tool_turn("read_file", path="README.md"),
        tool_turn("create_file", path="notes.txt", content="one\n"),
        tool_turn("no_such_tool", x=1),
        tool_turn("shell", command="echo x", yield_time_ms=-1),
        tool_turn("shell", command="cat notes.txt"),
        final_turn("done"),
    ]


def run_varied_session(tmp: Path) -> list[Event]:
    repo = make_repo(tmp / "repo", {"README.md": "bench\n"}, git=False)
    os.environ[HOME_ENV] = str(tmp / "home")
    preset = replace(get_preset("coding"), max_steps=20)
    with SQLiteStore(tmp / "varied.sqlite") as store:
        session_id, outcome = asyncio.run(
            run_preset_turn(
                "vary",
                repo=repo,
                model="scripted:varied",
                store=store,
                approval="auto",
                preset=preset,
                provider=ScriptedModel.from_lines(varied_turns()),
                sandbox="off",
                artifacts_root=tmp / "home" / "artifacts",
            )
        )
        assert outcome.status == "completed", outcome
        return store.load(session_id)


def normalized(events: list[Event], tmp: Path) -> list[dict[str, Any]]:
    """Events without what differs from run to run: times, ids, durations and temp paths."""
    text = json.dumps([e.model_dump(exclude={"time", "session_id"}) for e in events])
    text = text.replace(str(tmp), "<tmp>").replace(str(Path(sys.executable).parent), "<venv-bin>")
    text = _PROCESS_ID.sub("<process>", text)
    text = re.sub(r"s_[0-9a-f]{12}", "<session>", text)
    text = re.sub(r'"duration_s": [0-9.e-]+', '"duration_s": 0', text)
    loaded: list[dict[str, Any]] = json.loads(text)
    return loaded


def without_inline_artifacts(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The documented change: a command output shown whole and decoded cleanly names no artifact."""
    changed: list[dict[str, Any]] = json.loads(json.dumps(events))
    for event in changed:
        payload = event["payload"]
        data = payload.get("data") or {}
        if event["type"] != "tool.ended" or "observed_bytes" not in data:
            continue
        start, end = data["observed_bytes"]
        limit = 8192
        if end - start <= limit and "\ufffd" not in payload["output"]:
            payload["artifact"] = data["artifact"] = None
    return changed


@pytest.mark.slow
def test_a_varied_session_records_the_same_events_and_messages_as_before(tmp_path: Path) -> None:
    recorded = json.loads(RECORDING.read_text(encoding="utf-8"))
    events = run_varied_session(tmp_path)
    now = normalized(events, tmp_path)
    assert [e["type"] for e in now] == [e["type"] for e in recorded]
    assert now == without_inline_artifacts(recorded)
    old_messages = derive_messages([Event.model_validate({**e, "time": 0.0, "session_id": "s"}) for e in recorded])
    new_messages = derive_messages([Event.model_validate({**e, "time": 0.0, "session_id": "s"}) for e in now])
    assert new_messages == old_messages
    artifacts = [e["payload"]["artifact"] for e in now if e["type"] == "tool.ended"]
    assert sum(a is not None for a in artifacts) == 2, artifacts  # the large and the binary output
    for event in events:
        locator = event.payload.get("artifact") if event.type == "tool.ended" else None
        if locator is not None:
            assert Path(locator).is_file(), locator


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as raw:
        base = Path(raw).resolve()
        RECORDING.write_text(json.dumps(normalized(run_varied_session(base), base), indent=1) + "\n")
    print(f"wrote {RECORDING}")
