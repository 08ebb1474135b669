"""``protoagent mcp list|add|remove|enable|disable`` as a person runs it (real subprocesses)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TIME_SERVER = shutil.which("mcp-server-time") or str(Path(sys.executable).parent / "mcp-server-time")


def cli(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROTOAGENT_HOME": str(home)}
    command = [sys.executable, "-m", "protoagent", "mcp", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_add_disable_enable_remove_keep_unknown_fields(tmp_path: Path) -> None:
    home, repo = tmp_path / "home", tmp_path / "repo"
    home.mkdir()
    repo.mkdir()
    (home / "mcp.json").write_text(json.dumps({"theme": "dark", "servers": {"old": {"command": ["x"], "note": 1}}}))
    added = cli(home, repo, "add", "docs", "--env", "TOKEN=${DOCS_TOKEN:-none}", "--", "docs-mcp", "--stdio")
    assert added.returncode == 0, added.stderr
    assert cli(home, repo, "disable", "old").returncode == 0
    data = json.loads((home / "mcp.json").read_text())
    assert data["theme"] == "dark"
    assert data["servers"]["old"] == {"command": ["x"], "note": 1, "disabled": True}
    assert data["mcpServers"]["docs"] == {
        "command": "docs-mcp",
        "args": ["--stdio"],
        "env": {"TOKEN": "${DOCS_TOKEN:-none}"},
    }
    assert cli(home, repo, "enable", "old").returncode == 0
    assert "disabled" not in json.loads((home / "mcp.json").read_text())["servers"]["old"]
    assert cli(home, repo, "remove", "docs").returncode == 0
    assert "docs" not in json.loads((home / "mcp.json").read_text())["mcpServers"]
    again = cli(home, repo, "remove", "docs")
    assert again.returncode == 2 and again.stderr.startswith("error: ") and "Traceback" not in again.stderr


def test_a_project_server_cannot_be_added_as_trusted(tmp_path: Path) -> None:
    result = cli(tmp_path, tmp_path, "add", "x", "--project", "--trusted", "--", "prog")
    assert result.returncode == 2 and "a repository cannot trust its own servers" in result.stderr
    assert not (tmp_path / ".mcp.json").exists()


@pytest.mark.slow
@pytest.mark.skipif(not Path(TIME_SERVER).exists(), reason="mcp-server-time is not installed")
def test_list_shows_source_status_and_tools(tmp_path: Path) -> None:
    home, repo = tmp_path / "home", tmp_path / "repo"
    home.mkdir()
    repo.mkdir()
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"time": {"command": TIME_SERVER}}}))
    (repo / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"time": {"command": "evil"}, "repo-git": {"command": "g"}}})
    )
    listed = cli(home, repo, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    report = json.loads(listed.stdout)
    rows = {row["name"]: row for row in report["servers"]}
    assert rows["time"]["status"] == "ok" and rows["time"]["source"] == str(home / "mcp.json")
    assert rows["time"]["tools"] == ["get_current_time", "convert_time"]
    assert rows["repo-git"]["status"].startswith("untrusted") and rows["repo-git"]["origin"] == "project"
    assert any("'time' is already declared" in line for line in report["diagnostics"])
    text = cli(home, repo, "list")
    assert "tools: get_current_time, convert_time" in text.stdout and "warning: " in text.stderr


def test_the_cli_names_the_same_user_mcp_file_as_the_broker() -> None:
    from protoagent.integrations.mcp_config import MCP_FILE as BROKER_FILE
    from protoagent.interfaces.cli.mcp_cmd import MCP_FILE as CLI_FILE

    assert CLI_FILE == BROKER_FILE
