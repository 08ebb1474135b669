"""Item 13: inputs that used to end in a traceback end in one line naming the file and what is
wrong (exit 2), or, for optional inputs (a skill, an MCP file, the MCP trust file), in a
diagnostic while the run goes on: deeply nested YAML and JSON, and a full disk under the store."""

from __future__ import annotations

import json
import os
import resource
import subprocess
from pathlib import Path

from protoagent.testing import final_turn, make_repo, write_script

from .support import EXE, cli

DEEP_YAML = "extra: " + "[" * 3000 + "]" * 3000 + "\n"
DEEP_JSON = "[" * 100_000 + "]" * 100_000


def _lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]


def _hostile(tmp_path: Path) -> tuple[Path, Path, Path]:
    repo = make_repo(
        tmp_path / "repo",
        {
            "a.py": "x = 1\n",
            ".protoagent/agents/coding/deep.md": f"---\nname: deep\ndescription: d\n{DEEP_YAML}---\nbody\n",
            ".agents/skills/deep/SKILL.md": f"---\nname: deep\ndescription: d\n{DEEP_YAML}---\nbody\n",
            ".mcp.json": '{"mcpServers": {"deep": ' + DEEP_JSON + "}}",
        },
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / "mcp-trust.json").write_text('{"trusted": ' + DEEP_JSON + "}", encoding="utf-8")
    script = write_script(tmp_path / "turns.jsonl", [final_turn("done", role="architect")])
    return repo, home, script


def test_deeply_nested_agent_skill_and_mcp_files_are_diagnostics_not_tracebacks(tmp_path: Path) -> None:
    repo, home, script = _hostile(tmp_path)
    ran = cli(home, "run", "--model", f"scripted:{script}", "--repo", str(repo), "--surface", "question", "hi")
    assert ran.returncode == 0 and "Traceback" not in ran.stdout + ran.stderr, ran.stderr
    validate = subprocess.run(
        [*EXE, "agents", "validate"],
        cwd=repo,
        env={**os.environ, "PROTOAGENT_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert validate.returncode == 2 and _lines(validate) == [
        f"{repo}/.protoagent/agents/coding/deep.md: the frontmatter is nested too deeply; keep it to a few levels"
    ]
    skills = cli(home, "skills", "list", "--repo", str(repo))
    assert "Traceback" not in skills.stderr
    assert any("SKILL.md" in line and "nested too deeply" in line for line in _lines(skills)), skills.stderr
    mcp = cli(home, "mcp", "list", "--repo", str(repo))
    assert "Traceback" not in mcp.stderr
    assert any(".mcp.json: the JSON is nested too deeply" in line for line in _lines(mcp)), mcp.stderr
    (repo / ".mcp.json").write_text('{"mcpServers": {"time": {"command": "python3", "args": ["s.py"]}}}')
    trust = cli(home, "mcp", "list", "--repo", str(repo))  # reads the deeply nested mcp-trust.json
    assert trust.returncode == 0 and "Traceback" not in trust.stderr, trust.stderr
    assert any(line.startswith("time") and "untrusted" in line for line in _lines(trust)), trust.stdout


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))


def test_a_full_disk_under_the_store_is_one_line_and_the_store_stays_loadable(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    script = write_script(tmp_path / "turns.jsonl", [final_turn("done", role="architect")])
    home = tmp_path / "home"
    first = cli(home, "run", "--model", f"scripted:{script}", "--repo", str(repo), "--surface", "question", "hi")
    assert first.returncode == 0, first.stderr
    # A file size limit stands in for a full disk: writes past it fail with EFBIG, as ENOSPC would.
    done = subprocess.run(
        [*EXE, "run", "--model", f"scripted:{script}", "--repo", str(repo), "--surface", "question", "x" * 100_000],
        env={**os.environ, "PROTOAGENT_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        preexec_fn=_limit_file_size,
    )
    errors = [line for line in _lines(done) if line.startswith("error:")]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert len(errors) == 1 and "sessions.sqlite: the session store cannot be written" in errors[0]
    assert "free space" in errors[0]
    listed = cli(home, "sessions", "list", "--json")
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) >= 1
