"""Debian's chromium, driven by Playwright, for the page's tests (skipped where it is missing)."""

from __future__ import annotations

import shutil

import pytest

CHROMIUM = shutil.which("chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
NEEDS_CHROMIUM = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (scripts/system-deps installs it)"),
]
