"""T1 and item 9: adversarial paths against every file tool; names that display as '..' or '/'."""

from __future__ import annotations

import asyncio
import itertools
import os
from pathlib import Path
from typing import Any

import pytest

from protoagent.errors import ToolRejected
from protoagent.tools.base import Tool, ToolContext
from protoagent.workspace.tools import (
    CreateFileTool,
    EditFileTool,
    ListDirectoryTool,
    ReadFileTool,
    ReplaceFileTool,
    SearchRegexTool,
)

SECRET = "CANARY-OUTSIDE-7f3a"
REVISION = "0" * 64


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    root = (tmp_path / "ws").resolve()
    outside = (tmp_path / "outside").resolve()
    (root / "a" / "b").mkdir(parents=True)
    outside.mkdir()
    (outside / "sentinel.txt").write_text(SECRET + "\n")
    (root / "inside.txt").write_text("inside\n")
    (root / "link_out").symlink_to(outside)
    (root / "file_out").symlink_to(outside / "sentinel.txt")
    (root / "link_in").symlink_to(root / "a" / "b")
    (root / "a" / "up").symlink_to("../..")
    return root, outside


def _adversarial(outside: Path) -> list[str]:
    cores = [
        "../outside/sentinel.txt",
        "../../outside/sentinel.txt",
        f"{outside}/sentinel.txt",
        f"{outside}/new.txt",
        "link_out/sentinel.txt",
        "link_out/new.txt",
        "file_out",
        "link_out",
        "link_in/../../outside/sentinel.txt",
        "link_in/../../../outside/new.txt",
        "a/up/../outside/sentinel.txt",
        "a/../../outside/sentinel.txt",
        "\u2024\u2024/outside/sentinel.txt",
        ".\u200b./outside/sentinel.txt",
        "\u202e../outside/sentinel.txt",
        ".\u0307./outside/sentinel.txt",
        "..\uff0foutside\uff0fsentinel.txt",
        "..\\outside\\sentinel.txt",
        "./../outside/new.txt",
        "/etc/passwd",
        "/proc/self/environ",
        "a/b/../../../outside/new.txt",
        "..",
    ]
    prefixes = ["", "./", "a/../", "link_in/", "a/b/../../"]
    return [prefix + core if not core.startswith("/") else core for prefix, core in itertools.product(prefixes, cores)]


def _attempt(tool: Tool[Any], ctx: ToolContext, args: dict[str, Any]) -> str:
    try:
        prepared = tool.prepare(tool.input_model(**args), ctx)
        output = asyncio.run(tool.execute(prepared, ctx))
    except ToolRejected as rejection:
        return rejection.message
    return output.text


def _calls(path: str) -> list[tuple[Tool[Any], dict[str, Any]]]:
    return [
        (ReadFileTool(), {"path": path}),
        (CreateFileTool(), {"path": path, "content": "pwned\n"}),
        (EditFileTool(), {"path": path, "old": SECRET, "new": "pwned", "expected_revision": REVISION}),
        (ReplaceFileTool(), {"path": path, "content": "pwned\n", "expected_revision": REVISION}),
        (ListDirectoryTool(), {"path": path}),
        (SearchRegexTool(), {"pattern": "CANARY", "path": path}),
    ]


def _outside_state(outside: Path) -> dict[str, str]:
    return {str(p): p.read_text() for p in sorted(outside.rglob("*")) if p.is_file()}


def test_adversarial_paths_through_every_file_tool_never_escape(tmp_path: Path) -> None:
    root, outside = _setup(tmp_path)
    ctx = ToolContext(session_id="s1", call_id="c1", root=root, agent_role="main", profile="standard")
    before = _outside_state(outside)
    attempts = escapes = 0
    for path in _adversarial(outside):
        for tool, args in _calls(path):
            attempts += 1
            text = _attempt(tool, ctx, args)
            leaked = SECRET in text
            changed = _outside_state(outside) != before or sorted(os.listdir(tmp_path)) != ["outside", "ws"]
            escapes += leaked or changed
    print(f"T1 escapes: {escapes} of {attempts} adversarial calls")
    assert escapes == 0
    assert _outside_state(outside) == before


@pytest.mark.parametrize(
    "name",
    [".\u200b.", "\u200b..", ".\u0307.", "..\u0301", "\u202e..", "a\u202eb", ".\u2060.", "\ufeff.."],
    ids=[
        "zero_width_space",
        "leading_zwsp",
        "combining_dot",
        "combining_acute",
        "bidi_override",
        "bidi_in_name",
        "word_joiner",
        "bom",
    ],
)
def test_names_that_display_as_dots_or_reorder_are_refused_at_creation(tmp_path: Path, name: str) -> None:
    root, _ = _setup(tmp_path)
    ctx = ToolContext(session_id="s1", call_id="c1", root=root, agent_role="main", profile="standard")
    text = _attempt(CreateFileTool(), ctx, {"path": f"{name}/x.txt", "content": "x\n"})
    assert "look like a path separator or '..'" in text
    assert sorted(os.listdir(root)) == ["a", "file_out", "inside.txt", "link_in", "link_out"]


def test_dot_dot_after_a_symlink_resolves_as_the_kernel_does(tmp_path: Path) -> None:
    root, _ = _setup(tmp_path)
    ctx = ToolContext(session_id="s1", call_id="c1", root=root, agent_role="main", profile="standard")
    _attempt(CreateFileTool(), ctx, {"path": "link_in/../made.txt", "content": "x\n"})
    # link_in -> a/b, so the kernel's link_in/.. is a/, not the root.
    assert (root / "a" / "made.txt").read_text() == "x\n"
    assert not (root / "made.txt").exists()
    assert "x" in _attempt(ReadFileTool(), ctx, {"path": "link_in/../made.txt"})
