"""Fixtures for the integration tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .helpers import LocalWeb, local_web


@pytest.fixture
def web() -> Iterator[LocalWeb]:
    with local_web() as server:
        yield server
