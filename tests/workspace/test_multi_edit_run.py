"""Through the CLI: three spans of one file take Coder one request (one edit_file call, one
approval, one receipt), where one pair per call took three."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from tests.app.support import cli as _cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "date-parser"
OBJECTIVE = "fix the failing date parser test"
SPANS = [
    ('"""Parse ISO calendar dates."""\n', '"""Parse ISO 8601 calendar dates."""\n'),
    ('    year, month, day = text.strip().split("-")\n', '    year, month, day = text.strip().split("-", 2)\n'),
    ("    return int(year), int(day), int(month)\n", "    return int(year), int(month), int(day)\n"),
]


def _turn(role: str, *calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"role": role, "text": "", "tool_calls": [{"name": n, "arguments": a} for n, a in calls]}


def test_a_three_span_edit_takes_one_coder_request(tmp_path: Path) -> None:
    repo = tmp_path / "date-parser"
    shutil.copytree(EXAMPLE, repo)
    source = (repo / "dates.py").read_text()
    edit = {
        "path": "dates.py",
        "edits": [{"old": old, "new": new} for old, new in SPANS],
        "expected_revision": hashlib.sha256(source.encode()).hexdigest(),
    }
    turns = [
        _turn(
            "architect",
            ("coder", {"task": "In dates.py fix the field order, split at most twice, and say ISO 8601."}),
            ("run_check", {"check_id": "unittest", "phase": "verify"}),
        ),
        _turn("coder", ("edit_file", edit), ("report_task", {"status": "done", "summary": "three spans edited"})),
    ]
    script = tmp_path / "turns.jsonl"
    script.write_text("".join(json.dumps(t) + "\n" for t in turns))
    home = tmp_path / "home"
    run = _cli(
        home, "run", "--model", f"scripted:{script}", "--repo", str(repo), "--approval", "auto", "--json", OBJECTIVE
    )
    assert run.returncode == 0, run.stderr + run.stdout
    report = json.loads(run.stdout)
    assert (report["status"], report["applied"], report["verified"]) == ("completed", True, True), report
    expected = source
    for old, new in SPANS:
        expected = expected.replace(old, new)
    assert (repo / "dates.py").read_text() == expected
    events = json.loads(_cli(home, "sessions", "show", report["session_id"], "--json").stdout)["events"]
    assert [e["agent"] for e in events if e["type"] == "model.requested"] == ["architect", "coder"]
    edits = [e for e in events if e["type"] == "tool.ended" and e["payload"]["tool"] == "edit_file"]
    assert len(edits) == 1, "one call, one receipt"
    (approval,) = [e for e in events if e["type"] == "approval.requested" and e["payload"]["tool"] == "edit_file"]
    preview = approval["payload"]["preview"]
    assert preview.count("--- a/dates.py") == 1 and all(f"+{new}" in preview for _, new in SPANS)
