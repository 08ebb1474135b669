"""A Coder assignment carries the files it names that no agent read, so the Coder edits them
without reading them first; hidden files, files outside the workspace and files already read are
never added (issue: cost of real work)."""

from __future__ import annotations

from pathlib import Path

from protoagent.workflow.named_files import NAMED_FILE_BUDGETS, NAMED_FILES_HEADER, named_paths, unread_named_spans

from .support import DATE_REPO, call, run_workflow, say, sha

NOTES = "".join(f"- note {n}\n" for n in range(1, 200)) + "- `parse_date` keeps the month\n"
FILES = {**DATE_REPO, "docs/notes.rst": NOTES, "CHANGELOG": "2.0\n- first\n", ".env": "TOKEN=secret\n"}


def test_a_coder_edits_a_file_its_assignment_names_without_reading_it_and_nothing_hidden_is_added(
    tmp_path: Path,
) -> None:
    task = "add '- dates fixed' to the top of CHANGELOG, fix `parse_date` in docs/notes.rst, never touch .env"
    changelog = FILES["CHANGELOG"]
    turns = [
        call("coder", "architect", task=task),
        call(
            "edit_file",
            "coder",
            path="CHANGELOG",
            old="2.0\n",
            new="2.1\n- dates fixed\n\n2.0\n",
            expected_revision=sha(changelog),
        ),
        call("report_task", "coder", status="done", summary="logged"),
        say("Done.", "architect"),
    ]
    run = run_workflow(tmp_path, "log the date fix", turns, files=FILES)
    (first, *_) = run.requests("coder")
    shown = "\n".join(m.content for m in first.messages)
    assert shown.count(NAMED_FILES_HEADER) == 1 and shown.count("--- CHANGELOG lines") == 1
    assert f"--- CHANGELOG lines 1-2 of 2; revision {sha(FILES['CHANGELOG'])}" in shown
    assert "--- docs/notes.rst lines 194-200 of 200" in shown and "200| - `parse_date` keeps the month" in shown
    assert "TOKEN=secret" not in shown and ".env lines" not in shown
    assert (run.root / "CHANGELOG").read_text() == "2.1\n- dates fixed\n\n2.0\n- first\n"
    (localized,) = [e for e in run.of("source.localized") if e.agent == "coder"]
    assert [span["path"] for span in localized.payload["spans"]] == ["CHANGELOG", "docs/notes.rst"]
    assert len(run.requests("coder")) == 2  # the edit, then nothing more: no read first


def test_only_files_inside_the_workspace_that_no_agent_read_are_named(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/a.rst").write_text("a\n")
    (tmp_path / "README").write_text("r\n")
    (tmp_path / ".env").write_text("x\n")
    (tmp_path / "AGENTS.md").write_text("- tests go in tests/\n")  # in every agent's instructions already
    text = "see docs/a.rst, ../outside.txt, .env, README, Readme, docs/missing.rst, AGENTS.md and docs/a.rst again"
    assert named_paths(text, tmp_path) == ["docs/a.rst", "README"]


def test_a_named_link_that_leads_out_of_the_workspace_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "docs/link.rst").symlink_to(outside)
    (root / "docs/real.rst").write_text("real\n")
    spans = unread_named_spans(root, "edit docs/link.rst and docs/real.rst", (), NAMED_FILE_BUDGETS["standard"])
    assert [s.path for s in spans] == ["docs/real.rst"]


def test_lines_an_assignment_names_in_a_file_the_lead_read_only_in_part_reach_the_coder(tmp_path: Path) -> None:
    module = "".join(f"def f{n}(x):\n    return x + {n}\n\n\n" for n in range(40))  # 160 lines
    task = "in calc.py f30 (line 122) must return x - 30"
    turns = [
        call("read_file", "architect", path="calc.py", start_line=1, end_line=8),  # f0, f1: not f30
        call("coder", "architect", task=task),
        say("Nothing done.", "coder"),
        say("Stopped.", "architect"),
    ]
    run = run_workflow(tmp_path, "f30 adds instead of subtracting", turns, files={**FILES, "calc.py": module})
    [packet] = [e.payload["text"] for e in run.of("context.injected") if e.agent == "coder"]
    assert NAMED_FILES_HEADER in packet and "--- calc.py lines 1-8 of 160" in packet
    assert " 121| def f30(x):" in packet and " 122|     return x + 30" in packet
    assert packet.count(" 1| def f0(x):") == 1  # what the lead read is not shown again
