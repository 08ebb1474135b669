"""A running preview server's address is linked on its tool card (only a loopback http address)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .browsers import NEEDS_CHROMIUM
from .support import running_server

pytestmark = NEEDS_CHROMIUM

if TYPE_CHECKING:
    from playwright.sync_api import Browser


def test_a_running_preview_is_linked_on_its_card_and_a_foreign_url_is_not(browser: Browser, tmp_path: Path) -> None:
    from protoagent.events import SessionLog

    with running_server(tmp_path) as server:
        log = SessionLog(server.store, "s_preview")
        log.append("session.created", {"preset": "p", "model": "m", "root": str(tmp_path), "approval_policy": "ask"})
        log.append("user.message", {"text": "serve it"})
        for call_id, url in (("c1", "http://127.0.0.1:8123/"), ("c2", "javascript:alert(1)")):
            log.append("tool.started", {"call_id": call_id, "tool": "preview", "arguments": {"action": "start"}})
            data = {"preview_id": "p_1", "url": url, "port": 8123, "running": True}
            log.append(
                "tool.ended", {"call_id": call_id, "tool": "preview", "status": "ok", "output": "serving", "data": data}
            )
        log.append("run.ended", {"status": "completed", "summary": ""})
        page = browser.new_page()
        page.goto(server.login_url)
        page.goto(f"{server.url}/sessions/s_preview")
        page.wait_for_selector("body[data-last-seq='7']")
        links = page.locator(".card .preview-link")
        assert links.count() == 1 and links.first.get_attribute("href") == "http://127.0.0.1:8123/"
        assert page.locator(".card[data-call-id='c2'] a").count() == 0
        page.close()
