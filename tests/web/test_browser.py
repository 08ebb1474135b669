"""The page in a real headless Chromium (Debian's package, driven by Playwright): run, approve,
see the tool card, the diff and the evidence; reload to the same view; deny and nothing changes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .browsers import NEEDS_CHROMIUM
from .support import BUGGY, FIXED, date_repo, fix_script, running_server

pytestmark = NEEDS_CHROMIUM

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


def start_run(page: Page, url: str, repo: str, script: Path) -> None:
    page.goto(url + "/")
    page.fill("textarea[name=objective]", "fix the failing date parser test")
    page.fill("input[name=repo]", repo)
    page.fill("input[name=model]", f"scripted:{script}")
    page.select_option("select[name=approval]", "ask")
    page.select_option("select[name=surface]", "editing")
    page.click("#new-run button[type=submit]")
    page.wait_for_url("**/sessions/*")


def answer_in_page(page: Page, shots: Path, deny: str | None = None, timeout: float = 60) -> None:
    """Click through every approval prompt until the evidence report shows; deny one tool."""
    deadline = time.monotonic() + timeout
    while not page.locator("#evidence").is_visible():
        assert time.monotonic() < deadline, "the run did not reach its evidence report"
        waiting = page.locator("#approvals .approval:has(.row button:enabled)").first
        if waiting.count() == 0:
            time.sleep(0.05)
            continue
        call_id = waiting.get_attribute("data-call-id")
        prompt = page.locator(f"#approvals .approval[data-call-id='{call_id}']")
        tool = prompt.locator(".tool").inner_text()
        if tool == "edit_file":
            page.screenshot(path=str(shots / f"approval-{'deny' if deny else 'allow'}.png"), full_page=True)
        if tool == deny:
            prompt.locator("input").fill("keep dates.py as it is")
            prompt.locator("button.deny").click()
        else:
            prompt.locator("button.approve").click()
        prompt.wait_for(state="detached")


def test_browser_run_approve_edit_see_diff_and_evidence_then_reload_and_deny(
    browser: Browser, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    shots = tmp_path_factory.mktemp("screenshots")
    repo = date_repo(tmp_path)
    script = fix_script(tmp_path / "turns.jsonl")
    with running_server(tmp_path) as server:
        page = browser.new_page()
        page.goto(server.login_url)
        start_run(page, server.url, "repo", script)
        answer_in_page(page, shots)
        page.wait_for_selector("body[data-running=false]")
        edit = page.locator(".card[data-presentation=diff]:has(.tool:text-is('edit_file'))")
        assert "status-ok" in (edit.get_attribute("class") or "").split()
        assert edit.get_attribute("open") is None, "a finished card is one collapsed line"
        edit.locator("summary").click()
        assert "return int(year), int(month), int(day)" in edit.locator(".diff .add").first.inner_text()
        edit.locator("summary").click()
        evidence = page.locator("#evidence").inner_text()
        assert "applied: yes" in evidence and "verified: yes" in evidence and "criteria_supported: yes" in evidence
        assert "baseline" in evidence and "verify" in evidence and "passed" in evidence
        assert (repo / "dates.py").read_text() == FIXED
        page.screenshot(path=str(shots / "session-evidence.png"), full_page=True)
        before = page.locator("#transcript").inner_text(), evidence, page.get_attribute("body", "data-last-seq")

        page.reload()
        page.wait_for_selector(f"body[data-last-seq='{before[2]}']")
        page.wait_for_selector("#evidence:not([hidden])")
        assert (page.locator("#transcript").inner_text(), page.locator("#evidence").inner_text()) == before[:2]
        other = browser.new_context().new_page()  # a second browser: its own cookies and cache
        other.goto(server.login_url)
        other.goto(page.url)
        other.wait_for_selector(f"body[data-last-seq='{before[2]}']")
        assert (other.locator("#transcript").inner_text(), other.locator("#evidence").inner_text()) == before[:2]
        other.close()

        second = date_repo(tmp_path / "second")
        start_run(page, server.url, "second/repo", fix_script(tmp_path / "turns2.jsonl"))
        answer_in_page(page, shots, deny="edit_file")
        denied = page.locator(".card:has(.tool:text-is('edit_file'))")
        assert "status-denied" in (denied.get_attribute("class") or "").split()
        assert "keep dates.py as it is" in (denied.text_content() or "")
        assert (second / "dates.py").read_text() == BUGGY
        assert "applied: no" in page.locator("#evidence").inner_text()
        page.goto(server.url + "/")
        page.wait_for_selector(".sessions li >> nth=1")
        page.screenshot(path=str(shots / "session-list.png"), full_page=True)
    assert sorted(p.name for p in shots.iterdir()) == [
        "approval-allow.png",
        "approval-deny.png",
        "session-evidence.png",
        "session-list.png",
    ]


def test_browser_shows_retry_notices_and_a_failed_run_from_the_log(browser: Browser, tmp_path: Path) -> None:
    from protoagent.events import SessionLog

    with running_server(tmp_path) as server:
        log = SessionLog(server.store, "s_retry")
        log.append("session.created", {"preset": "p", "model": "m", "root": str(tmp_path), "approval_policy": "ask"})
        log.append("user.message", {"text": "hello"})
        log.append("model.retrying", {"attempt": 1, "delay_s": 2.0, "error": "429 rate limited"})
        log.append("model.failed", {"error": "provider 'openai' kept failing", "provider": "openai"})
        log.append("run.ended", {"status": "failed", "summary": ""})
        page = browser.new_page()
        page.goto(server.login_url)
        page.goto(f"{server.url}/sessions/s_retry")
        page.wait_for_selector("body[data-last-seq='5']")
        assert "retrying in 2.0 s (attempt 1): 429 rate limited" in page.locator(".notice.retry").inner_text()
        assert "run failed" in page.locator(".run-ended").inner_text()
        assert page.get_attribute("body", "data-running") == "false"
        page.close()


def test_browser_continues_a_session_and_shows_the_new_turn_live(browser: Browser, tmp_path: Path) -> None:
    from protoagent.testing import write_script

    date_repo(tmp_path)
    script = write_script(tmp_path / "turns.jsonl", [{"role": "architect", "text": "Hello there."}])
    with running_server(tmp_path) as server, server.client() as client:
        body = {"objective": "say hello", "repo": "repo", "model": f"scripted:{script}", "surface": "conversation"}
        session_id = client.post("/api/runs", json=body).json()["session_id"]
        page = browser.new_page()
        page.goto(server.login_url)
        page.goto(f"{server.url}/sessions/{session_id}")
        page.wait_for_selector(".run-ended")
        page.wait_for_selector("body[data-running=false]")
        page.fill("#continue textarea", "and once more")
        page.click("#continue button[type=submit]")
        page.wait_for_selector(".run-ended >> nth=1")
        users = page.locator(".msg.user").all_inner_texts()
        assert [u.split("\n")[-1] for u in users] == ["say hello", "and once more"]
        assert page.locator(".msg.assistant.summary").all_inner_texts() == ["Hello there.", "Hello there."]
        page.close()
