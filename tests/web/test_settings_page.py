"""The Settings page in a real headless Chromium: agents with the Form/Raw toggle (unknown fields
survive a Form save), skills with their diagnostics and preferences, MCP servers added and
disabled; and the session list page keeps working beside it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from tests.skills.support import simple

from protoagent.testing import make_repo

from .browsers import NEEDS_CHROMIUM
from .support import running_server

pytestmark = NEEDS_CHROMIUM

if TYPE_CHECKING:
    from playwright.sync_api import Browser

AGENT = "---\n# keep me\nname: reviewer\ndescription: Reviews drafts\nx-team: docs\n---\nReview carefully.\n"


def test_settings_page_edits_an_agent_in_form_and_raw_sets_skill_preferences_and_adds_mcp(
    browser: Browser, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "hi\n"})
    simple(repo / ".agents/skills", "tidy", "Use when tidying.")
    (repo / ".agents/skills/broken").mkdir(parents=True)
    (repo / ".agents/skills/broken/SKILL.md").write_text("---\nname: broken\n---\nno description\n")
    home = tmp_path / ".home"
    (home / "agents").mkdir(parents=True)
    agent_file = home / "agents/reviewer.md"
    agent_file.write_text(AGENT)
    with running_server(tmp_path) as server:
        page = browser.new_page()
        page.goto(server.login_url)
        page.goto(server.url + "/settings")
        page.fill("#settings-repo", "repo")
        page.click("#settings-reload")
        page.wait_for_selector("#settings-agents tr[data-agent='coding/architect']")
        page.wait_for_selector("#settings-skills tr[data-skill='tidy']")
        assert "invalid" in page.locator("#settings-skills tr[data-skill='broken']").inner_text()
        assert "broken" in page.locator("#settings-skill-diagnostics").inner_text()

        page.click("#settings-agents tr[data-agent='reviewer'] button")
        page.wait_for_selector("#agent-editor:not([hidden])")
        page.fill("#agent-form input[name=description]", "Reviews drafts and specs")
        page.click("#agent-save")
        page.wait_for_selector("#agent-saved:text('saved')")
        assert agent_file.read_text() == AGENT.replace("Reviews drafts\n", "Reviews drafts and specs\n")

        page.check("input[name=agent-mode][value=raw]")
        assert page.locator("#agent-form").is_hidden() and page.locator("#agent-raw").is_visible()
        raw = page.locator("#agent-raw").input_value()
        page.fill("#agent-raw", raw.replace("Review carefully.", "Review very carefully."))
        page.evaluate("document.getElementById('agent-saved').textContent = ''")
        page.click("#agent-save")
        page.wait_for_selector("#agent-saved:text('saved')")
        assert "Review very carefully." in agent_file.read_text() and "x-team: docs" in agent_file.read_text()
        assert "Review very carefully." in (page.locator("#agent-effective").text_content() or "")

        with page.expect_response(lambda r: r.url.split("?")[0].endswith("/preferences") and r.request.method == "PUT"):
            page.uncheck("input[aria-label='tidy coding']")
        page.wait_for_function(
            "() => !document.querySelector(\"input[aria-label='tidy coding']\").checked"
            " && document.querySelector(\"input[aria-label='tidy work']\").checked"
        )
        store = json.loads((home / "skill-settings.json").read_text())
        assert [r["modes"] for r in store["skills"].values()] == [["work"]]

        page.fill("#mcp-add input[name=name]", "time")
        page.fill("#mcp-add input[name=target]", "mcp-server-time --local")
        page.click("#mcp-add button[type=submit]")
        page.wait_for_selector("#settings-mcp tr[data-mcp='time']")
        page.click("#settings-mcp tr[data-mcp='time'] button:text('Disable')")
        page.wait_for_selector("#settings-mcp tr[data-mcp='time']:has-text('disabled')")
        assert json.loads((home / "mcp.json").read_text())["mcpServers"]["time"]["disabled"] is True
        assert page.locator("#settings-error").inner_text() == ""

        page.goto(server.url + "/")
        page.wait_for_selector("#list-view:not([hidden])")
        assert page.locator("#settings-view").is_hidden()
