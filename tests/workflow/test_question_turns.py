"""A question turn that ends without an answer is reported incomplete, with the reason; a
read-only chain that keeps finding new evidence goes on within the shared run budget."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from protoagent.testing import make_repo, write_script

from .support import DATE_REPO, call, run_workflow, say

QUESTION = "where is the date parsing done, and how?"


def _alternating(steps: int) -> list[dict[str, Any]]:
    """Reads that alternate between two results: no step repeats the one before it, and after
    the first two nothing is new."""
    reads = [call("read_file", "architect", path="dates.py"), call("list_directory", "architect", path=".")]
    return [reads[i % 2] for i in range(steps)]


def test_a_question_window_that_ends_without_an_answer_or_new_evidence_is_incomplete(tmp_path: Path) -> None:
    run = run_workflow(tmp_path, QUESTION, _alternating(16), surface="question")
    assert run.json["status"] == "incomplete"
    assert "no answer after 2 window(s) of 8 steps; the last one found no new evidence" in run.json["notes"]
    assert len(run.requests("architect")) == 16
    assert [e.payload["window"] for e in run.of("workflow.continuing")] == [2]
    assert run.of("run.ended")[-1].payload["status"] == "incomplete"


def test_a_question_stopped_by_the_repeated_call_detector_is_incomplete_and_says_why(tmp_path: Path) -> None:
    turns = [call("read_file", "architect", path="dates.py") for _ in range(3)]
    run = run_workflow(tmp_path, QUESTION, turns, surface="question")
    assert run.json["status"] == "incomplete"
    assert "no answer: the model repeated the same call with the same result 3 times" in run.json["notes"]
    assert not run.of("workflow.continuing")


def test_a_read_only_chain_that_keeps_finding_evidence_continues_past_its_window_and_answers(
    tmp_path: Path,
) -> None:
    files = {**DATE_REPO, **{f"notes/n{i}.txt": f"note {i}\n" for i in range(10)}}
    reads = [call("read_file", "architect", path=f"notes/n{i}.txt") for i in range(10)]
    answer = "parse_date in dates.py splits on '-' and returns (year, day, month)."
    run = run_workflow(tmp_path, QUESTION, [*reads, say(answer, "architect")], files=files, surface="question")
    assert run.json["status"] == "completed"
    assert run.json["summary"] == answer
    assert [e.payload["window"] for e in run.of("workflow.continuing")] == [2]
    assert len(run.requests("architect")) == 11


def test_cli_exits_3_for_a_question_that_ran_out_of_steps(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", DATE_REPO)
    script = write_script(tmp_path / "turns.jsonl", _alternating(16))
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home")}
    argv = [sys.executable, "-m", "protoagent", "run", "--model", f"scripted:{script}", "--repo", str(repo)]
    result = subprocess.run(
        [*argv, "--surface", "question", "--json", QUESTION],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert result.returncode == 3, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "incomplete" and report["surface"] == "question"
    assert any(n.startswith("no answer after 2 window(s)") for n in report["notes"])
