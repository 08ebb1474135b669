"""Items 15 and 10: escape sequences the model writes into a command reach the terminal visibly escaped, in
the approval prompt's ``run:`` line and in the tool-call lines, never as raw control characters.

The CLI runs on a real pseudo-terminal (so it asks for approval there), and the test answers "n";
and a run waiting at that prompt still stops on SIGTERM."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import time
from pathlib import Path

from protoagent.testing import final_turn, make_repo, tool_turn, write_script

from .support import EXE

CLEAR = "\x1b[2J"
TITLE = "\x1b]0;pwned\x07"


def _read_until_exit(master: int, process: subprocess.Popen[bytes], answer: bytes) -> bytes:
    seen = b""
    answered = False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break  # the other side closed
            seen += chunk
            if not answered and b"allow?" in seen:
                os.write(master, answer)
                answered = True
        elif process.poll() is not None:
            break
    return seen


def test_model_written_escape_sequences_are_shown_escaped_in_the_approval_prompt_and_tool_lines(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    command = f"echo {CLEAR}{TITLE}done"
    script = write_script(
        tmp_path / "turns.jsonl",
        [
            tool_turn("execute_command", role="architect", argv=["sh", "-c", command]),
            final_turn("asked", role="architect"),
        ],
    )
    master, slave = pty.openpty()
    args = ["run", "--model", f"scripted:{script}", "--repo", str(repo), "--approval", "ask", "--sandbox", "off"]
    process = subprocess.Popen(
        [*EXE, *args, "--surface", "editing", "print something"],
        env={**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home"), "COLUMNS": "200", "TERM": "xterm"},
        stdin=slave,
        stdout=slave,
        stderr=slave,
        close_fds=True,
    )
    os.close(slave)
    try:
        seen = _read_until_exit(master, process, b"n\n").decode("utf-8", errors="replace")
        process.wait(timeout=30)
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
            process.wait()
    assert "allow?" in seen, seen
    assert CLEAR not in seen and "\x1b]" not in seen and "\x07" not in seen
    assert "\\x1b[2J" in seen and "\\x1b]0;pwned\\x07" in seen
    run_lines = [line for line in seen.splitlines() if "\\x1b[2J" in line]
    assert len(run_lines) >= 2, "both the tool-call line and the approval preview show the escaped command"


def test_sigterm_stops_a_run_waiting_at_the_approval_prompt(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    script = write_script(
        tmp_path / "turns.jsonl",
        [tool_turn("execute_command", role="architect", argv=["true"]), final_turn("asked", role="architect")],
    )
    master, slave = pty.openpty()
    args = ["run", "--model", f"scripted:{script}", "--repo", str(repo), "--approval", "ask", "--surface", "editing"]
    process = subprocess.Popen(
        [*EXE, *args, "run true"],
        env={**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home"), "TERM": "xterm"},
        stdin=slave,
        stdout=slave,
        stderr=slave,
        close_fds=True,
    )
    os.close(slave)
    try:
        seen = b""
        deadline = time.monotonic() + 60
        while b"allow?" not in seen and time.monotonic() < deadline and process.poll() is None:
            if select.select([master], [], [], 0.2)[0]:
                seen += os.read(master, 65536)
        assert b"allow?" in seen, seen
        process.send_signal(signal.SIGTERM)
        stopped = time.monotonic()
        while process.poll() is None and time.monotonic() - stopped < 10:
            if select.select([master], [], [], 0.1)[0]:
                try:
                    os.read(master, 65536)
                except OSError:
                    break
        assert process.wait(timeout=10) == 143
        assert time.monotonic() - stopped < 10
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
            process.wait()
