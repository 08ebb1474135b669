"""The page as a person meets it, in Debian's chromium: checks coloured by outcome, approvals that
cannot be missed (and none for auto-approved calls), a cancelled command with its output,
evidence per run, Markdown, collapsed cards, the Changes view and a live session list.

Screenshots go to each test's tmp dir; what the test asserts is the DOM and its geometry."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from protoagent.events import SessionLog
from protoagent.testing import final_turn, write_script

from .browsers import NEEDS_CHROMIUM
from .support import Server, date_repo, fix_script, running_server

pytestmark = NEEDS_CHROMIUM

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

RED, GREEN = "rgb(198, 40, 40)", "rgb(26, 127, 55)"
OBJECTIVE = "fix the failing date parser test"
COUNT_APPROVAL_BOXES = """
window.__approvalBoxes = 0;
new MutationObserver((records) => {
  for (const r of records) for (const n of r.addedNodes) {
    if (n.nodeType === 1 && (n.matches(".approval") || n.querySelector(".approval"))) window.__approvalBoxes++;
  }
}).observe(document, { childList: true, subtree: true });
"""


def classes(page: Page, selector: str) -> list[str]:
    return (page.locator(selector).first.get_attribute("class") or "").split()


def style(page: Page, selector: str, prop: str) -> str:
    value: str = page.locator(selector).first.evaluate(f"(n) => getComputedStyle(n).{prop}")
    return value


def logged_session(server: Server, session_id: str, model: str = "scripted:x") -> SessionLog:
    log = SessionLog(server.store, session_id)
    created = {"preset": "p", "model": model, "root": str(server.root), "approval_policy": "ask", "title": "t"}
    log.append("session.created", created)
    log.append("user.message", {"text": "fix it"})
    return log


def start(client: httpx.Client, script: Path, approval: str, objective: str = OBJECTIVE) -> str:
    body = {"objective": objective, "repo": "repo", "model": f"scripted:{script}", "approval": approval}
    started = client.post("/api/runs", json={**body, "surface": "editing"})
    assert started.status_code == 200, started.text
    return str(started.json()["session_id"])


def events(client: httpx.Client, session_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = client.get(f"/api/sessions/{session_id}/events").json()["events"]
    return found


def open_session(browser: Browser, server: Server, session_id: str, **context: Any) -> Page:
    page = browser.new_context(**context).new_page()
    page.goto(server.login_url)
    page.goto(f"{server.url}/sessions/{session_id}")
    return page


def test_check_cards_and_the_evidence_table_take_the_colour_of_the_checks_outcome(
    browser: Browser, tmp_path: Path
) -> None:
    with running_server(tmp_path) as server:
        log = logged_session(server, "s_checks")
        for call, phase, outcome in (("c1", "baseline", "failed"), ("c2", "verify", "passed")):
            arguments = {"check_id": "unit", "phase": phase}
            log.append("tool.started", {"call_id": call, "tool": "run_check", "arguments": arguments})
            data = {**arguments, "outcome": outcome, "tests_run": 2}
            output = f"{outcome} (exit {int(outcome == 'failed')}, 2 tests)"
            ended = {"call_id": call, "tool": "run_check", "status": "ok", "output": output, "data": data}
            log.append("tool.ended", ended)
        evidence = {"applied": True, "verified": True, "criteria_supported": True, "verification": "verified"}
        log.append("evidence.reported", {**evidence, "changed_files": ["dates.py"], "notes": []})
        log.append("run.ended", {"status": "completed", "summary": "done"})
        page = open_session(browser, server, "s_checks")
        page.wait_for_selector("#evidence:not([hidden])")
        page.screenshot(path=str(tmp_path / "checks.png"), full_page=True)
        failed, passed = ".card[data-call-id=c1]", ".card[data-call-id=c2]"
        assert "status-failed" in classes(page, failed) and "status-ok" not in classes(page, failed)
        assert page.locator(f"{failed} .status").inner_text() == "failed"
        assert style(page, failed, "borderLeftColor") == RED
        assert "status-passed" in classes(page, passed) and style(page, passed, "borderLeftColor") == GREEN
        cells = page.locator("#evidence td.outcome")
        assert cells.all_inner_texts() == ["failed", "passed"]
        assert "outcome-failed" in (cells.first.get_attribute("class") or "")
        assert style(page, "td.outcome", "color") == RED


def test_a_pending_approval_is_sticky_in_view_focused_counted_in_title_and_list_and_notified(
    browser: Browser, tmp_path: Path
) -> None:
    date_repo(tmp_path)
    script = fix_script(tmp_path / "turns.jsonl")
    viewport = {"width": 1000, "height": 420}
    with running_server(tmp_path) as server, server.client() as client:
        session_id = start(client, script, "ask")
        page = open_session(browser, server, session_id, viewport=viewport, permissions=["notifications"])
        listing = page.context.new_page()
        listing.goto(f"{server.url}/")
        page.wait_for_selector("#approvals .approval")
        page.screenshot(path=str(tmp_path / "pending.png"))
        for scroll in ("0", "document.body.scrollHeight"):
            page.evaluate(f"window.scrollTo(0, {scroll})")
            for shown in ("#approvals", "#approvals button.approve", "#approvals button.deny"):
                box = page.locator(shown).first.bounding_box()
                assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"] + 1, shown
        assert page.evaluate("document.activeElement.matches('#approvals .approval button.approve')")
        assert page.title().startswith("(1) approval needed")
        waiting = page.locator("#approvals .approval").first.get_attribute("data-call-id")
        assert "status-waiting" in classes(page, f".card[data-call-id='{waiting}']")
        assert page.get_attribute("body", "data-notified") == "1"
        listing.wait_for_selector(f".sessions li[data-session-id='{session_id}'] .badge.pending")
        assert listing.locator(".badge.pending").inner_text() == "1 approval waiting"
        assert listing.title().startswith("(1) approval needed")

        page.keyboard.press("Enter")  # the focused button approves
        deadline = time.monotonic() + 60
        while not page.locator("#evidence").is_visible():
            assert time.monotonic() < deadline, "the run did not end"
            prompt = page.locator("#approvals .approval:has(button.approve:enabled)").first
            if prompt.count() and prompt.get_attribute("data-call-id") != waiting:
                waiting = prompt.get_attribute("data-call-id")
                prompt.locator("button.approve").click()
            time.sleep(0.05)
        page.wait_for_selector("#approvals", state="hidden")
        assert not page.title().startswith("(")
        listing.wait_for_selector(f".sessions li[data-session-id='{session_id}'].status-completed")
        assert listing.locator(".badge.pending").count() == 0


def test_auto_approved_calls_never_render_an_approval_box(browser: Browser, tmp_path: Path) -> None:
    date_repo(tmp_path)
    script = fix_script(tmp_path / "turns.jsonl")
    with running_server(tmp_path) as server, server.client() as client:
        context = browser.new_context()
        context.add_init_script(COUNT_APPROVAL_BOXES)
        page = context.new_page()
        page.goto(server.login_url)
        page.goto(f"{server.url}/")
        page.fill("textarea[name=objective]", OBJECTIVE)
        page.fill("input[name=repo]", "repo")
        page.fill("input[name=model]", f"scripted:{script}")
        page.select_option("select[name=approval]", "auto")
        page.select_option("select[name=surface]", "editing")
        page.click("#new-run button[type=submit]")
        page.wait_for_url("**/sessions/*")
        page.wait_for_selector("#evidence:not([hidden])")
        session_id = page.url.rsplit("/", 1)[1]
        decided = [e["payload"] for e in events(client, session_id) if e["type"] == "approval.decided"]
        assert decided and all(d["source"] == "policy" and d["decision"] == "allow" for d in decided)
        assert page.evaluate("window.__approvalBoxes") == 0
        assert page.locator(".approval, .card.status-waiting").count() == 0
        page.reload()
        page.wait_for_selector("#evidence:not([hidden])")
        assert page.locator(".approval").count() == 0


def test_a_running_command_streams_its_output_and_a_stopped_one_shows_cancelled_with_it(
    browser: Browser, tmp_path: Path
) -> None:
    repo = date_repo(tmp_path)
    command = "!echo first-line; sleep 0.5; echo live-output-marker; sleep 987.5"
    with running_server(tmp_path) as server, server.client() as client:
        started = client.post("/api/runs", json={"objective": command, "repo": str(repo), "approval": "auto"})
        session_id = started.json()["session_id"]
        page = open_session(browser, server, session_id)
        card = ".card[data-tool=shell]"
        page.wait_for_selector(f"{card} pre.live:has-text('live-output-marker')")
        assert page.locator(f"{card} pre.live").inner_text().startswith("first-line\n")
        assert page.locator(f"{card} .status").inner_text() == "running"
        page.screenshot(path=str(tmp_path / "live.png"), full_page=True)
        page.click("#cancel")
        page.wait_for_selector(f"{card}.status-cancelled")
        assert page.locator(f"{card} .status").inner_text() == "cancelled"
        text = page.locator(card).text_content() or ""
        assert "live-output-marker" in text and "cancelled: the run was stopped" in text
        page.wait_for_selector(".run-ended.run-cancelled")


def test_a_resumed_session_shows_only_the_current_runs_evidence(browser: Browser, tmp_path: Path) -> None:
    date_repo(tmp_path)
    script = fix_script(tmp_path / "turns.jsonl")
    second = write_script(tmp_path / "second.jsonl", [final_turn("Nothing more to change.", role="architect")])
    with running_server(tmp_path) as server, server.client() as client:
        session_id = start(client, script, "auto")
        page = open_session(browser, server, session_id)
        page.wait_for_selector("#evidence:not([hidden])")
        assert page.locator("#evidence td.outcome").all_inner_texts() == ["failed", "passed"]  # baseline, verify
        body = {"text": "anything else?", "model": f"scripted:{second}", "approval": "ask", "surface": "editing"}
        assert client.post(f"/api/sessions/{session_id}/messages", json=body).status_code == 200
        page.wait_for_selector("#approvals .approval")
        assert page.locator("#evidence").is_hidden(), "the previous run's evidence leaves the screen"
        denied = 0
        deadline = time.monotonic() + 60
        while page.locator(".run-ended").count() < 2:
            assert time.monotonic() < deadline, "the second run did not end"
            prompt = page.locator("#approvals .approval:has(button.deny:enabled)").first
            if prompt.count():
                call_id = prompt.get_attribute("data-call-id")
                prompt.locator("button.deny").click()
                page.wait_for_selector(f"#approvals .approval[data-call-id='{call_id}']", state="detached")
                denied += 1
            time.sleep(0.05)
        page.wait_for_selector("#evidence:not([hidden])")
        outcomes = page.locator("#evidence td.outcome").all_inner_texts()
        assert denied >= 1 and outcomes == ["denied"] * denied, "only this run's checks are listed"
        shown = page.locator("#evidence").inner_text()
        page.reload()
        page.wait_for_selector("#evidence:not([hidden])")
        assert page.locator("#evidence").inner_text() == shown


def test_agent_text_is_markdown_and_nothing_it_contains_becomes_markup(browser: Browser, tmp_path: Path) -> None:
    text = (
        "## Plan\n\nFix **parse_date** in `dates.py`:\n\n- swap *month* and day\n- run the tests\n\n"
        "```python\nreturn int(year), int(month)\n```\n\n"
        "<img src=x onerror=\"document.body.dataset.owned='1'\"> [click](javascript:alert(1)) "
        "[docs](https://example.com/a?b=1&c=2)"
    )
    with running_server(tmp_path) as server:
        log = logged_session(server, "s_md")
        log.append("model.completed", {"text": text, "tool_calls": []}, agent="architect")
        log.append("run.ended", {"status": "completed", "summary": "**done**"})
        page = open_session(browser, server, "s_md")
        page.wait_for_selector(".run-ended")
        md = page.locator(".msg.assistant .md").first
        assert md.locator("h4").inner_text() == "Plan"
        assert md.locator("strong").inner_text() == "parse_date" and md.locator("code").first.inner_text() == "dates.py"
        assert md.locator("li").all_inner_texts() == ["swap month and day", "run the tests"]
        assert md.locator("pre.code").inner_text() == "return int(year), int(month)"
        assert page.locator("#transcript img").count() == 0 and page.get_attribute("body", "data-owned") is None
        assert "<img src=x" in md.inner_text()
        assert md.locator("a").count() == 1 and md.locator("a").get_attribute("href") == "https://example.com/a?b=1&c=2"
        assert page.locator(".summary .md strong").inner_text() == "done"


def test_tool_cards_are_collapsed_one_line_titles_so_a_long_session_stays_short(
    browser: Browser, tmp_path: Path
) -> None:
    output = "\n".join(f"{n}: line of a long file" for n in range(300))
    with running_server(tmp_path) as server:
        log = logged_session(server, "s_long")
        for n in range(60):
            call = f"c{n}"
            log.append("tool.started", {"call_id": call, "tool": "read_file", "arguments": {"path": f"src/m{n}.py"}})
            log.append("tool.ended", {"call_id": call, "tool": "read_file", "status": "ok", "output": output})
        log.append("run.ended", {"status": "completed", "summary": "read them all"})
        page = open_session(browser, server, "s_long", viewport={"width": 1000, "height": 800})
        page.wait_for_selector(".run-ended")
        page.screenshot(path=str(tmp_path / "collapsed.png"), full_page=True)
        cards = page.locator(".card")
        assert cards.count() == 60 and page.locator(".card[open]").count() == 0
        heights = page.eval_on_selector_all(".card", "(cards) => cards.map((c) => c.getBoundingClientRect().height)")
        assert max(heights) < 40, heights[:3]
        assert page.locator(".card[data-call-id=c7] .title").inner_text() == "src/m7.py"
        assert page.evaluate("document.documentElement.scrollHeight") < 60 * 40 + 800
        page.locator(".card[data-call-id=c7] summary").click()
        assert "299: line of a long file" not in page.locator(".card[data-call-id=c7] pre").inner_text()  # 60 lines
        assert "59: line of a long file" in page.locator(".card[data-call-id=c7] pre").inner_text()


def test_the_changes_view_shows_the_sessions_whole_diff_from_its_log(browser: Browser, tmp_path: Path) -> None:
    date_repo(tmp_path)
    script = fix_script(tmp_path / "turns.jsonl")
    with running_server(tmp_path) as server, server.client() as client:
        session_id = start(client, script, "auto")
        page = open_session(browser, server, session_id)
        page.wait_for_selector("#evidence:not([hidden])")
        page.click(".tabs button[data-tab=changes]")
        page.wait_for_selector("#changes .diff")
        page.screenshot(path=str(tmp_path / "changes.png"), full_page=True)
        assert page.locator("#transcript").is_hidden()
        assert page.locator("#changes h3").inner_text() == "1 file(s) changed in this session"
        assert page.locator("#changes .changed-files li").inner_text().startswith("dates.py modified")
        diff = page.locator("#changes .diff")
        assert diff.locator(".file").inner_text().strip() == "diff --git a/dates.py b/dates.py"
        assert diff.locator(".del").inner_text().strip() == "-    return int(year), int(day), int(month)"
        assert diff.locator(".add").inner_text().strip() == "+    return int(year), int(month), int(day)"
        page.click(".tabs button[data-tab=transcript]")
        assert page.locator("#changes").is_hidden() and page.locator("#transcript").is_visible()


def test_the_session_list_refreshes_live_with_status_repository_and_time_and_offers_repos_and_models(
    browser: Browser, tmp_path: Path
) -> None:
    date_repo(tmp_path)
    date_repo(tmp_path / "other")
    script = write_script(tmp_path / "turns.jsonl", [final_turn("Hello.", role="architect")])
    with running_server(tmp_path) as server, server.client() as client:
        page = browser.new_page()
        page.goto(server.login_url)
        page.wait_for_selector("body[data-listed='0']")
        repos = page.eval_on_selector_all("#repo-options option", "(os) => os.map((o) => o.value)")
        assert repos == [".", "other/repo", "repo"]
        models = page.eval_on_selector_all("#model-options option", "(os) => os.map((o) => o.value)")
        assert models[0] == "local" and "anthropic:" in models
        body = {"objective": "say hello", "repo": "repo", "model": f"scripted:{script}", "surface": "conversation"}
        session_id = client.post("/api/runs", json=body).json()["session_id"]
        row = page.locator(f".sessions li[data-session-id='{session_id}']")
        row.wait_for()  # no reload: the list refreshes itself
        page.wait_for_selector(f".sessions li[data-session-id='{session_id}'].status-completed")
        assert row.locator(".status-label").inner_text() == "completed"
        assert row.locator(".repo").inner_text().endswith("repo") and row.locator(".time").inner_text() == "just now"
        assert row.locator(".model").inner_text() == f"scripted:{script}"
        page.screenshot(path=str(tmp_path / "list.png"), full_page=True)
        page.reload()
        page.wait_for_selector("body[data-listed='1']")
        models = page.eval_on_selector_all("#model-options option", "(os) => os.map((o) => o.value)")
        assert f"scripted:{script}" in models, "a model sessions used is offered"
