"""``protoagent chat`` under a real pseudo-terminal (pexpect), with the scripted model."""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from protoagent.testing import final_turn, make_repo, tool_turn, write_script

PROMPT = "you› "
BUGGY = "def parse_date(text):\n    year, month, day = text.split('-')\n    return int(year), int(day), int(month)\n"
FIXED = BUGGY.replace("int(day), int(month)", "int(month), int(day)")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"dates.py": BUGGY})


def spawn(tmp_path: Path, repo: Path, script: Path, *extra: str) -> pexpect.spawn:
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home"), "NO_COLOR": "1", "TERM": "dumb"}
    args = ["-m", "protoagent", "chat", "--repo", str(repo), "--model", f"scripted:{script}", *extra]
    child = pexpect.spawn(sys.executable, args, env=env, encoding="utf-8", timeout=60, dimensions=(50, 200))
    child.expect_exact(PROMPT)
    return child


@pytest.fixture
def chats() -> Iterator[list[pexpect.spawn]]:
    started: list[pexpect.spawn] = []
    yield started
    for child in started:
        if child.isalive():
            child.terminate(force=True)


def leave(child: pexpect.spawn) -> int:
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    return int(child.exitstatus or 0) if child.signalstatus is None else -1


def test_a_prompt_streams_the_reply_and_ctrl_d_leaves_with_status_0(
    tmp_path: Path, repo: Path, chats: list[pexpect.spawn]
) -> None:
    script = write_script(tmp_path / "s.jsonl", [final_turn("Hello! dates.py holds parse_date.", role="architect")])
    child = spawn(tmp_path, repo, script)
    chats.append(child)
    child.sendline("hello there")
    child.expect_exact("Hello! dates.py holds parse_date.")
    child.expect_exact("── completed · session s_")
    child.expect_exact(PROMPT)
    assert leave(child) == 0


def test_an_inline_approval_shows_the_diff_and_the_answer_applies_the_edit(
    tmp_path: Path, repo: Path, chats: list[pexpect.spawn]
) -> None:
    revision = hashlib.sha256(BUGGY.encode()).hexdigest()
    edit = {
        "path": "dates.py",
        "old": "    return int(year), int(day), int(month)\n",
        "new": "    return int(year), int(month), int(day)\n",
        "expected_revision": revision,
    }
    script = write_script(
        tmp_path / "s.jsonl",
        [
            tool_turn("coder", role="architect", task="fix dates.py"),
            tool_turn("edit_file", role="coder", **edit),
            tool_turn("report_task", role="coder", status="done", summary="fixed"),
            final_turn("fixed", role="coder"),
            final_turn("Fixed parse_date.", role="architect"),
        ],
    )
    child = spawn(tmp_path, repo, script)
    chats.append(child)
    child.sendline("fix the date bug")
    child.expect_exact("approve write by edit_file?")
    child.expect_exact("+    return int(year), int(month), int(day)")
    child.expect_exact("[y/s/N]")
    child.sendline("y")
    child.expect_exact("Fixed parse_date.")
    while child.expect_exact(["[y/s/N]", PROMPT]) == 0:
        child.sendline("y")  # the checks that verify the edit ask too
    assert (repo / "dates.py").read_text() == FIXED
    assert leave(child) == 0


def test_ctrl_c_during_a_long_command_stops_it_and_the_chat_goes_on(
    tmp_path: Path, repo: Path, chats: list[pexpect.spawn]
) -> None:
    marker = repo / "started.txt"  # inside the workspace: the sandbox lets the command write there
    token = f"slow-{tmp_path.name}"
    slow = f"import time; open('started.txt', 'w').write({token!r}); time.sleep(60)"
    script = write_script(
        tmp_path / "s.jsonl", [tool_turn("execute_command", role="architect", argv=["python", "-c", slow])]
    )
    child = spawn(tmp_path, repo, script, "--approval", "auto")
    chats.append(child)
    child.sendline("add a slow step")
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert marker.exists(), "the command never started"
    assert alive_with(token), "the command is not running"
    child.sendintr()
    child.expect_exact("stopped")
    child.expect_exact(PROMPT)
    assert alive_with(token) == []
    child.sendline("!echo still here")
    child.expect_exact("still here")
    child.expect_exact(PROMPT)
    assert child.isalive()
    assert leave(child) == 0


