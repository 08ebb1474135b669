"""Chat's ``/rewind`` rewinds the chat's own session, under a real pseudo-terminal."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pexpect
from tests.checkpoints.support import coder_turns, edit, repo_with_tests

from protoagent.testing import write_script

PROMPT = "you› "


def test_slash_rewind_goes_back_one_turn_in_the_chat_session(tmp_path: Path) -> None:
    repo = repo_with_tests(tmp_path / "repo", {"a.py": "A = 1\n"})
    turns = coder_turns(edit("a.py", "A = 1\n", "A = 1", "A = 2"))
    script = write_script(tmp_path / "s.jsonl", turns)
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home"), "NO_COLOR": "1", "TERM": "dumb"}
    args = ["-m", "protoagent", "chat", "--repo", str(repo), "--model", f"scripted:{script}", "--approval", "auto"]
    child = pexpect.spawn(sys.executable, args, env=env, encoding="utf-8", timeout=90, dimensions=(50, 200))
    try:
        child.expect_exact(PROMPT)
        child.sendline("/rewind")
        child.expect_exact("nothing to rewind yet")
        child.sendline("set A to 2")
        child.expect_exact("── ")
        child.expect_exact(PROMPT)
        assert (repo / "a.py").read_text() == "A = 2\n"
        child.sendline("/rewind")
        child.expect_exact(PROMPT)
        said = " ".join(str(child.before).split())
        assert "to turn 0 (both)" in said and "restored: a.py" in said, said
        assert (repo / "a.py").read_text() == "A = 1\n"
        child.sendline("/rewind sideways")
        child.expect_exact("/rewind takes a turn number")
        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        child.terminate(force=True)
