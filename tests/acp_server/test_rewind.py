"""``/rewind`` over ACP, as an editor sends it: the package's client over stdio, a session the CLI
recorded in three turns. A refusal lists the file changed outside the session and changes
nothing; a rewind to turn 1 puts the files back byte for byte and says what it restored and hid."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from acp import text_block
from tests.checkpoints.support import three_turn_session

from protoagent.api import open_store
from protoagent.events.messages import derive_messages
from protoagent.testing import final_turn, write_script

from .support import RecordingClient, acp_agent


def _tree(repo: Path) -> dict[str, bytes]:
    files = [p for p in sorted(repo.rglob("*")) if p.is_file() and ".git" not in p.parts]
    return {str(p.relative_to(repo)): p.read_bytes() for p in files}


def _rewound_events(home: Path, session_id: str) -> list[dict[str, object]]:
    with open_store(home) as store:
        return [e.payload for e in store.load(session_id) if e.type == "session.rewound"]


def _lead_history(home: Path, session_id: str) -> str:
    """What the lead's next request would carry, derived from the log."""
    with open_store(home) as store:
        return str(derive_messages(store.load(session_id), "architect"))


def test_acp_rewind_refuses_over_outside_work_then_restores_turn_1_and_says_what_it_hid(tmp_path: Path) -> None:
    home, repo, sid = three_turn_session(tmp_path)
    clean = tmp_path / "expected"
    subprocess.run(["git", "clone", "-q", str(repo), str(clean)], check=True)
    (clean / "a.py").write_text("A = 2\n")
    script = write_script(tmp_path / "s.jsonl", [final_turn("Noted.", role="architect")])
    client = RecordingClient()
    before: dict[str, bytes] = {}

    async def scenario() -> list[str]:
        async with acp_agent(home, script, client) as (conn, _):
            fresh = await conn.new_session(cwd=str(repo))
            said = [await _say(conn, client, fresh.session_id, "/rewind 1")]
            await conn.load_session(cwd=str(repo), session_id=sid)
            said.append(await _say(conn, client, sid, "/rewind sideways"))
            (repo / "c.py").write_text("C = 'mine'\n")  # someone else's work since the session wrote it
            before.update(_tree(repo))
            said.append(await _say(conn, client, sid, "/rewind 1 both"))
            (repo / "c.py").write_text("C = 2\n")  # the image the session left
            said.append(await _say(conn, client, sid, "/rewind 1"))
            return said

    fresh, unknown, refused, done = asyncio.run(scenario())
    assert fresh == "nothing to rewind yet: send a message first"
    assert "/rewind takes a turn number" in unknown and "'sideways'" in unknown
    assert refused.startswith("rewind refused, nothing was changed") and "c.py changed outside the session" in refused
    assert before["c.py"] == b"C = 'mine'\n"
    assert done.splitlines()[:3] == [
        f"rewound {sid} to turn 1 (both)",
        "restored: a.py, c.py; removed: b.py",
        "the model no longer sees turns 2, 3 (the log keeps them)",
    ], done
    assert _tree(repo) == _tree(clean), "the files are byte-equal to turn 1's state"
    [rewound] = _rewound_events(home, sid)
    assert rewound["hidden_turns"] == [2, 3], "the refusal recorded nothing; the rewind one event"
    history = _lead_history(home, sid)
    assert "set A to 2" in history and "set A to 3 and add b.py" not in history and "set C to 2" not in history
    advertised = client.of("available_commands_update")
    names = {c.name: c for c in advertised[0].available_commands}
    assert "rewind" in names and names["rewind"].input is not None
    assert names["rewind"].input.root.hint == "[N|verified] [code|conversation|both]"


async def _say(conn: object, client: RecordingClient, session_id: str, text: str) -> str:
    """Send ``text`` as a prompt; the agent's one reply to it."""
    seen = len(client.of("agent_message_chunk"))
    response = await asyncio.wait_for(
        conn.prompt(session_id=session_id, prompt=[text_block(text)]),  # type: ignore[attr-defined]
        60,
    )
    assert str(response.stop_reason) == "end_turn"
    replies = client.of("agent_message_chunk")[seen:]
    assert len(replies) == 1, [r.content.text for r in replies]
    return str(replies[0].content.text)
