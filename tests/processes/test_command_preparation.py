"""Command preparation: environment isolation, executable resolution, rejections, preview."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from protoagent.errors import ToolRejected
from protoagent.processes import SYSTEM_PATH, ExecuteCommandTool, ProcessRegistry
from protoagent.processes.sandbox import SandboxScope
from protoagent.tools.base import ToolContext

from .support import body, execute, make_ctx, run_tool

TOOL = ExecuteCommandTool()
PRINT_ENV = "import json, os; print(json.dumps(dict(os.environ)))"


def child_env(ctx: ToolContext, env: dict[str, str] | None = None) -> dict[str, str]:
    output = run_tool(TOOL, ctx, argv=["python", "-c", PRINT_ENV], env=env or {})
    assert output.status == "ok", output.text
    result: dict[str, str] = json.loads(body(output))
    return result


def make_script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{text}\n")
    path.chmod(0o755)
    return path


def test_env_is_not_inherited(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROTOAGENT_PARENT_ONLY", "from-parent")
    env = child_env(ctx, {"GREETING": "hello"})
    assert set(env) == {"HOME", "LANG", "PYTHONDONTWRITEBYTECODE", "GREETING"}
    assert env["LANG"] == "C.UTF-8"
    assert env["GREETING"] == "hello"
    assert env["HOME"] != os.environ.get("HOME")
    assert Path(env["HOME"]).is_dir()


def test_secret_looking_vars_never_pass_unless_named(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = ["SERVICE_API_KEY", "GITHUB_TOKEN", "client_secret", "DB_PASSWORD"]
    for name in secrets:
        monkeypatch.setenv(name, "parent-value")
    assert not set(secrets) & set(child_env(ctx))
    named = child_env(ctx, {"SERVICE_API_KEY": "named-value"})
    assert named["SERVICE_API_KEY"] == "named-value"
    assert "parent-value" not in named.values()


def test_bare_program_resolves_through_system_search_path(ctx: ToolContext) -> None:
    prepared = TOOL.prepare(TOOL.input_model(argv=["env"]), ctx)
    executable = prepared.state.command.executable
    assert os.path.dirname(executable) in SYSTEM_PATH.split(os.pathsep)
    assert "PATH=" not in body(execute(TOOL, prepared, ctx))


def test_bare_program_resolves_through_named_path(ctx: ToolContext, workspace: Path) -> None:
    tool_path = make_script(workspace / "bin" / "greet", "echo greeted")
    with pytest.raises(ToolRejected) as rejected:
        TOOL.prepare(TOOL.input_model(argv=["greet"]), ctx)
    assert rejected.value.kind == "unknown_executable"
    output = run_tool(TOOL, ctx, argv=["greet"], env={"PATH": str(tool_path.parent)})
    assert output.data["argv"] == [str(tool_path)]
    assert body(output) == "greeted\n"


def test_python_resolves_to_the_selected_interpreter(
    workspace: Path, tmp_path: Path, registry: ProcessRegistry
) -> None:
    fake = make_script(workspace / ".venv" / "bin" / "python", 'echo "selected $*"')
    ctx = make_ctx(workspace, tmp_path / "artifacts", registry, python=".venv/bin/python")
    for name in ("python", "python3"):
        output = run_tool(TOOL, ctx, argv=[name, "-V"])
        assert output.data["argv"] == [str(fake), "-V"]
        assert body(output) == "selected -V\n"


def test_python_without_selection_is_this_interpreter(ctx: ToolContext) -> None:
    prepared = TOOL.prepare(TOOL.input_model(argv=["python3", "-V"]), ctx)
    assert prepared.state.command.executable == os.path.normpath(sys.executable)


def test_named_path_overrides_interpreter_selection(ctx: ToolContext, workspace: Path) -> None:
    other = make_script(workspace / "tools" / "python", "echo other")
    output = run_tool(TOOL, ctx, argv=["python"], env={"PATH": str(other.parent)})
    assert output.data["argv"] == [str(other)]


def test_workspace_relative_executable_resolves_beneath_root(ctx: ToolContext, workspace: Path) -> None:
    script = make_script(workspace / "scripts" / "run", "echo ran")
    (workspace / "sub").mkdir()
    output = run_tool(TOOL, ctx, argv=["scripts/run"], cwd="sub")
    assert output.data["argv"] == [str(script)]
    assert output.data["cwd"] == str(workspace / "sub")


@pytest.mark.parametrize(
    ("arguments", "kind"),
    [
        ({"argv": ["no-such-program-protoagent"]}, "unknown_executable"),
        ({"argv": ["../outside/run"]}, "path_outside_workspace"),
        ({"argv": []}, "invalid_arguments"),
        ({"argv": ["env"], "cwd": "missing"}, "missing_cwd"),
        ({"argv": ["env"], "cwd": ".."}, "path_outside_workspace"),
        ({"argv": ["env"], "env": {"BAD NAME": "x"}}, "invalid_arguments"),
        ({"argv": ["env"], "timeout": 0}, "invalid_limit"),
        ({"argv": ["env"], "timeout": 3601}, "invalid_limit"),
        ({"argv": ["env"], "output_limit": 0}, "invalid_limit"),
        ({"argv": ["env"], "output_limit": (1 << 20) + 1}, "invalid_limit"),
    ],
)
def test_invalid_request_is_rejected_before_approval(
    ctx: ToolContext, registry: ProcessRegistry, tmp_path: Path, arguments: dict[str, object], kind: str
) -> None:
    with pytest.raises(ToolRejected) as rejected:
        TOOL.prepare(TOOL.input_model(**arguments), ctx)
    assert rejected.value.kind == kind
    assert registry.live() == []
    assert not (tmp_path / "artifacts" / "processes").exists()


def test_preview_shows_executable_cwd_env_limits_and_sandbox(ctx: ToolContext, workspace: Path, tmp_path: Path) -> None:
    (workspace / "src").mkdir()
    arguments = {"argv": ["env", "-0"], "cwd": "src", "env": {"MODE": "a b"}, "timeout": 5, "output_limit": 100}
    prepared = TOOL.prepare(TOOL.input_model(**arguments), ctx)
    executable = prepared.state.command.executable
    lines = prepared.preview.splitlines()
    assert prepared.effect == "execute"
    assert f"executable: {executable}" in lines
    assert f'argv: ["{executable}", "-0"]' in lines
    assert f"cwd: {workspace / 'src'}" in lines
    assert f"env: HOME={tmp_path / 'artifacts' / 'home'} LANG=C.UTF-8 MODE='a b' PYTHONDONTWRITEBYTECODE=1" in lines
    assert "timeout: 5 s" in lines
    assert "output limit: 100 bytes" in lines
    assert "sandbox: none" in lines


@dataclass(frozen=True)
class MarkingSandbox:
    """A profile that runs the command under env(1) with one extra variable."""

    name: str = "marking"

    def wrap(self, argv: tuple[str, ...], scope: SandboxScope) -> tuple[str, ...]:
        return (os.path.join(os.path.dirname(argv[0]), "env"), "SANDBOXED=1", *argv)


def test_sandbox_profile_wraps_the_spawned_argv(workspace: Path, tmp_path: Path, registry: ProcessRegistry) -> None:
    ctx = make_ctx(workspace, tmp_path / "artifacts", registry, sandbox=MarkingSandbox())
    prepared = TOOL.prepare(TOOL.input_model(argv=["env"]), ctx)
    assert "sandbox: marking" in prepared.preview.splitlines()
    assert "SANDBOXED=1" in body(execute(TOOL, prepared, ctx)).splitlines()
