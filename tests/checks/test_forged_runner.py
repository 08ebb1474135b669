"""A check's runner is part of its evidence: a model command that replaces the project's
``.venv/bin/python`` with a fake printing a passing summary does not get the run verified.

Through the CLI on a temporary repository with a real virtual environment: the baseline runs the
real tests (failing), the model's command swaps the interpreter for a script that prints what a
passing unittest run prints, the Coder makes an edit that fixes nothing, and the final check
"passes". The report must say the result is not verification evidence and name the file. The
control run, with a real fix and the real interpreter, is verified.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.workflow.support import BUGGY, BUGGY_LINE, FIXED_LINE, TESTS

from protoagent.testing import make_repo, write_script

EXE = [sys.executable, "-m", "protoagent"]
OBJECTIVE = "fix the failing date parser test"
FAKE = "#!/bin/sh\necho 'Ran 1 test in 0.001s' >&2\necho >&2\necho OK >&2\nexit 0\n"
FORGE = f"rm .venv/bin/python && printf '%s' {shlex.quote(FAKE)} > .venv/bin/python && chmod +x .venv/bin/python"
VERIFY = {"check_id": "unittest", "phase": "verify"}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def batch(role: str, *calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"role": role, "tool_calls": [{"name": name, "arguments": args} for name, args in calls]}


def coder_edit(new_line: str) -> dict[str, Any]:
    edit = {"path": "dates.py", "old": BUGGY_LINE, "new": new_line, "expected_revision": sha(BUGGY)}
    return batch("coder", ("edit_file", edit), ("report_task", {"status": "done", "summary": "edited dates.py"}))


def project(tmp_path: Path) -> Path:
    files = {"dates.py": BUGGY, "test_dates.py": TESTS, ".gitignore": ".venv/\n"}
    repo = make_repo(tmp_path / "repo", files)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True, timeout=120)
    return repo


def run(tmp_path: Path, repo: Path, turns: list[dict[str, Any]]) -> dict[str, Any]:
    script = write_script(tmp_path / "turns.jsonl", turns)
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home"), "PROTOAGENT_GUIDED_REPAIR": "off"}
    args = ["run", "--model", f"scripted:{script}", "--repo", str(repo), "--approval", "auto", "--sandbox", "off"]
    result = subprocess.run(
        [*EXE, *args, "--surface", "editing", "--json", OBJECTIVE],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return dict(json.loads(result.stdout))


def test_a_replaced_venv_python_printing_passed_is_not_verification_evidence(tmp_path: Path) -> None:
    repo = project(tmp_path)
    forge = ("execute_command", {"argv": ["/bin/sh", "-c", FORGE]})
    architect = batch("architect", forge, ("coder", {"task": "fix parse_date"}), ("run_check", VERIFY))
    report = run(tmp_path, repo, [architect, coder_edit(BUGGY_LINE.replace("int(day)", "int( day)"))])
    print(f"T9 forged runner: verified={report['verified']} verification={report['verification']} {report['notes']}")
    assert (repo / ".venv" / "bin" / "python").read_text() == FAKE, "the forgery did not happen"
    final = [c for c in report["checks"] if c["id"] == "unittest" and c["phase"] == "verify"][-1]
    assert final["outcome"] == "passed" and final["changed_runner_files"] == [str(repo / ".venv" / "bin" / "python")]
    assert report["verified"] is False and report["verification"] == "untrusted"
    assert report["status"] != "completed"
    assert any(".venv/bin/python" in n and "not verification evidence" in n for n in report["notes"])


def test_the_real_interpreter_and_a_real_fix_still_verify(tmp_path: Path) -> None:
    repo = project(tmp_path)
    architect = batch("architect", ("coder", {"task": "fix parse_date"}), ("run_check", VERIFY))
    report = run(tmp_path, repo, [architect, coder_edit(FIXED_LINE)])
    print(f"T9 control: verified={report['verified']} verification={report['verification']}")
    assert report["verified"] is True and report["verification"] == "verified"
    assert all("changed_runner_files" not in c for c in report["checks"])


def script_project(tmp_path: Path) -> tuple[Path, str]:
    """A project whose configured check is its own runner script."""
    script = f"#!/bin/sh\nexec {sys.executable} -m unittest -q\n"
    config = {"checks": [{"id": "unittest", "argv": ["./run_tests.sh"], "paths": ["dates.py", "test_dates.py"]}]}
    files = {"dates.py": BUGGY, "test_dates.py": TESTS, "run_tests.sh": script}
    repo = make_repo(tmp_path / "repo", {**files, ".protoagent/project.json": json.dumps(config)})
    (repo / "run_tests.sh").chmod(0o755)
    return repo, script


def test_a_runner_script_a_command_rewrote_is_not_verification_evidence(tmp_path: Path) -> None:
    repo, _ = script_project(tmp_path)
    fake = FAKE.replace("'", "")
    forge = ("execute_command", {"argv": ["/bin/sh", "-c", f"printf '%s' {shlex.quote(fake)} > run_tests.sh"]})
    architect = batch("architect", forge, ("coder", {"task": "fix parse_date"}), ("run_check", VERIFY))
    report = run(tmp_path, repo, [architect, coder_edit(BUGGY_LINE.replace("int(day)", "int( day)"))])
    print(f"T9 rewritten runner script: verification={report['verification']} {report['notes']}")
    assert report["verified"] is False and report["verification"] == "untrusted"
    assert any("run_tests.sh" in n and "not verification evidence" in n for n in report["notes"])


def test_a_runner_script_the_coder_edited_is_a_reviewed_change_and_still_verifies(tmp_path: Path) -> None:
    repo, script = script_project(tmp_path)
    edit_script = {"path": "run_tests.sh", "old": "unittest -q", "new": "unittest", "expected_revision": sha(script)}
    fix = {"path": "dates.py", "old": BUGGY_LINE, "new": FIXED_LINE, "expected_revision": sha(BUGGY)}
    done = {"status": "done", "summary": "fixed dates.py, unittest now verbose"}
    coder = batch("coder", ("edit_file", fix), ("edit_file", edit_script), ("report_task", done))
    architect = batch("architect", ("coder", {"task": "fix parse_date"}), ("run_check", VERIFY))
    report = run(tmp_path, repo, [architect, coder])
    print(f"T9 edited runner script: verification={report['verification']} {report['notes']}")
    assert "-m unittest\n" in (repo / "run_tests.sh").read_text()
    assert report["verified"] is True and report["verification"] == "verified"