def test_slash_commands_agents_resume_and_unknown(tmp_path: Path, repo: Path, chats: list[pexpect.spawn]) -> None:
    script = write_script(tmp_path / "s.jsonl", [final_turn("Hi, I am here.", role="architect")])
    child = spawn(tmp_path, repo, script)
    chats.append(child)
    child.sendline("/agents tester off")
    child.expect_exact("coding/tester: off")
    child.expect_exact(PROMPT)
    child.sendline("/agents")
    child.expect(r"coding/tester\s+.*\[off\]")
    child.expect_exact(PROMPT)
    child.sendline("hello")
    child.expect(r"── completed · session (s_[0-9a-f]+)")
    session_id = child.match.group(1)
    child.expect_exact(PROMPT)
    child.sendline("/resume nope")
    child.expect_exact("error:")
    child.expect_exact(PROMPT)
    child.sendline(f"/resume {session_id}")
    child.expect_exact(f"{PROMPT}hello")
    child.expect_exact("Hi, I am here.")
    child.expect_exact(f"resumed session {session_id}")
    child.expect_exact(PROMPT)
    child.sendline("/skill:nope do it")
    child.expect_exact("unknown skill 'nope'")
    child.expect_exact(PROMPT)
    child.sendline("/frobnicate")
    child.expect_exact("unknown command '/frobnicate'")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def alive_with(token: str) -> list[int]:
    """Live (non-zombie) processes whose command line holds ``token``, seen from the host
    (a sandboxed command has its own pid namespace, so its own pid would not do)."""
    time.sleep(0.2)
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and token in (proc / "cmdline").read_text(errors="replace"):
                if (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(int(proc.name))
        except OSError:
            continue
    return found


def test_skill_command_passes_a_known_skill_on_to_the_run(
    tmp_path: Path, repo: Path, chats: list[pexpect.spawn]
) -> None:
    skill = repo / ".agents" / "skills" / "review"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: review\ndescription: Review a change.\n---\nLook closely.\n")
    script = write_script(tmp_path / "s.jsonl", [final_turn("Reviewed.", role="architect")])
    child = spawn(tmp_path, repo, script)
    chats.append(child)
    child.sendline("/skill:review the parser")
    child.expect_exact("Reviewed.")
    child.expect_exact(PROMPT)
    assert leave(child) == 0


def test_ctrl_c_at_an_approval_question_stops_the_run_and_leaves_no_reader_behind(
    tmp_path: Path, repo: Path, chats: list[pexpect.spawn]
) -> None:
    def touch(name: str) -> dict[str, object]:
        return tool_turn("execute_command", role="architect", argv=["touch", name], env={"PATH": "/usr/bin:/bin"})

    # Each run reads the script afresh, so it is rewritten for each message.
    script = write_script(tmp_path / "s.jsonl", [touch("never.txt")])
    child = spawn(tmp_path, repo, script)
    chats.append(child)
    child.sendline("run touch never.txt")
    child.expect_exact("[y/s/N]")
    child.sendintr()
    child.expect_exact("stopped")
    child.expect_exact(PROMPT)
    write_script(script, [final_turn("hi back", role="architect")])
    child.sendline("hello")  # the next line goes to the chat, not to a forgotten approval question
    child.expect_exact("hi back")
    child.expect_exact(PROMPT)
    write_script(script, [touch("denied.txt"), final_turn("Understood, I left it.", role="architect")])
    child.sendline("run touch denied.txt")
    child.expect_exact("[y/s/N]")
    child.sendline("not now")
    child.expect_exact("declined on the terminal: not now")
    child.expect_exact("Understood, I left it.")  # the lead answers the denial within the run
    child.expect_exact(PROMPT)
    assert not (repo / "never.txt").exists() and not (repo / "denied.txt").exists()
    assert leave(child) == 0


def test_your_own_bang_command_runs_under_ask_without_a_question_and_is_recorded(
    tmp_path: Path, repo: Path, chats: list[pexpect.spawn]
) -> None:
    script = write_script(tmp_path / "s.jsonl", [final_turn("unused", role="architect")])
    child = spawn(tmp_path, repo, script)
    chats.append(child)
    child.sendline("!echo made-by-you && touch made.txt")
    index = child.expect_exact(["[y/s/N]", "── completed"])
    assert index == 1, "the person's own command asked for approval"
    child.expect_exact(PROMPT)
    assert leave(child) == 0
    assert (repo / "made.txt").exists()
    from protoagent.api import open_store

    with open_store(tmp_path / "home") as store:
        [row] = store.list()
        events = store.load(row.session_id)
    [decided] = [e for e in events if e.type == "approval.decided"]
    assert decided.payload["decision"] == "allow" and decided.payload["reason"] == "you typed this command in the chat"
    [ended] = [e for e in events if e.type == "tool.ended"]
    assert ended.payload["status"] == "ok" and "made-by-you" in ended.payload["output"]
    assert ended.payload["data"]["exit_code"] == 0 and ended.payload["data"]["process_id"], "recorded as a process"
    assert events[0].payload["approval_policy"] == "ask"


def test_every_message_continues_the_one_session(tmp_path: Path, repo: Path, chats: list[pexpect.spawn]) -> None:
    script = write_script(tmp_path / "s.jsonl", [final_turn("Noted.", role="architect")])
    child = spawn(tmp_path, repo, script)
    chats.append(child)
    ids = []
    for message in ("hello", "thanks, and hello again"):
        child.sendline(message)
        child.expect(r"── completed · session (s_[0-9a-f]+)")
        ids.append(child.match.group(1))
        child.expect_exact(PROMPT)
    assert leave(child) == 0
    assert ids[0] == ids[1]
    from protoagent.api import open_store

    with open_store(tmp_path / "home") as store:
        events = store.load(ids[0])
    said = [e.payload["text"] for e in events if e.type == "user.message" and e.agent == "architect"]
    assert said == ["hello", "thanks, and hello again"]
    assert [e.type for e in events].count("session.resumed") == 1


def test_an_mcp_prompt_command_with_mcp_off_says_how_to_turn_it_on(
    tmp_path: Path, repo: Path, chats: list[pexpect.spawn]
) -> None:
    script = write_script(tmp_path / "s.jsonl", [final_turn("unused", role="architect")])
    child = spawn(tmp_path, repo, script)
    chats.append(child)
    child.sendline("/mcp:time:now")
    child.expect_exact("MCP is off: turn it on with 'protoagent agents enable coding/mcp'")
    child.expect_exact(PROMPT)
    assert leave(child) == 0
