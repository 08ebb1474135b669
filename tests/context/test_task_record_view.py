"""The task record in a conversation: shown once, updates appended, consolidated when eviction moves."""

from __future__ import annotations

import itertools

from protoagent.context.record_view import TASK_RECORD_MARK, UPDATE_MARK, record_update
from protoagent.hooks.admission import ContextAdmissionHook
from protoagent.models.types import ModelRequest

from .support import Conversation, big

FIRST = "objective: fix the parser\nselected_check_ids: []"


def records(request: ModelRequest) -> list[str]:
    return [m.content for m in request.messages if m.content.startswith((TASK_RECORD_MARK, UPDATE_MARK))]


def test_each_request_extends_the_previous_one_across_record_changes() -> None:
    chat = Conversation(agent="architect")
    chat.user("fix the parser")
    record = {"text": FIRST}
    hook = ContextAdmissionHook(task_record=lambda _tools: record["text"])
    requests = []
    for n in range(6):
        chat.batch(("search_regex", f"result {n}"))
        if n == 2:
            record["text"] = FIRST + "\nreport from coder: done — fixed"
        if n == 4:
            record["text"] = FIRST.replace("[]", '["python-tests"]') + "\nreport from coder: done — fixed"
        requests.append(hook(chat.request(), chat.events))
    for earlier, later in itertools.pairwise(requests):
        assert later.messages[: len(earlier.messages)] == earlier.messages
    assert records(requests[-1]) == [
        f"{TASK_RECORD_MARK}\n{FIRST}",
        f"{UPDATE_MARK}\nreport from coder: done — fixed",
        f'{UPDATE_MARK}\nselected_check_ids: ["python-tests"]',
    ]


def test_a_record_update_names_new_lines_and_lines_nothing_replaced() -> None:
    old = "objective: o\nplan: frozen\nreport from coder: needs_context — window ended"
    new = "objective: o\nreport from coder: done — fixed"
    assert record_update(old, new) == "report from coder: done — fixed\nremoved: plan: frozen"


def test_a_new_conversation_of_the_same_agent_shows_the_current_record_whole() -> None:
    record = {"text": FIRST}
    hook = ContextAdmissionHook(task_record=lambda _tools: record["text"])
    first = Conversation(agent="coder")
    first.user("Assignment: first")
    first.batch(("search_regex", "x"))
    hook(first.request(), first.events)
    record["text"] = FIRST + "\nreport from coder: done — fixed"
    second = Conversation(agent="coder")
    second.user("Assignment: second")
    assert records(hook(second.request(), second.events)) == [f"{TASK_RECORD_MARK}\n{record['text']}"]


def test_when_eviction_moves_the_record_is_shown_whole_again_without_updates() -> None:
    chat = Conversation()
    chat.user("TASK: fix the parser")
    record = {"text": FIRST}
    hook = ContextAdmissionHook(window=4096, task_record=lambda _tools: record["text"])
    chat.batch(("read_file", "small"))
    hook(chat.request(), chat.events)
    record["text"] = FIRST + "\nreport from coder: done — fixed"
    chat.batch(("read_file", "small again"))
    assert len(records(hook(chat.request(), chat.events))) == 2  # the record and one update
    for n in range(6):
        chat.batch(("read_file", big(f"r{n}", 3000)))
    admitted = hook(chat.request(), chat.events)
    assert hook.last_report is not None and hook.last_report.evicted_message_count > 0
    assert records(admitted) == [f"{TASK_RECORD_MARK}\n{record['text']}"]
