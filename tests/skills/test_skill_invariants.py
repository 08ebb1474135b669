"""Regression invariants R7–R13 of spec/application-harness.txt (skills in model context)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from protoagent.agents.session import builtin_tools
from protoagent.context.tokens import EstimatingCounter
from protoagent.errors import ToolRejected
from protoagent.events import MemoryStore
from protoagent.events.log import SessionLog
from protoagent.hooks.admission import ContextAdmissionHook
from protoagent.hooks.pipeline import HookPipeline
from protoagent.hooks.skills import DurableSkillsHook, SkillCatalogHook, rehydrate
from protoagent.models.types import Message, ModelRequest
from protoagent.skills.catalog import build_catalog, catalog_cap
from protoagent.skills.discovery import discover_skills
from protoagent.skills.resolver import resolve_skill
from protoagent.skills.runtime import SkillRuntime
from protoagent.skills.session_skills import activate_for_request, preload_assigned
from protoagent.skills.tool import SkillInput, SkillTool
from protoagent.testing import ScriptedModel
from protoagent.tools.base import ToolContext
from protoagent.tools.services import RunServices

from .support import simple, write_skill

BODY = "# Exact body\n\nStep one: keep   these   spaces.\nStep two: never paraphrase.\n"


def _repo(tmp_path: Path) -> Path:
    skills = tmp_path / "repo/.agents/skills"
    write_skill(
        skills,
        "pdf-forms",
        "name: pdf-forms\ndescription: Fill PDF forms and extract PDF text.",
        BODY,
        files={
            "references/fields.md": "FIELD TABLE CONTENT",
            "scripts/fill.py": "print('fill')\n",
            "agents/openai.yaml": "interface:\n  display_name: PDF\n",
            "evals/activation.json": "{}",
        },
    )
    write_skill(
        skills,
        "deploy",
        "name: deploy\ndescription: Deploy the service to production.",
        "# Deploy\nRun the release script.\n",
        files={"agents/openai.yaml": "policy:\n  allow_implicit_invocation: false\n"},
    )
    simple(skills, "changelog", "Write changelog entries for releases.")
    return tmp_path / "repo"


def _runtime(tmp_path: Path, window: int | None = None) -> SkillRuntime:
    repo = _repo(tmp_path)
    return SkillRuntime(discover_skills([repo], None, bundled=False), "coding", (repo,), window)


def _log() -> SessionLog:
    log = SessionLog(MemoryStore(), "s1")
    log.append("session.created", {"preset": "p", "model": "m", "root": "/", "approval_policy": "auto"})
    return log


def _ctx(runtime: SkillRuntime) -> ToolContext:
    return ToolContext("s1", "c1", Path("/"), services=RunServices(skills=runtime))


async def _call(runtime: SkillRuntime, name: str, resource: str | None = None) -> str:
    tool = SkillTool()
    prepared = tool.prepare(SkillInput(name=name, resource=resource), _ctx(runtime))
    return (await tool.execute(prepared, _ctx(runtime))).text


def test_R7_prose_ranks_metadata_but_never_becomes_a_repository_query_and_resolver_is_bounded(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path)
    eligible = runtime.index.implicit("coding")
    prose = "please fill the tax PDF form in invoices/ and grep for TODO"
    model = ScriptedModel.from_lines([{"role": "skill-resolver", "text": '{"skill": "pdf-forms", "confidence": 0.9}'}])
    decision = asyncio.run(resolve_skill(prose, "coding", eligible, model))
    assert decision.skill == "pdf-forms"
    (request,) = model.requests
    assert request.tools == () and len(request.messages) == 1  # no repository search, no tools, one input
    assert BODY.strip() not in request.messages[0].content and "FIELD TABLE" not in request.messages[0].content
    for reply, why in [
        ('{"skill": "deploy", "confidence": 0.99}', "not an eligible"),  # manual-only: policy validation
        ('{"skill": "pdf-forms changelog", "confidence": 0.9}', "not an eligible"),  # not one exact name
        ('{"skill": "pdf-forms", "confidence": 0.2}', "below"),
        ("I think pdf-forms", "not a {skill"),
    ]:
        scripted = ScriptedModel.from_lines([{"role": "skill-resolver", "text": reply}])
        rejected = asyncio.run(resolve_skill(prose, "coding", eligible, scripted))
        assert rejected.skill is None and why in rejected.reason
    failing = ScriptedModel([])  # an exhausted script is a provider failure: non-fatal
    assert asyncio.run(resolve_skill(prose, "coding", eligible, failing)).skill is None


def test_R8_bounded_tier1_catalog_contains_metadata_but_no_skill_body(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path)
    hook = SkillCatalogHook(runtime, frozenset({"lead"}))
    request = hook(ModelRequest("You are the lead.", (Message("user", "fill a pdf"),), agent_role="lead"), [])
    assert "pdf-forms: Fill PDF forms and extract PDF text." in request.system
    assert "changelog" in request.system and "deploy" not in request.system  # manual-only stays out
    assert "Exact body" not in request.system and "FIELD TABLE" not in request.system
    many = list(discover_skills(_many(tmp_path, 60), None, bundled=False).runtime("coding"))
    tight = build_catalog(many, "convert spreadsheet 37 data", 8192)
    assert tight.size_bytes <= catalog_cap(8192) and tight.omitted > 0
    assert tight.entries[0].name == "skill-37"  # ranked lexically against the request when it does not fit
    assert build_catalog(many, "", None).size_bytes <= 8000


def _many(tmp_path: Path, count: int) -> list[Path]:
    repo = tmp_path / "many"
    for i in range(count):
        simple(repo / ".agents/skills", f"skill-{i}", f"Convert spreadsheet variant {i} data into reports.")
    return [repo]


def test_R9_assigned_skills_preload_exact_bodies_and_unassigned_stay_on_demand(tmp_path: Path) -> None:
    runtime, log = _runtime(tmp_path), _log()
    log.append("user.message", {"text": "hello"}, agent="lead")
    activations = asyncio.run(activate_for_request(log, runtime, "hello", "lead", None, assigned=["pdf-forms"]))
    assert [a.trigger for a in activations] == ["agent"]
    request = SkillCatalogHook(runtime, frozenset({"lead"}))(
        ModelRequest("sys", (Message("user", "hello"),), agent_role="lead"), log.events
    )
    assistant, tool = request.messages[1], request.messages[2]
    assert assistant.tool_calls[0].name == "skill" and tool.tool_call_id == assistant.tool_calls[0].id
    assert BODY.strip() in tool.content
    assert "Run the release script" not in tool.content and "changelog" not in tool.content.split("</skill>")[0]


def test_R10_manual_only_skill_stays_out_of_implicit_resolution_but_dollar_name_and_skill_prefix_work(
    tmp_path: Path,
) -> None:
    runtime = _runtime(tmp_path)
    assert "deploy" not in {b.name for b in runtime.index.implicit("coding")}
    with pytest.raises(ToolRejected):
        asyncio.run(_call(runtime, "deploy"))  # the model cannot pick it from the catalog
    for request in ("ship it with $deploy now", "/skill:deploy ship it"):
        fresh, log = _runtime(tmp_path / request.replace("/", "_").replace(" ", "_").replace("$", "d")), _log()
        activations = asyncio.run(activate_for_request(log, fresh, request, "lead", None))
        assert [(a.name, a.trigger) for a in activations] == [("deploy", "mention")]
        assert [e.type for e in log.events].count("skill.activated") == 1


def test_R11_activated_skill_instructions_remain_exact_through_compaction(tmp_path: Path) -> None:
    runtime, log = _runtime(tmp_path, window=4000), _log()
    log.append("user.message", {"text": "fill the form"}, agent="lead")
    asyncio.run(activate_for_request(log, runtime, "fill the form", "lead", None, assigned=["pdf-forms"]))
    messages = [Message("user", "fill the form")]
    for i in range(30):  # old, large observations that admission must evict
        from protoagent.models.types import ToolCall

        messages += [
            Message("assistant", "", (ToolCall(f"r{i}", "read_file", {"path": "x"}),)),
            Message("tool", "x" * 1500, tool_call_id=f"r{i}", name="read_file"),
        ]
    agents = frozenset({"lead"})
    admission = ContextAdmissionHook(window=4000, counter=EstimatingCounter())
    pipeline = HookPipeline(
        [
            SkillCatalogHook(runtime, agents).registration(),
            admission.registration(),
            DurableSkillsHook(runtime, agents).registration(),
        ]
    )
    request = pipeline.before_model(ModelRequest("sys", tuple(messages), agent_role="lead"), log.events)
    assert admission.last_report is not None and admission.last_report.evicted_message_count > 0
    skill_results = [m for m in request.messages if m.name == "skill"]
    assert len(skill_results) == 1 and BODY.strip() in skill_results[0].content
    identity = runtime.index.find("pdf-forms", "coding").identity  # type: ignore[union-attr]
    assert runtime.loaded == {"lead": {"pdf-forms": identity}}
    tiny = SkillRuntime(runtime.index, "coding", runtime.repos, 200, loaded={"lead": dict(runtime.loaded["lead"])})
    DurableSkillsHook(tiny, agents)(ModelRequest("sys", (Message("user", "x"),), agent_role="lead"), log.events)
    assert tiny.loaded_for("lead") == {}  # outside the durable budget: the marker clears so it can load exactly again
    # A member's preloaded skill stays exact through compaction the same way, in its own requests only.
    preload_assigned(log, runtime, "reviewer", ["pdf-forms"], "review the form")
    member = pipeline.before_model(ModelRequest("sys", tuple(messages), agent_role="reviewer"), log.events)
    assert [m for m in member.messages if m.name == "skill" and BODY.strip() in m.content]
    assert runtime.loaded_for("reviewer") == runtime.loaded_for("lead")


def test_R12_activation_lists_task_resource_paths_without_contents_and_hides_control_plane(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path)
    text = asyncio.run(_call(runtime, "pdf-forms"))
    assert "- references/fields.md" in text and "- scripts/fill.py" in text
    assert "FIELD TABLE CONTENT" not in text and "openai.yaml" not in text and "activation.json" not in text
    assert asyncio.run(_call(runtime, "pdf-forms", "references/fields.md")) == "FIELD TABLE CONTENT"
    # A body that tells the model to read agents/openai.yaml gets a correctable refusal.
    for path in ("agents/openai.yaml", "./evals/activation.json"):
        with pytest.raises(ToolRejected) as refused:
            asyncio.run(_call(runtime, "pdf-forms", path))
        assert refused.value.kind == "control_plane"
    with pytest.raises(ToolRejected):
        asyncio.run(_call(runtime, "pdf-forms", "../deploy/SKILL.md"))


def test_R13_loading_validates_and_activates_every_tool_dependency_and_rehydrates(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_skill(
        repo / ".agents/skills",
        "runner",
        "name: runner\ndescription: Runs commands.",
        files={"agents/protoagent.yaml": "dependencies:\n  tools: [shell, process]\n"},
    )
    write_skill(
        repo / ".agents/skills",
        "needs-missing",
        "name: needs-missing\ndescription: Needs a missing tool.",
        files={"agents/protoagent.yaml": "dependencies:\n  tools: [shell, no_such_tool]\n"},
    )
    index = discover_skills([repo], None, bundled=False)
    tools = {t.name: t.metadata for t in (*builtin_tools(), SkillTool())}
    runtime = SkillRuntime(index, "coding", (repo,), tools=tools)
    runtime.enrol("main", ("read_file", "execute_command", "skill"))
    with pytest.raises(ToolRejected) as missing:
        asyncio.run(_call(runtime, "needs-missing"))
    assert missing.value.details["missing"] == ["no_such_tool"]
    assert runtime.loaded == {} and runtime.active_tools == {}  # nothing half-activated
    log = _log()
    from protoagent.skills.session_skills import record_activation

    record_activation(log, runtime, runtime.activate(index.find("runner", "coding"), "agent", "main"), "run it", "main")  # type: ignore[arg-type]
    assert runtime.active_tools == {"main": {"shell", "process"}}
    reloaded = SkillRuntime(index, "coding", (repo,), tools=tools)
    reloaded.enrol("main", ("read_file", "execute_command", "skill"))
    rehydrate(reloaded, SessionLog(log.store, log.session_id, log.events).events, "main")
    assert reloaded.loaded == runtime.loaded and reloaded.active_tools == runtime.active_tools
