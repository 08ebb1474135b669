"""The chat's line editor on a real terminal (pexpect, TERM=xterm): arrow keys edit the line,
history is kept per repository in a private file, Alt-Enter gives several lines, Tab completes
``/`` commands and ``$skill`` names; piped input still works."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from protoagent.interfaces.cli.line_editor import HISTORY_DIR, completions
from protoagent.testing import final_turn, make_repo, write_script

PROMPT = "you›"  # the editor draws the space as a cursor move
LEFT, UP, ALT_ENTER = "\x1b[D", "\x1b[A", "\x1b\r"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"notes.md": "hello\n"})


@pytest.fixture
def chats() -> Iterator[list[pexpect.spawn]]:
    started: list[pexpect.spawn] = []
    yield started
    for child in started:
        if child.isalive():
            child.terminate(force=True)


def spawn(tmp_path: Path, repo: Path, chats: list[pexpect.spawn]) -> pexpect.spawn:
    script = write_script(tmp_path / "s.jsonl", [final_turn("Noted.", role="architect")])
    # pexpect does not answer cursor position requests; a real terminal does.
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home"), "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
    args = ["-m", "protoagent", "chat", "--repo", str(repo), "--model", f"scripted:{script}"]
    child = pexpect.spawn(sys.executable, args, env=env, encoding="utf-8", timeout=60, dimensions=(50, 200))
    chats.append(child)
    ready(child)
    return child


def ready(child: pexpect.spawn) -> None:
    child.expect_exact(PROMPT)
    time.sleep(0.3)  # the editor switches the terminal to raw mode after drawing the prompt


def said(home: Path) -> list[str]:
    from protoagent.api import open_store

    with open_store(home) as store:
        texts = []
        for row in store.list():
            events = store.load(row.session_id)
            texts += [e.payload["text"] for e in events if e.type == "user.message" and e.agent == "architect"]
        return texts


def leave(child: pexpect.spawn) -> int:
    child.sendeof()  # Ctrl-D on an empty line
    child.expect(pexpect.EOF)
    child.close()
    return int(child.exitstatus or 0)


def test_arrow_keys_edit_the_line_instead_of_printing_escape_codes(
    tmp_path: Path, repo: Path, chats: list[pexpect.spawn]
) -> None:
    child = spawn(tmp_path, repo, chats)
    child.send("helo" + LEFT)
    child.send("l\r")
    child.expect(r"── \w+ · session")
    ready(child)
    assert leave(child) == 0
    assert said(tmp_path / "home") == ["hello"]


def test_history_is_kept_per_repository_in_a_private_file_and_up_recalls_it(
    tmp_path: Path, repo: Path, chats: list[pexpect.spawn]
) -> None:
    child = spawn(tmp_path, repo, chats)
    child.send("remember the parser\r")
    child.expect(r"── \w+ · session")
    ready(child)
    assert leave(child) == 0
    folder = tmp_path / "home" / HISTORY_DIR
    [history] = list(folder.iterdir())
    assert stat.S_IMODE(history.stat().st_mode) == 0o600 and stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert "remember the parser" in history.read_text()
    child = spawn(tmp_path, repo, chats)  # a new chat in the same repository recalls it
    child.send(UP + "\r")
    child.expect(r"── \w+ · session")
    ready(child)
    assert leave(child) == 0
    other = make_repo(tmp_path / "other", {"a.md": "a\n"})
    child = spawn(tmp_path, other, chats)  # another repository has a history of its own
    child.send(UP + "\r")  # nothing to recall: an empty line is no message
    ready(child)
    assert leave(child) == 0
    assert said(tmp_path / "home") == ["remember the parser", "remember the parser"]


def test_alt_enter_and_a_trailing_backslash_give_a_multi_line_message(
    tmp_path: Path, repo: Path, chats: list[pexpect.spawn]
) -> None:
    child = spawn(tmp_path, repo, chats)
    child.send("first line" + ALT_ENTER + "second line\\\r" + "third line\r")
    child.expect(r"── \w+ · session")
    ready(child)
    assert leave(child) == 0
    assert said(tmp_path / "home") == ["first line\nsecond line\nthird line"]


def test_tab_completes_slash_commands_and_skill_names(tmp_path: Path, repo: Path, chats: list[pexpect.spawn]) -> None:
    skill = repo / ".agents" / "skills" / "review"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: review\ndescription: Review a change.\n---\nLook closely.\n")
    child = spawn(tmp_path, repo, chats)
    child.send("/ag\t")
    child.send("\r")
    child.expect_exact("coding/tester")  # the /agents listing
    ready(child)
    child.send("use $rev\t")
    child.send(" on the notes\r")
    child.expect(r"── \w+ · session")
    ready(child)
    assert leave(child) == 0
    assert said(tmp_path / "home") == ["use $review on the notes"]


def test_completion_offers_commands_only_as_the_first_word_and_skills_after_a_dollar() -> None:
    commands = ("/help", "/agents", "/exit")
    assert completions("/a", commands, lambda: ["review"]) == [("/agents", -2)]
    assert completions("/sk", commands, lambda: ["review"]) == [("/skill:review", -3)]
    assert completions("say /a", commands, lambda: ["review"]) == []
    assert completions("try $re", commands, lambda: ["review", "refactor"]) == [("$review", -3), ("$refactor", -3)]
    assert completions("plain words", commands, lambda: ["review"]) == []


def test_piped_input_still_works_without_a_terminal(tmp_path: Path, repo: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [final_turn("Noted.", role="architect")])
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "protoagent", "chat", "--repo", str(repo), "--model", f"scripted:{script}"],
        input="hello from a pipe\n/exit\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Noted." in result.stdout
    assert said(tmp_path / "home") == ["hello from a pipe"]
