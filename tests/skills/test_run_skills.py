"""Skills in a real run: the catalog reaches the lead, ``$name`` and the resolver activate, the
``skill`` tool loads by exact name — all through ``run_task`` with the scripted model."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from protoagent.events import Event, MemoryStore
from protoagent.testing import ScriptedModel, make_repo
from protoagent.workflow.run import RunOptions, run_task

from .support import write_skill


def _run(
    tmp_path: Path,
    objective: str,
    turns: Sequence[Mapping[str, Any]],
    resolver: bool | None = None,
) -> tuple[list[Event], ScriptedModel]:
    root = make_repo(tmp_path / "repo", {"dates.py": "def parse_date(s):\n    return s\n"})
    write_skill(
        root / ".agents/skills",
        "date-guide",
        "name: date-guide\ndescription: Explain date parsing code.",
        "# Date guide\nAnswer with the function's file and line.\n",
        files={"references/formats.md": "ISO"},
    )
    model = ScriptedModel.from_lines(turns)
    store = MemoryStore()
    options = RunOptions(
        repo=root,
        model="scripted:inline",
        store=store,
        approval="auto",
        surface="question",
        provider=model,
        data_home=tmp_path / "home",
        artifacts_root=tmp_path / "artifacts",
        skill_resolver=resolver,
    )
    report = asyncio.run(run_task(objective, options))
    return store.load(report.session_id), model


def _architect_requests(model: ScriptedModel) -> list[Any]:
    return [r for r in model.requests if r.agent_role == "architect"]


def test_dollar_name_in_the_objective_activates_before_the_first_model_call(tmp_path: Path) -> None:
    events, model = _run(
        tmp_path, "where is parse_date? use $date-guide", [{"role": "architect", "text": "dates.py:1"}]
    )
    (request,) = _architect_requests(model)
    assert "Skills available" in request.system and "date-guide: Explain date parsing code." in request.system
    assert "skill" in {t.name for t in request.tools}
    tool_messages = [m for m in request.messages if m.name == "skill"]
    assert len(tool_messages) == 1 and "Answer with the function's file and line." in tool_messages[0].content
    assert "- references/formats.md" in tool_messages[0].content and "ISO" not in tool_messages[0].content
    assert [e.payload["activation"]["trigger"] for e in events if e.type == "skill.activated"] == ["mention"]


def test_resolver_selects_one_exact_skill_before_the_lead_runs(tmp_path: Path) -> None:
    turns = [
        {"role": "skill-resolver", "text": '{"skill": "date-guide", "confidence": 0.8}'},
        {"role": "architect", "text": "dates.py:1"},
    ]
    events, model = _run(tmp_path, "where is the date parsing code?", turns, resolver=True)
    resolver = next(r for r in model.requests if r.agent_role == "skill-resolver")
    assert resolver.tools == () and "Answer with the function" not in resolver.messages[0].content
    (resolved,) = [e for e in events if e.type == "skill.resolved"]
    assert resolved.payload["skill"] == "date-guide"
    assert any(m.name == "skill" for m in _architect_requests(model)[0].messages)
    assert not [e for e in events if e.type == "tool.started"]  # the resolver ran no task tool


def test_model_loads_a_catalog_skill_with_the_skill_tool(tmp_path: Path) -> None:
    turns: list[dict[str, Any]] = [
        {"role": "architect", "tool_calls": [{"name": "skill", "arguments": {"name": "date-guide"}}]},
        {"role": "architect", "text": "dates.py:1"},
    ]
    events, model = _run(tmp_path, "where is parse_date?", turns)
    ended = [e for e in events if e.type == "tool.ended" and e.payload["tool"] == "skill"]
    assert ended[0].payload["status"] == "ok" and ended[0].payload["data"]["activation"]["trigger"] == "model"
    second = _architect_requests(model)[1]
    assert "Answer with the function's file and line." in second.messages[-1].content
    assert not [e for e in events if e.type == "skill.resolved"]  # auto: no resolver for a scripted model


def _write_agent(path: Path, frontmatter: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{frontmatter}\n---\n", encoding="utf-8")


def test_skills_assigned_to_the_lead_agent_preload_unconditionally(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _write_agent(home / "agents/coding/architect.md", "skills: [code-review]")
    events, model = _run(tmp_path, "where is parse_date?", [{"role": "architect", "text": "dates.py:1"}])
    (request,) = _architect_requests(model)
    loaded = [m.content for m in request.messages if m.name == "skill"]
    assert len(loaded) == 1 and "# Review a change" in loaded[0]
    assert "Answer with the function" not in request.system  # the unassigned skill stays on demand
    assert [e.payload["activation"]["trigger"] for e in events if e.type == "skill.activated"] == ["agent"]


def test_work_session_sees_user_skills_but_not_coding_only_bundled_ones(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "unused"
    workspace.mkdir()
    write_skill(home / "skills", "outline", "name: outline\ndescription: Outline a talk or an essay.")
    model = ScriptedModel.from_lines([{"text": "An outline."}])
    store = MemoryStore()
    options = RunOptions(
        repo=workspace,
        model="scripted:inline",
        store=store,
        approval="auto",
        provider=model,
        data_home=home,
        artifacts_root=home / "artifacts",
        mode="work",
    )
    asyncio.run(run_task("outline a talk", options))
    (request,) = model.requests
    assert "outline: Outline a talk or an essay." in request.system
    assert "code-review" not in request.system and "skill" in {t.name for t in request.tools}
