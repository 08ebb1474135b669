"""Fixtures for the processes layer: a temporary workspace, a registry and a tool context."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from protoagent.processes import ProcessRegistry
from protoagent.tools.base import ToolContext

from .support import make_ctx


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def registry() -> Iterator[ProcessRegistry]:
    registry = ProcessRegistry(grace_s=0.5)
    yield registry
    registry.shutdown()


@pytest.fixture
def ctx(workspace: Path, tmp_path: Path, registry: ProcessRegistry) -> ToolContext:
    return make_ctx(workspace, tmp_path / "artifacts", registry)
