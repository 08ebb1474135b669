"""Runtime and API effective configs are identical on every surface: a lead file's prompt text and
``tools_opt_out`` reach the question and conversation surfaces too (a surface only narrows the
tools), and ``agents show --surface S`` prints the tools and prompt that surface runs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .support import agent_file, cli, say, scripted_run

LEAD = "coding/architect.md"
TEXT = "Always answer in French."


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    repo, home = tmp_path / "repo", tmp_path / "home"
    repo.mkdir()
    (repo / "dates.py").write_text("def parse(s):\n    return s\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    agent_file(repo / ".protoagent/agents", LEAD, "tools_opt_out: [search_regex]", f"{TEXT}\n")
    return repo, home


def _shown(home: Path, repo: Path, surface: str) -> dict[str, Any]:
    result = cli(home, "agents", "show", "architect", "--surface", surface, "--repo", str(repo), "--json")
    assert result.returncode == 0, result.stderr
    shown: dict[str, Any] = json.loads(result.stdout)
    return shown


@pytest.mark.parametrize("surface", ["question", "conversation"])
def test_runtime_and_shown_configs_are_identical_off_the_editing_surface(tmp_path: Path, surface: str) -> None:
    repo, home = _repo(tmp_path)
    answer = [say("In dates.py.", "architect")]
    _, _, model, _ = scripted_run("where is parse?", answer, repo=repo, home=home, surface=surface)
    request = model.requests[0]
    shown = _shown(home, repo, surface)
    assert [tool.name for tool in request.tools] == shown["tools"]
    assert shown["prompt"] in request.system and TEXT in shown["prompt"]
    assert "search_regex" not in shown["tools"]


def test_the_question_surface_narrows_a_leads_tools_to_its_read_tools(tmp_path: Path) -> None:
    repo, home = _repo(tmp_path)
    (repo / ".protoagent/agents" / LEAD).unlink()
    agent_file(home / "agents", LEAD, "tools: [create_file]", f"{TEXT}\n")  # the person's own file
    editing = _shown(home, repo, "editing")
    assert {"create_file", "search_regex", "coder"} <= set(editing["tools"])
    shown = _shown(home, repo, "question")
    assert "create_file" not in shown["tools"]
    assert {"read_file", "list_directory", "search_regex"} <= set(shown["tools"])
    _, _, model, _ = scripted_run("where is parse?", [say("In dates.py.", "architect")], repo=repo, home=home)
    assert [tool.name for tool in model.requests[0].tools] == shown["tools"]


def test_surface_is_refused_for_a_member_with_one_line(tmp_path: Path) -> None:
    repo, home = _repo(tmp_path)
    result = cli(home, "agents", "show", "coder", "--surface", "question", "--repo", str(repo))
    assert result.returncode == 2 and "drop --surface" in result.stderr and "Traceback" not in result.stderr
