"""``WorkspaceInstructionsHook``: AGENTS.md chains in the system text, exactly once, and the
HookPipeline's one-owner rule."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from tests.app.support import call, say, scripted_run

from protoagent.errors import ConfigError
from protoagent.events import Event, MemoryStore, SessionLog, new_session_id
from protoagent.hooks.admission import ContextAdmissionHook
from protoagent.hooks.pipeline import HookPipeline
from protoagent.hooks.workspace_instructions import WorkspaceInstructionsHook
from protoagent.models.registry import ModelConfig
from protoagent.models.types import ModelRequest
from protoagent.testing import make_repo

ROOT_RULE = "Root rule: run the unit tests before you finish."
API_RULE = "API rule: keep handlers free of I/O."


def _chain_repo(tmp_path: Path, name: str = "repo") -> Path:
    return make_repo(
        tmp_path / name,
        {
            "AGENTS.md": f"# {name}\n{ROOT_RULE}\n",
            "src/api/AGENTS.md": f"{API_RULE}\n",
            "src/api/handlers.py": "def handle():\n    return 1\n",
            "src/other/AGENTS.md": "Other rule: never shown unless touched.\n",
            "src/other/x.py": "X = 1\n",
        },
    )


def _request(hook: WorkspaceInstructionsHook, events: list[Event]) -> ModelRequest:
    return hook(ModelRequest(system="You are the Architect.", messages=()), events)


def _touch(path: str) -> list[Event]:
    log = SessionLog(MemoryStore(), new_session_id())
    log.append("session.created", {"preset": "p", "model": "m", "root": ".", "approval_policy": "auto"})
    log.append("tool.started", {"call_id": "c1", "tool": "read_file", "arguments": {"path": path}})
    return log.events


def test_the_root_chain_and_nested_files_on_touched_paths_are_injected(tmp_path: Path) -> None:
    repo = _chain_repo(tmp_path)
    hook = WorkspaceInstructionsHook([repo])
    untouched = _request(hook, []).system
    assert untouched.count(ROOT_RULE) == 1 and API_RULE not in untouched
    touched = _request(hook, _touch("src/api/handlers.py")).system
    assert touched.count(ROOT_RULE) == 1 and touched.count(API_RULE) == 1
    assert touched.index(ROOT_RULE) < touched.index(API_RULE)  # root first, then the nested file
    assert "never shown unless touched" not in touched
    assert str(repo) in touched and "Instructions from src/api/AGENTS.md:" in touched


def test_multi_repo_system_prompts_contain_every_root_instruction_once(tmp_path: Path) -> None:
    """R6: every root of a multi-repository session is listed and its instructions appear once."""
    first, second = _chain_repo(tmp_path, "alpha"), _chain_repo(tmp_path, "beta")
    hook = WorkspaceInstructionsHook([first, second, first])
    system = _request(hook, _touch(str(second / "src" / "api" / "handlers.py"))).system
    assert system.count("# alpha") == 1 and system.count("# beta") == 1
    assert system.count(ROOT_RULE) == 2  # one per root, never repeated
    assert system.count(API_RULE) == 1  # only beta's nested file was touched
    assert system.count(f"- {first}") == 1 and system.count(f"- {second}") == 1


def test_a_symlinked_agents_md_is_followed_and_injected_once(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"CLAUDE.md": "Shared rule: prefer pure functions.\n"}, git=False)
    (repo / "AGENTS.md").symlink_to("CLAUDE.md")
    nested = repo / "pkg"
    nested.mkdir()
    (nested / "AGENTS.md").symlink_to(Path("..") / "CLAUDE.md")  # the same real file again
    system = _request(WorkspaceInstructionsHook([repo]), _touch("pkg/mod.py")).system
    assert system.count("Shared rule: prefer pure functions.") == 1


def test_instructions_are_read_once_per_session(tmp_path: Path) -> None:
    repo = _chain_repo(tmp_path)
    hook = WorkspaceInstructionsHook([repo])
    first = _request(hook, []).system
    (repo / "AGENTS.md").write_text("Changed mid-session.\n")
    assert _request(hook, []).system == first  # a stable prefix for the whole session


def test_agents_md_is_in_every_request_exactly_once_across_steps_and_compaction(tmp_path: Path) -> None:
    repo = _chain_repo(tmp_path)
    for n in range(5):
        (repo / f"big{n}.txt").write_text("".join(f"line {i} of a long file with filler words\n" for i in range(400)))
    turns = [call("read_file", "architect", path=f"big{n}.txt") for n in range(5)]
    turns += [call("read_file", "architect", path="src/api/handlers.py"), say("handle returns 1.", "architect")]
    _, events, model, _ = scripted_run(
        "what does handle return?",
        turns,
        repo=repo,
        home=tmp_path / "home",
        surface="question",
        model_config=ModelConfig(context_window=6000),
        profile="standard",
    )
    assert len(model.requests) == 7
    for request in model.requests:
        assert request.system.count(ROOT_RULE) == 1
        assert all(ROOT_RULE not in str(m) for m in request.messages)
    assert model.requests[-1].system.count(API_RULE) == 1
    counts = [len(r.messages) for r in model.requests]
    # Each step adds an assistant message and a tool result; older ones were compacted: projected
    # into receipts (the context budget) or evicted by admission.
    projected = any(m.content.startswith("[projected result of") for m in model.requests[-1].messages)
    assert projected or any(later <= earlier for earlier, later in itertools.pairwise(counts[1:])), counts
    assert [e.payload["status"] for e in events if e.type == "turn.ended"] == ["completed"]


def test_a_duplicate_hook_owner_fails_at_assembly(tmp_path: Path) -> None:
    pipeline = HookPipeline([WorkspaceInstructionsHook([tmp_path]).registration()])
    pipeline.register(ContextAdmissionHook().registration())
    with pytest.raises(ConfigError, match="hook owner 'workspace-instructions' is registered twice"):
        pipeline.register(WorkspaceInstructionsHook([tmp_path]).registration())
    assert pipeline.owners == ["workspace-instructions", "context-admission"]
