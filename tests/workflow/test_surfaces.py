"""RunContract surfaces and the permissions that enforce them."""

from __future__ import annotations

from pathlib import Path

from .support import BUGGY, BUGGY_LINE, FIXED_LINE, call, run_workflow, say, sha


def test_conversation_surface_uses_architect_without_tools_or_task_machinery(tmp_path: Path) -> None:
    run = run_workflow(tmp_path, "hello", [say("Hi! What should we work on?", "architect")])
    assert run.json["surface"] == "conversation" and run.json["status"] == "completed"
    assert run.model.requests[0].tools == ()
    discovered = run.of("checks.discovered")[0].payload
    assert discovered["checks"] == []
    assert not run.of("workflow.phase")


def test_question_surface_reads_but_offers_no_coder_or_verifier_tools(tmp_path: Path) -> None:
    turns = [call("read_file", "architect", path="dates.py"), say("parse_date is in dates.py line 4", "architect")]
    run = run_workflow(tmp_path, "where is the date parser?", turns)
    assert run.json["surface"] == "question"
    offered = {t.name for t in run.model.requests[0].tools}
    assert offered == {"read_file", "list_directory", "search_regex", "code_context", "skill"}
    assert run.ended("read_file")[0].payload["status"] == "ok"
    assert run.json["applied"] is False and run.json["checks"] == []


def test_question_surface_denies_a_write_even_if_the_model_tries_one(tmp_path: Path) -> None:
    edit = call("edit_file", "architect", path="dates.py", old=BUGGY_LINE, new=FIXED_LINE, expected_revision=sha(BUGGY))
    run = run_workflow(tmp_path, "what does parse_date return?", [edit, say("I cannot edit here", "architect")])
    ended = run.ended("edit_file")[0].payload
    assert ended["status"] == "rejected" and ended["data"]["kind"] == "unknown_tool"
    assert (run.root / "dates.py").read_text() == BUGGY


def test_explicit_read_only_request_denies_writes(tmp_path: Path) -> None:
    turns = [
        call("coder", "architect", task="fix the swapped return in dates.py"),
        call("edit_file", "coder", path="dates.py", old=BUGGY_LINE, new=FIXED_LINE, expected_revision=sha(BUGGY)),
        say("could not write", "coder"),
        say("The edit was denied because you asked for no changes.", "architect"),
    ]
    run = run_workflow(tmp_path, "fix parse_date but don't change any files", turns, surface="editing")
    ended = run.ended("edit_file")[0].payload
    assert ended["status"] == "denied" and "no changes" in ended["output"]
    assert (run.root / "dates.py").read_text() == BUGGY
    assert run.json["applied"] is False and run.json["status"] == "incomplete"


def test_forced_surface_makes_no_classification_call(tmp_path: Path) -> None:
    run = run_workflow(tmp_path, "the parser is slow", [say("noted", "architect")], surface="conversation")
    assert [r.agent_role for r in run.model.requests] == ["architect"]
    assert run.of("run.contract")[0].payload["source"] == "forced"


def test_unclear_request_asks_the_model_for_one_structured_decision(tmp_path: Path) -> None:
    turns = [say('{"surface": "conversation"}', "router"), say("It may be slow.", "architect")]
    run = run_workflow(tmp_path, "the parser is slow", turns)
    contract = run.of("run.contract")[0].payload
    assert contract["surface"] == "conversation" and contract["source"] == "model"


def test_invalid_model_decision_falls_back_deterministically(tmp_path: Path) -> None:
    turns = [say("no idea", "router"), say("done nothing", "architect")]
    run = run_workflow(tmp_path, "the parser is slow", turns)
    contract = run.of("run.contract")[0].payload
    assert contract["surface"] == "editing" and contract["source"] == "fallback"


def test_verification_surface_runs_checks_without_a_model_and_denies_writes(tmp_path: Path) -> None:
    from .support import TESTS

    passing = {"dates.py": BUGGY.replace("int(day), int(month)", "int(month), int(day)"), "test_dates.py": TESTS}
    run = run_workflow(tmp_path, "run the tests", [], files=passing)
    assert run.json["surface"] == "verification"
    assert run.model.requests == []
    assert run.json["checks"] == [
        {
            "id": "unittest",
            "phase": "verify",
            "outcome": "passed",
            "tests_run": 1,
            "failed_tests": [],
            "preexisting_failures": [],
        }
    ]
    assert run.json["verified"] is True and run.json["status"] == "completed"
    assert run.json["applied"] is False


def test_verification_surface_reports_failing_checks_as_incomplete(tmp_path: Path) -> None:
    run = run_workflow(tmp_path, "run the tests", [])
    assert run.json["checks"][0]["outcome"] == "failed"
    assert run.json["verified"] is False and run.json["status"] == "incomplete"
    assert (run.root / "dates.py").read_text() == BUGGY


def test_optional_integrations_are_offered_only_when_enabled(tmp_path: Path) -> None:
    from protoagent.workflow.run import RunOptions

    default = run_workflow(tmp_path / "a", "fix parse_date", [say("nothing", "architect")])
    offered = {t.name for t in default.model.requests[0].tools}
    assert not offered & {"web_search", "fetch_url", "list_mcp_tools", "call_mcp_tool"}
    assert RunOptions.__dataclass_fields__["scout"].default is False

    enabled = run_workflow(tmp_path / "b", "fix parse_date", [say("nothing", "architect")], scout=True, mcp=True)
    offered = {t.name for t in enabled.model.requests[0].tools}
    assert {"web_search", "fetch_url", "list_mcp_tools", "mcp_tool_schema", "call_mcp_tool"} <= offered


def test_enabled_mcp_broker_is_wired_and_explains_missing_servers(tmp_path: Path) -> None:
    turns = [call("list_mcp_tools", "architect", server="docs"), say("no servers", "architect")]
    run = run_workflow(tmp_path, "fix parse_date", turns, mcp=True)
    ended = run.ended("list_mcp_tools")[0].payload
    assert ended["status"] == "rejected" and "no MCP servers are configured" in ended["output"]
