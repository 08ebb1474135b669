"""The fold from session events to ACP updates, on real previews from the workspace tools."""

from __future__ import annotations

from protoagent.events.types import Event
from protoagent.interfaces.acp.updates import UpdateTranslator, diff_content, tool_kind
from protoagent.workspace.edits import whole_file_diff


def _event(seq: int, type: str, payload: dict[str, object], agent: str = "architect") -> Event:
    return Event(seq=seq, session_id="s_1", time=0.0, type=type, agent=agent, payload=payload)


def test_diff_content_of_an_edit_has_old_and_new_text() -> None:
    preview = whole_file_diff("a.py", "x = 1\ny = 2\n", "x = 1\ny = 3\n")
    diff = diff_content("a.py", preview)
    assert (diff.path, diff.old_text, diff.new_text) == ("a.py", "x = 1\ny = 2\n", "x = 1\ny = 3\n")


def test_diff_content_of_a_new_file_has_no_old_text() -> None:
    diff = diff_content("new.py", whole_file_diff("new.py", None, "print('hi')\n"))
    assert diff.old_text is None and diff.new_text == "print('hi')\n"


def test_tool_kinds_follow_the_tool_or_its_presentation() -> None:
    assert [tool_kind("edit_file"), tool_kind("read_file"), tool_kind("execute_command")] == ["edit", "read", "execute"]
    assert [tool_kind("mcp_x", "diff"), tool_kind("mcp_y", "terminal"), tool_kind("mcp_z")] == [
        "edit",
        "execute",
        "other",
    ]


def test_the_plan_advances_through_phases_and_assignments_and_completes_at_the_end() -> None:
    fold = UpdateTranslator()
    fold.translate(_event(1, "workflow.phase", {"phase": "edit"}, agent="main"))
    [update] = fold.translate(_event(2, "worker.started", {"role": "coder", "task": "fix it"}, agent="coder"))
    assert [(e.content, e.status) for e in update.entries] == [  # type: ignore[union-attr]
        ("phase: edit", "completed"),
        ("coder: fix it", "in_progress"),
    ]
    [done] = fold.translate(_event(3, "run.ended", {"status": "completed"}, agent="main"))
    assert {e.status for e in done.entries} == {"completed"}  # type: ignore[union-attr]


def test_worker_words_are_thoughts_and_the_architects_are_the_reply() -> None:
    fold = UpdateTranslator()
    [thought] = fold.translate(_event(1, "model.delta", {"text": "hm"}, agent="coder"))
    [reply] = fold.translate(_event(2, "model.delta", {"text": "done"}))
    assert (thought.session_update, reply.session_update) == ("agent_thought_chunk", "agent_message_chunk")


