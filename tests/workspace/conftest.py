"""Fixtures for workspace tests: a real root in tmp_path, a guarded folder outside it, contexts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ws_helpers import OutsideGuard

from protoagent.tools.base import ToolContext


@pytest.fixture
def outside(tmp_path: Path) -> OutsideGuard:
    return OutsideGuard(tmp_path / "outside")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path.resolve()


@pytest.fixture
def make_ctx(root: Path) -> Callable[..., ToolContext]:
    def make(role: str = "main", profile: Any = "standard") -> ToolContext:
        return ToolContext(session_id="s1", call_id="c1", root=root, agent_role=role, profile=profile)

    return make


@pytest.fixture
def ctx(make_ctx: Callable[..., ToolContext]) -> ToolContext:
    return make_ctx()
