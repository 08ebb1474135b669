"""Keyword surface selection prefers the non-editing surface for a question that asks for no
change, and the chosen surface and its reason stay visible in the output and the session log."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from protoagent.workflow.contract import classify, select_contract

from .support import cli


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "dates.py").write_text("def parse(s):\n    return s\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    return repo


def _run(tmp_path: Path, objective: str, *json_flag: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "turns.jsonl"
    script.write_text(json.dumps({"role": "architect", "text": "Nothing has changed yet."}) + "\n", encoding="utf-8")
    repo = _repo(tmp_path)
    args = ["run", "--model", f"scripted:{script}", "--repo", str(repo), "--approval", "auto", *json_flag]
    return cli(tmp_path / "home", *args, objective)


@pytest.mark.parametrize(
    "objective",
    ["What did we change so far?", "Which files did we add and remove?", "How do I add a test for parse?"],
)
def test_an_interrogative_request_without_an_imperative_to_change_code_is_not_editing(
    tmp_path: Path, objective: str
) -> None:
    result = _run(tmp_path, objective, "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["surface"] == "question"
    assert report["changed_files"] == []


def test_the_chosen_surface_and_its_reason_stay_visible_for_a_question_with_edit_words(tmp_path: Path) -> None:
    result = _run(tmp_path, "What did we change so far?")
    assert result.returncode == 0, result.stderr
    assert "surface question (rules: a question about the repository; it asks for no change)" in result.stdout


@pytest.mark.parametrize(
    "objective",
    ["Can you fix the parser?", "Why does parse fail? Fix it.", "Explain the bug and fix it."],
)
def test_a_question_carrying_an_imperative_to_change_code_stays_editing(tmp_path: Path, objective: str) -> None:
    assert classify(objective) == ("editing", "asks for a change")


@pytest.mark.parametrize(
    ("objective", "read_only"),
    [
        # A behaviour the change must keep asks for a change.
        (
            "Add strip_attributes(data) to xmltodict: it returns a copy without modifying the input. Follow AGENTS.md.",
            False,
        ),
        ("Fix the rounding bug but don't change the public API.", False),
        ("Add a read-only property `name` to Config.", False),
        ("Refactor parse without changing behaviour, and don't touch tests/test_parse.py.", False),
        # Asking that nothing in the workspace change.
        ("Fix parse_date but don't change any files.", True),
        ("Explain how the cache works without editing anything.", True),
        ("read-only: where is the retry loop?", True),
        ("How does parse work? Don't modify the code, just explain.", True),
    ],
)
def test_only_asking_that_nothing_in_the_workspace_change_makes_the_run_read_only(
    objective: str, read_only: bool
) -> None:
    contract = asyncio.run(select_contract(objective))
    assert (contract.surface, contract.read_only) == (("question", True) if read_only else ("editing", False))