def test_permission_options_map_onto_the_three_approval_choices() -> None:
    from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

    from protoagent.interfaces.acp.permissions import OPTIONS, answer_from_response

    def chosen(option_id: str) -> tuple[bool, str]:
        answer = answer_from_response(
            RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option_id))
        )
        return answer.allow, answer.scope

    assert [o.kind for o in OPTIONS] == ["allow_once", "allow_always", "reject_once"]
    assert [chosen(o.option_id) for o in OPTIONS] == [(True, "once"), (True, "session"), (False, "once")]
    assert chosen("something-else") == (False, "once")
    cancelled = answer_from_response(RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled")))
    assert not cancelled.allow and "cancelled" in cancelled.reason


def test_a_call_id_a_later_run_repeats_gets_its_own_acp_id_and_updates_follow_it() -> None:
    fold = UpdateTranslator()
    created = {"preset": "p", "model": "m", "root": "/srv/repo", "approval_policy": "ask"}
    fold.translate(_event(1, "session.created", created, agent="main"))
    started = {"call_id": "verifier_1", "tool": "run_check", "arguments": {}}
    [first] = fold.translate(_event(2, "tool.started", started, agent="verifier"))
    fold.translate(_event(3, "session.resumed", {}, agent="main"))
    [second] = fold.translate(_event(4, "tool.started", started, agent="verifier"))
    ended = {"call_id": "verifier_1", "tool": "run_check", "status": "ok", "output": "passed"}
    [end] = fold.translate(_event(5, "tool.ended", ended, agent="verifier"))
    assert first.tool_call_id != second.tool_call_id  # type: ignore[union-attr]
    assert end.tool_call_id == second.tool_call_id  # type: ignore[union-attr]
    assert fold.tool_call_id("verifier", "verifier_1") == second.tool_call_id  # type: ignore[union-attr]


def test_locations_are_absolute_and_an_applied_edit_keeps_its_diff_beside_the_receipt() -> None:
    fold = UpdateTranslator()
    created = {"preset": "p", "model": "m", "root": "/srv/repo", "approval_policy": "auto"}
    fold.translate(_event(1, "session.created", created, agent="main"))
    arguments = {"path": "src/a.py", "old": "x = 1\n", "new": "x = 2\n", "expected_revision": "r"}
    started = {"call_id": "c1", "tool": "edit_file", "arguments": arguments, "presentation": "diff"}
    [start] = fold.translate(_event(2, "tool.started", started))
    assert start.locations[0].path == "/srv/repo/src/a.py"  # type: ignore[union-attr,index]
    ended = {"call_id": "c1", "tool": "edit_file", "status": "ok", "output": "edited src/a.py lines 1"}
    [end] = fold.translate(_event(3, "tool.ended", ended))
    diff, receipt = end.content  # type: ignore[union-attr,misc]
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == ("diff", "/srv/repo/src/a.py", "x = 1\n", "x = 2\n")
    assert receipt.content.text == "edited src/a.py lines 1"


def test_a_write_receipt_with_its_file_texts_shows_the_whole_file_diff_and_keeps_raw_output_small() -> None:
    fold = UpdateTranslator()
    created = {"preset": "p", "model": "m", "root": "/srv/repo", "approval_policy": "auto"}
    fold.translate(_event(1, "session.created", created, agent="main"))
    arguments = {"path": "a.py", "old": "y = 2\n", "new": "y = 3\n", "expected_revision": "r"}
    fold.translate(_event(2, "tool.started", {"call_id": "c1", "tool": "edit_file", "arguments": arguments}))
    data = {"path": "a.py", "preimage": "x = 1\ny = 2\n", "afterimage": "x = 1\ny = 3\n", "source_revision": "s"}
    ended = {"call_id": "c1", "tool": "edit_file", "status": "ok", "output": "edited a.py", "data": data}
    [end] = fold.translate(_event(3, "tool.ended", ended))
    diff = end.content[0]  # type: ignore[union-attr,index]
    assert (diff.path, diff.old_text, diff.new_text) == ("/srv/repo/a.py", "x = 1\ny = 2\n", "x = 1\ny = 3\n")
    assert end.raw_output == {"status": "ok", "data": {"path": "a.py", "source_revision": "s"}}  # type: ignore[union-attr]


def test_the_stop_reason_is_max_turn_requests_when_the_budget_or_the_leads_steps_ran_out() -> None:
    from protoagent.interfaces.acp.ending import RunWatch

    budget = RunWatch()
    budget.see(_event(1, "model.failed", {"error": "model-call budget spent", "limit": "model_calls"}, agent="coder"))
    steps = RunWatch()
    steps.see(_event(1, "turn.ended", {"status": "limit", "reason": "used all 8 steps"}))
    failed = RunWatch()
    failed.see(_event(1, "model.failed", {"error": "connection failed", "provider": "openai-compatible"}))
    failed.see(_event(2, "turn.ended", {"status": "failed", "reason": "connection failed"}))
    assert [w.stop_reason() for w in (budget, steps, failed)] == ["max_turn_requests", "max_turn_requests", "end_turn"]


def test_model_retries_and_failures_reach_the_editor_as_thoughts() -> None:
    fold = UpdateTranslator()
    [retry] = fold.translate(_event(1, "model.retrying", {"attempt": 2, "delay_s": 1.5, "error": "HTTP 503"}))
    [failure] = fold.translate(_event(2, "model.failed", {"error": "connection failed"}))
    assert retry.session_update == failure.session_update == "agent_thought_chunk"
    assert "retrying in 1.5s: HTTP 503" in retry.content.text  # type: ignore[union-attr]
    assert "model failed: connection failed" in failure.content.text  # type: ignore[union-attr]
