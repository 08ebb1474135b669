"""One role table: roles are built from ``agents.profiles`` with the budgets of
``workflow.limits``; tool groups follow the tools' metadata; a tool whose metadata names its
roles is offered to no other agent and never runs for one."""

from __future__ import annotations

from pathlib import Path

import pytest

from protoagent.agents.profiles import ARCHITECT, PROFILES, READ_TOOLS, WRITE_TOOLS
from protoagent.models.profile import PromptProfile
from protoagent.workflow import roles
from protoagent.workflow.limits import profile_limits
from protoagent.workspace.tools import WORKSPACE_TOOLS

from .support import DATE_REPO, call, run_workflow, say

REVIEWER = "---\ndescription: reviews a change for risk\ntools: [read_file, worker_packet]\n---\nBe terse.\n"


@pytest.mark.parametrize("profile", ["small", "standard"])
def test_every_role_budget_is_the_profiles_limit(profile: PromptProfile) -> None:
    limits = profile_limits(profile)
    assert roles.architect(profile, "native").max_steps == limits.lead_steps
    assert roles.coder(profile, "native").max_steps == limits.coder_window_calls
    assert roles.tester(profile, "native").max_steps == limits.tester_steps
    assert roles.question(profile, "native").max_steps == limits.question_steps
    assert roles.verifier(profile, "native").max_steps == limits.verifier_steps
    assert roles.conversation(profile, "native").max_steps == limits.conversation_steps


def test_presets_are_rows_of_the_one_role_table() -> None:
    from protoagent.agents.presets import get_preset
    from protoagent.agents.profiles import COMMAND_TOOLS, PRESET_ROWS
    from protoagent.errors import ConfigError

    for name, (prompt, tools) in PRESET_ROWS.items():
        preset = get_preset(name)
        assert (preset.name, preset.system_prompt, preset.tools, preset.max_steps) == (name, prompt, tools, 30)
    assert PRESET_ROWS["coding"][1] == READ_TOOLS + WRITE_TOOLS + COMMAND_TOOLS
    assert PRESET_ROWS["readonly"][1] == READ_TOOLS and PRESET_ROWS["chat"][1] == ()
    with pytest.raises(ConfigError, match="unknown preset 'nope'; choose one of: chat, coding, readonly"):
        get_preset("nope")


def test_tool_groups_are_read_from_the_workspace_tools_metadata() -> None:
    effects = {t.name: t.metadata.effect for t in WORKSPACE_TOOLS}
    assert READ_TOOLS == ("read_file", "list_directory", "search_regex")
    assert WRITE_TOOLS == ("edit_file", "create_file", "replace_file")
    assert {effects[t] for t in READ_TOOLS} == {"read"} and {effects[t] for t in WRITE_TOOLS} == {"write"}
    writers = {p.name for p in PROFILES if set(p.tools) & set(WRITE_TOOLS)}
    assert writers == {"coder", "assistant", "writer"}


def test_a_lead_only_tool_named_by_a_member_file_is_never_offered_nor_run_for_the_member(tmp_path: Path) -> None:
    packet = {"name": "worker_packet", "arguments": {"paths": ["dates.py"]}}
    turns = [
        call("delegate_reviewer", ARCHITECT, task="review dates.py"),
        {"role": "reviewer", "tool_calls": [packet]},
        say("No risk found.", "reviewer"),
        say("Reviewed.", ARCHITECT),
    ]
    files = {**DATE_REPO, ".protoagent/agents/coding/reviewer.md": REVIEWER}
    run = run_workflow(tmp_path, "review the date parser for risk", turns, files=files, surface="editing")
    offered = [t.name for r in run.requests("reviewer") for t in r.tools]
    assert "read_file" in offered and "worker_packet" not in offered
    member_calls = [e for e in run.of("tool.ended") if e.agent == "reviewer"]
    assert [e.payload["tool"] for e in member_calls] == ["worker_packet"]
    assert member_calls[0].payload["status"] == "rejected"
    assert member_calls[0].payload["data"]["kind"] == "unknown_tool"


def test_built_in_workers_and_member_files_delegate_through_one_tool_factory(tmp_path: Path) -> None:
    from protoagent.testing import make_repo
    from protoagent.workflow.delegation import BUILTIN_DELEGATE_TOOLS, DelegateTool
    from protoagent.workflow.team import assemble_team

    repo = make_repo(tmp_path / "repo", {".protoagent/agents/coding/reviewer.md": REVIEWER}, git=False)
    team = assemble_team(repo=repo, mode=None, agent=None, resumed=None, data_home=tmp_path / "home")
    tools = [*(cls() for cls in BUILTIN_DELEGATE_TOOLS), *team.delegate_tools()]
    assert [t.name for t in tools] == ["coder", "tester", "explorer", "delegate_reviewer"]
    assert all(isinstance(t, DelegateTool) and t.metadata.roles == {ARCHITECT} for t in tools)
    schemas = {t.name: t.schema().parameters["properties"]["task"] for t in tools}
    assert "description" not in schemas["coder"] and schemas["delegate_reviewer"]["description"]
