"""Per-variant implicit and manual preferences set through ``protoagent skills set`` take effect in
runs; ``skills list``/``show``/``validate`` are read routes that create or change no file."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pexpect
import pytest
from typer.testing import CliRunner

from protoagent.events import Event, MemoryStore
from protoagent.interfaces.cli.app import app
from protoagent.skills.activation import manual_off_message
from protoagent.skills.yaml_cache import CACHE_FILE
from protoagent.testing import ScriptedModel, final_turn, make_repo, write_script
from protoagent.workflow.run import RunOptions, run_task

from .support import write_skill

GUIDE = "name: date-guide\ndescription: Explain date parsing code."


def _cli(home: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["skills", *args], env={"PROTOAGENT_HOME": str(home)})
    return result.exit_code, result.stdout, result.stderr


def _repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo", {"dates.py": "def parse_date(s):\n    return s\n"})
    write_skill(
        root / ".agents/skills", "date-guide", GUIDE, "# Date guide\nAnswer with the function's file and line.\n"
    )
    return root


def _listed(home: Path, repo: Path) -> dict[str, Any]:
    code, out, _ = _cli(home, "list", "--repo", str(repo), "--json")
    assert code == 0
    return {s["name"]: s for s in json.loads(out)["skills"]}


def _run(
    tmp_path: Path, repo: Path, objective: str, turns: Sequence[Mapping[str, Any]], resolver: bool | None = None
) -> tuple[list[Event], ScriptedModel]:
    model = ScriptedModel.from_lines(turns)
    store = MemoryStore()
    options = RunOptions(
        repo=repo,
        model="scripted:inline",
        store=store,
        approval="auto",
        surface="question",
        provider=model,
        data_home=tmp_path / "home",
        artifacts_root=tmp_path / "artifacts",
        skill_resolver=resolver,
    )
    report = asyncio.run(run_task(objective, options))
    return store.load(report.session_id), model


def test_set_implicit_and_manual_shows_in_list_and_show_and_reset_restores_defaults(tmp_path: Path) -> None:
    repo, home = _repo(tmp_path), tmp_path / "home"
    skill_file = repo / ".agents/skills/date-guide/SKILL.md"
    before = skill_file.read_bytes()
    assert _listed(home, repo)["date-guide"]["preferences"] == {
        "implicit": True,
        "manual": True,
        "modes": ["coding", "work"],
    }

    code, out, _ = _cli(home, "set", "date-guide", "--implicit", "off", "--manual", "off", "--repo", str(repo))
    assert code == 0 and out.startswith("date-guide: implicit off, manual off")
    entry = _listed(home, repo)["date-guide"]
    assert entry["implicit"] is False and entry["manual"] is False
    assert entry["preferences"]["implicit"] is False and entry["availability"] == {"work": True, "coding": True}
    code, text, _ = _cli(home, "list", "--repo", str(repo))
    assert "implicit:off manual:off" in next(line for line in text.splitlines() if line.startswith("date-guide"))
    code, shown, _ = _cli(home, "show", "date-guide", "--repo", str(repo))
    assert "preferences: implicit off, manual off, modes coding,work" in shown

    assert _cli(home, "set", "date-guide", "--manual", "on", "--repo", str(repo))[0] == 0
    assert _listed(home, repo)["date-guide"]["preferences"]["manual"] is True
    assert _listed(home, repo)["date-guide"]["preferences"]["implicit"] is False  # the other flag is kept
    assert _cli(home, "reset", "date-guide", "--repo", str(repo))[0] == 0
    assert _listed(home, repo)["date-guide"]["implicit"] is True
    assert skill_file.read_bytes() == before  # preferences never rewrite SKILL.md


def test_set_without_a_flag_or_with_a_bad_value_is_a_one_line_error(tmp_path: Path) -> None:
    repo, home = _repo(tmp_path), tmp_path / "home"
    code, _, err = _cli(home, "set", "date-guide", "--repo", str(repo))
    assert code == 2 and err.strip().startswith("error: say what to change") and len(err.strip().splitlines()) == 1
    assert _cli(home, "set", "date-guide", "--implicit", "maybe", "--repo", str(repo))[0] == 2
    assert not (home / "skill-settings.json").exists()


def test_implicit_on_for_a_policy_manual_only_skill_says_the_policy_still_applies(tmp_path: Path) -> None:
    repo, home = _repo(tmp_path), tmp_path / "home"
    policy = "policy:\n  allow_implicit_invocation: false\n"
    write_skill(
        repo / ".agents/skills", "deploy", "name: deploy\ndescription: Deploys.", files={"agents/openai.yaml": policy}
    )
    code, out, _ = _cli(home, "set", "deploy", "--implicit", "on", "--repo", str(repo))
    assert code == 0 and "allow_implicit_invocation: false" in out
    assert _listed(home, repo)["deploy"]["implicit"] is False


def test_implicit_off_skill_is_not_in_the_catalog_nor_resolved_implicitly(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    assert _cli(tmp_path / "home", "set", "date-guide", "--implicit", "off", "--repo", str(repo))[0] == 0
    turns = [
        {"role": "skill-resolver", "text": '{"skill": "date-guide", "confidence": 0.9}'},
        {"role": "architect", "text": "dates.py:1"},
    ]
    # "review" makes the built-in code-review plausible, so the resolver is asked (without date-guide).
    events, model = _run(tmp_path, repo, "review where the date parsing code is", turns, resolver=True)
    resolver_request = next(r for r in model.requests if r.agent_role == "skill-resolver")
    assert "date-guide" not in resolver_request.messages[0].content
    (resolved,) = [e for e in events if e.type == "skill.resolved"]
    assert resolved.payload["skill"] is None and "not an eligible skill" in resolved.payload["reason"]
    architect = next(r for r in model.requests if r.agent_role == "architect")
    assert "date-guide" not in architect.system and "code-review" in architect.system
    assert not [e for e in events if e.type == "skill.activated"]


def test_manual_off_skill_is_refused_by_slash_skill_with_a_one_line_message(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    assert _cli(tmp_path / "home", "set", "date-guide", "--manual", "off", "--repo", str(repo))[0] == 0
    events, model = _run(
        tmp_path, repo, "/skill:date-guide where is parse_date?", [{"role": "architect", "text": "dates.py:1"}]
    )
    (refusal,) = [e for e in events if e.type == "skill.resolved"]
    assert refusal.payload == {
        "skill": None,
        "source": "explicit",
        "refused": "date-guide",
        "reason": manual_off_message("date-guide"),
    }
    assert "\n" not in refusal.payload["reason"] and "--manual on" in refusal.payload["reason"]
    assert not [e for e in events if e.type == "skill.activated"]
    architect = next(r for r in model.requests if r.agent_role == "architect")
    assert not [m for m in architect.messages if m.name == "skill"]
    assert "date-guide: Explain date parsing code." in architect.system  # implicit use is still on


def _tree(root: Path) -> dict[str, tuple[int, int, int, str]]:
    """Every file and folder under ``root`` with its mode, size, mtime and content hash."""
    if not root.exists():
        return {}
    found = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        found[str(path.relative_to(root))] = (info.st_mode, info.st_size if digest else 0, info.st_mtime_ns, digest)
    return found


@pytest.mark.parametrize("home_exists", [True, False])
def test_skills_list_show_validate_create_or_change_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home_exists: bool
) -> None:
    repo, home = _repo(tmp_path), tmp_path / "home"
    if home_exists:
        write_skill(home / "skills", "outline", "name: outline\ndescription: Outline a talk.")
        assert _cli(home, "set", "outline", "--manual", "off", "--repo", str(repo))[0] == 0
    # Shapes the fast path leaves to ruamel.yaml, new to this process: before, every read route
    # cached their parses in the data home.
    unique = hashlib.sha256(str(tmp_path).encode()).hexdigest()[:12]
    write_skill(
        repo / ".claude/skills",
        "anchored",
        f"name: anchored\ndescription: &d Uses an anchor {unique}.\nsummary: *d",
        files={"agents/openai.yaml": f"interface: {{display_name: Anchored {unique}}}\n"},
    )
    before = (_tree(home), _tree(repo))
    monkeypatch.chdir(repo)
    for args in (
        ("list", "--repo", str(repo)),
        ("list", "--repo", str(repo), "--mode", "work", "--json"),
        ("show", "anchored", "--repo", str(repo), "--json"),
        ("show", "date-guide", "--repo", str(repo)),
        ("validate",),
        ("validate", str(repo / ".claude/skills"), "--json"),
    ):
        code, _, err = _cli(home, *args)
        assert code == 0, (args, err)
    assert (_tree(home), _tree(repo)) == before
    assert home.exists() is home_exists


def test_a_run_bootstrap_keeps_the_parse_cache_that_read_routes_only_read(tmp_path: Path) -> None:
    repo, home = _repo(tmp_path), tmp_path / "home"
    unique = hashlib.sha256(str(tmp_path).encode()).hexdigest()[:12]
    write_skill(repo / ".claude/skills", "anchored", f"name: anchored\ndescription: &d Anchor {unique}.\nsummary: *d")
    home.mkdir()
    assert _cli(home, "list", "--repo", str(repo))[0] == 0
    assert not (home / CACHE_FILE).exists()
    _run(tmp_path, repo, "where is parse_date?", [{"role": "architect", "text": "dates.py:1"}])
    cached = json.loads((home / CACHE_FILE).read_text(encoding="utf-8"))
    assert any(f"Anchor {unique}." in parsed for parsed in cached["entries"].values())


def test_manual_off_refusal_is_one_line_in_protoagent_run_and_chat(tmp_path: Path) -> None:
    repo, home = _repo(tmp_path), tmp_path / "home"
    assert _cli(home, "set", "date-guide", "--manual", "off", "--repo", str(repo))[0] == 0
    script = write_script(tmp_path / "turns.jsonl", [final_turn("dates.py:1", role="architect")])
    env = {**os.environ, "PROTOAGENT_HOME": str(home), "NO_COLOR": "1", "TERM": "dumb"}
    args = ["--model", f"scripted:{script}", "--repo", str(repo), "--approval", "auto"]
    done = subprocess.run(
        [sys.executable, "-m", "protoagent", "run", *args, "/skill:date-guide where is parse_date?"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    refusal = f"skill not activated: {manual_off_message('date-guide')}"
    assert " ".join(refusal.split()) in " ".join(done.stdout.split())  # the terminal may wrap it

    chat = pexpect.spawn(
        sys.executable,
        ["-m", "protoagent", "chat", "--repo", str(repo), "--model", f"scripted:{script}"],
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(50, 300),
    )
    try:
        chat.expect_exact("you› ")
        chat.sendline("/skill:date-guide where is parse_date?")
        chat.expect_exact("error: skill 'date-guide' has manual invocation turned off")
        chat.expect_exact("--manual on")
        chat.expect_exact("you› ")
        chat.sendline("/exit")
        chat.expect(pexpect.EOF)
    finally:
        chat.close(force=True)
