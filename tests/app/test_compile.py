"""``compile_agent_config``: one merge for the runtime, the CLI and the SDK."""

from __future__ import annotations

import json
from pathlib import Path

from tests.app.support import agent_file, call, cli, say, scripted_run

from protoagent.agents.compile import compile_agent_config
from protoagent.agents.profiles import WORK_TIER
from protoagent.agents.roster import load_catalog
from protoagent.agents.service import show_agent
from protoagent.models.types import ModelRequest
from protoagent.testing import make_repo

EDITOR = """\
role: lead
description: edits prose in the workspace
model: scripted:inline
tools: [read_file, create_file, list_directory, read_file]
tools_opt_out: [shell, edit_file]
skills: [proofreading, proofreading]
mcp_servers: [time]
x-owner: docs-team
"""


def _first(requests: list[ModelRequest], role: str) -> ModelRequest:
    return next(r for r in requests if r.agent_role == role)


def test_compile_applies_profile_user_additions_opt_out_and_dedupe(tmp_path: Path) -> None:
    agent_file(tmp_path / "home" / "agents", "editor.md", EDITOR, "Prefer short sentences.")
    effective = compile_agent_config(load_catalog(None, tmp_path / "home").find("editor", "work"))
    assert effective.tools == tuple(dict.fromkeys((*(t for t in WORK_TIER if t not in ("shell", "edit_file")),)))
    assert "shell" not in effective.tools and effective.tools.count("read_file") == 1
    assert effective.skills == ("proofreading",) and effective.mcp_servers == ("time",)
    assert effective.prompt.endswith("Prefer short sentences.") and effective.source == "user"


def test_opt_out_only_removes_code_owned_tier_tools(tmp_path: Path) -> None:
    agent_file(
        tmp_path / "home" / "agents", "aide.md", "tools: [create_file]\ntools_opt_out: [create_file, search_regex]"
    )
    effective = compile_agent_config(load_catalog(None, tmp_path / "home").find("aide", "work"))
    assert "create_file" in effective.tools  # user-authored, kept
    assert "search_regex" not in effective.tools  # tier tool, opted out


def test_runtime_and_api_effective_configs_are_identical(tmp_path: Path) -> None:
    """R4: the lead and member a run composes are exactly what ``agents show`` reports."""
    home, repo = tmp_path / "home", tmp_path / "unused"
    repo.mkdir()
    agent_file(home / "agents", "editor.md", EDITOR, "Prefer short sentences.")
    agent_file(home / "agents", "checker.md", "lead: editor\ndescription: checks spelling", "Spell check only.")
    turns = [
        call("delegate_checker", "editor", task="check spelling of draft.md"),
        say("no spelling errors", "checker"),
        say("Done.", "editor"),
    ]
    report, _, model, _ = scripted_run("proofread the draft", turns, repo=repo, home=home, mode="work", agent="editor")
    assert (report.mode, report.lead) == ("work", "editor")
    lead, member = show_agent("editor", "work", None, home), show_agent("checker", "work", None, home)
    lead_request, member_request = _first(model.requests, "editor"), _first(model.requests, "checker")
    assert [t.name for t in lead_request.tools] == [*lead.tools, "delegate_checker"]
    assert lead_request.system == lead.prompt
    assert [t.name for t in member_request.tools] == list(member.tools)
    assert member_request.system == member.prompt
    shown = cli(home, "agents", "show", "editor", "--mode", "work", "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == lead.to_json()


def test_a_lead_file_opts_out_of_workflow_tools_in_the_run_and_in_show(tmp_path: Path) -> None:
    repo, home = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"}), tmp_path / "home"
    agent_file(repo / ".protoagent" / "agents", "coding/architect.md", "tools_opt_out: [execute_command]")
    _, _, model, _ = scripted_run(
        "look at a.py and fix it", [say("nothing to fix", "architect")], repo=repo, home=home, surface="editing"
    )
    offered = [t.name for t in _first(model.requests, "architect").tools]
    shown = show_agent("coding/architect", None, repo, home).tools
    assert "execute_command" not in offered and "execute_command" not in shown
    assert {"coder", "tester", "run_check", "plan_task"} <= set(offered) <= {*shown, "skill"}
