"""Rewind and fork from the session page in a real headless Chromium: a refusal lists the file
changed outside the session and changes nothing; a confirmed rewind puts the files back byte for
byte and the page marks the hidden turns without removing them; a fork opens the new session."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from tests.checkpoints.support import three_turn_session

from protoagent.workflow.changes import user_turns

from .browsers import NEEDS_CHROMIUM
from .support import running_server

pytestmark = NEEDS_CHROMIUM
YOU = ".msg.user:has(.who:text-is('you'))"

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


def _tree(repo: Path) -> dict[str, bytes]:
    files = [p for p in sorted(repo.rglob("*")) if p.is_file() and ".git" not in p.parts]
    return {str(p.relative_to(repo)): p.read_bytes() for p in files}


def _tree_after_turn_1(tmp_path: Path, repo: Path) -> dict[str, bytes]:
    """The checkout as turn 1 left it: the committed files with a.py's first edit."""
    clean = tmp_path / "expected"
    subprocess.run(["git", "clone", "-q", str(repo), str(clean)], check=True)
    (clean / "a.py").write_text("A = 2\n")
    return _tree(clean)


def _open_session(page: Page, url: str, token: str, session_id: str) -> None:
    page.goto(f"{url}/?token={token}")
    page.goto(f"{url}/sessions/{session_id}")
    page.wait_for_selector("body[data-last-seq]")
    page.wait_for_selector("body[data-running=false]")


def _confirm(page: Page, turn: int, action: str) -> None:
    bar = page.locator(f".checkpoint[data-checkpoint='{turn}']")
    bar.locator(f"button.{action}").click()
    assert bar.locator(".confirm").is_visible(), "an action asks before it acts"
    bar.locator("button.confirm-yes").click()


def test_rewind_from_the_page_refuses_over_outside_work_then_restores_turn_1_and_marks_hidden_turns(
    browser: Browser, tmp_path: Path
) -> None:
    home, repo, sid = three_turn_session(tmp_path)
    expected = _tree_after_turn_1(tmp_path, repo)
    with running_server(tmp_path, store_path=home / "sessions.sqlite") as server:
        page = browser.new_page()
        _open_session(page, server.url, server.token, sid)
        assert page.locator(".checkpoint").count() == 4, "one checkpoint before the first turn and one after each"
        bar = page.locator(".checkpoint[data-checkpoint='1']")
        bar.locator("button.rewind-both").click()
        bar.locator("button.confirm-no").click()
        assert not bar.locator(".confirm").is_visible() and (repo / "a.py").read_text() == "A = 3\n"

        (repo / "c.py").write_text("C = 'mine'\n")  # someone else's work since the session wrote c.py
        before = _tree(repo)
        count = len(server.store.load(sid))
        _confirm(page, 1, "rewind-both")
        bar.locator(".conflicts li").first.wait_for()
        shown = bar.locator(".error").inner_text()
        assert "nothing was changed" in shown and "c.py changed outside the session" in shown
        assert _tree(repo) == before and len(server.store.load(sid)) == count, "a refusal changes nothing"

        (repo / "c.py").write_text("C = 2\n")  # the image the session left
        _confirm(page, 1, "rewind-both")
        page.wait_for_selector(".rewind-note")  # the page reloaded and shows the rewind from the log
        assert _tree(repo) == expected, "the files are byte-equal to turn 1's state"
        note = page.locator(".rewind-note").inner_text()
        assert "restored: a.py, c.py; removed: b.py" in note and "no longer sees turns 2, 3" in note
        hidden = page.locator(f"{YOU}.rewound")
        assert hidden.count() == 2, "turns 2 and 3 stay on the page, marked"
        assert "set A to 3" in page.locator("#transcript").inner_text(), "a hidden turn is not removed"
        assert page.locator(f"{YOU}:not(.rewound)").count() == 1
        assert page.locator(".checkpoint[data-checkpoint='3'] button.rewind-both").is_disabled()
        assert "rewound" in (page.locator("#evidence").get_attribute("class") or ""), "turn 3's evidence is marked too"
        rewound = [e for e in server.store.load(sid) if e.type == "session.rewound"]
        assert len(rewound) == 1 and rewound[0].payload["hidden_turns"] == [2, 3]


def test_fork_from_the_page_opens_a_new_session_holding_turn_1_only(browser: Browser, tmp_path: Path) -> None:
    home, repo, sid = three_turn_session(tmp_path)
    files = _tree(repo)
    with running_server(tmp_path, store_path=home / "sessions.sqlite") as server:
        page = browser.new_page()
        _open_session(page, server.url, server.token, sid)
        _confirm(page, 1, "fork")
        page.wait_for_url(lambda url: sid not in url and "/sessions/" in url)
        forked = page.url.rsplit("/", 1)[-1]
        page.wait_for_selector("body[data-last-seq]")
        assert page.locator(YOU).count() == 1 and page.locator(".checkpoint").count() == 2
        events = server.store.load(forked)
        assert len(user_turns(events)) == 1 and events[0].payload["forked_from"] == {"session_id": sid, "turn": 1}
        assert len(user_turns(server.store.load(sid))) == 3, "the original session stays as it is"
    assert _tree(repo) == files, "a fork touches no file"
