"""Items 5 and 6: deep, huge or malformed model arguments become a rejected call, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

from protoagent.models.json_actions import parse_action
from protoagent.models.tool_arguments import MAX_ARGUMENT_CHARS, UNPARSED_KEY, parse_arguments
from protoagent.models.types import ToolSchema
from protoagent.testing import final_turn, make_repo

from .support import cli

DEEP = "[" * 100_000 + "]" * 100_000
HUGE = json.dumps({"path": "a.py", "content": "x" * (10 * 1024 * 1024)})
OVER = {"path": "big.py", "content": "x" * (MAX_ARGUMENT_CHARS + 1)}
READ = ToolSchema("read_file", "read", {"type": "object", "properties": {"path": {"type": "string"}}})


def test_deeply_nested_arguments_on_the_native_path_become_a_bounded_marker() -> None:
    for raw in (DEEP, '{"a":' * 50_000 + "1" + "}" * 50_000, '{"a":' + "[" * 200 + "]" * 200 + "}"):
        parsed = parse_arguments(raw)
        assert set(parsed) == {UNPARSED_KEY, "_problem"}
        assert "nested" in parsed["_problem"] and len(json.dumps(parsed)) < 1000


def test_deeply_nested_reply_on_the_json_action_path_is_not_an_action() -> None:
    turn = parse_action(DEEP, [READ])
    assert turn.tool_calls == ()
    nested = '{"type":"tool_call","tool":"read_file","args":{"p":' + "[" * 500 + "]" * 500 + "}}"
    call = parse_action(nested, [READ]).tool_calls[0]
    assert "nested" in call.arguments["_problem"]


def test_ten_megabyte_argument_is_cut_to_an_excerpt() -> None:
    parsed = parse_arguments(HUGE)
    assert str(MAX_ARGUMENT_CHARS) in parsed["_problem"]
    assert len(json.dumps(parsed)) < 1000
    call = parse_action('{"type":"tool_call","tool":"create_file","args":' + HUGE + "}", [READ]).tool_calls[0]
    assert call.name == "create_file" and len(json.dumps(call.arguments)) < 1000


def test_oversized_and_deep_arguments_in_a_run_are_rejected_and_the_store_stays_small(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    lines = [
        json.dumps({"role": "architect", "tool_calls": [{"name": "create_file", "arguments": OVER}]}),
        _deep_line(),
        json.dumps(final_turn("done", role="architect")),
    ]
    script = tmp_path / "turns.jsonl"
    script.write_text("\n".join(lines) + "\n")
    home = tmp_path / "home"
    done = cli(
        home,
        "run",
        "--model",
        f"scripted:{script}",
        "--repo",
        str(repo),
        "--approval",
        "auto",
        "--json",
        "what is in a.py?",
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    session_id = json.loads(done.stdout)["session_id"]
    events = json.loads(cli(home, "sessions", "show", session_id, "--json").stdout)["events"]
    ended = [e["payload"] for e in events if e["type"] == "tool.ended"]
    assert [e["status"] for e in ended] == ["rejected", "rejected"]
    assert all(e["data"]["kind"] == "invalid_arguments" for e in ended)
    store_bytes = sum(p.stat().st_size for p in home.rglob("*") if p.is_file())
    print(f"T11 store after a 1 MiB+ argument and a 200-deep one: {store_bytes} bytes")
    assert store_bytes < 2 * 1024 * 1024
    assert not (repo / "big.py").exists()


def _deep_line(depth: int = 200) -> str:
    # Built as text: json.dumps itself cannot write thousands of levels.
    args = '{"path": ' + "[" * depth + "]" * depth + "}"
    return '{"role": "architect", "tool_calls": [{"name": "read_file", "arguments": ' + args + "}]}"


def test_scripted_model_line_nested_too_deeply_is_one_line_error_exit_2(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    script = tmp_path / "turns.jsonl"
    script.write_text(_deep_line(5000) + "\n")
    done = cli(tmp_path / "home", "run", "--model", f"scripted:{script}", "--repo", str(repo), "what is in a.py?")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr + done.stdout
    message = (done.stderr or done.stdout).strip()
    assert len(message.splitlines()) == 1 and "line 1" in message and "nested too deeply" in message
