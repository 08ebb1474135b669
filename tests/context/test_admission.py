"""Context admission: whole-message eviction, the task record, explicit failure, windows."""

from __future__ import annotations

from dataclasses import replace

import pytest

from protoagent.context.admission import TASK_RECORD_MARK, admit_request
from protoagent.context.tokens import EstimatingCounter, common_prefix_ratio, estimate_request, render_prompt
from protoagent.errors import LimitExceeded
from protoagent.hooks.admission import ContextAdmissionHook
from protoagent.models.registry import ModelConfig
from protoagent.models.types import ModelRequest

from .support import Conversation, big, contents

COUNTER = EstimatingCounter()


def long_session(batches: int = 12, size: int = 3000) -> Conversation:
    chat = Conversation()
    chat.user("TASK: fix the parser")
    for n in range(batches):
        chat.batch(("read_file", big(f"r{n}", size)), text=f"step {n}")
    return chat


def tool_pairs_are_whole(request: ModelRequest) -> None:
    called = [c.id for m in request.messages for c in m.tool_calls]
    answered = [m.tool_call_id for m in request.messages if m.role == "tool"]
    assert called == answered


def test_request_that_fits_is_unchanged() -> None:
    chat = long_session(batches=2)
    request = chat.request()
    admitted, report = admit_request(request, window=8192, counter=COUNTER)
    assert admitted == request
    assert report.evicted_message_count == 0
    assert (
        report.estimated_before
        == report.estimated_after
        == estimate_request(request, COUNTER, output_reserve=1024).total
    )


def test_eviction_keeps_tool_call_and_result_together() -> None:
    chat = Conversation()
    chat.user("TASK")
    for n in range(6):
        chat.batch(("read_file", big(f"a{n}", 1500)), ("search_regex", big(f"b{n}", 1500)))
    admitted, report = admit_request(chat.request(), window=4096, counter=COUNTER)
    assert report.evicted_message_count > 0 and report.evicted_message_count % 3 == 0
    tool_pairs_are_whole(admitted)
    assert report.estimated_after <= 4096


def test_eviction_keeps_task_and_latest_exchange_and_goes_oldest_first() -> None:
    chat = long_session()
    admitted, report = admit_request(chat.request(), window=4096, counter=COUNTER)
    texts = contents(admitted)
    assert texts[0] == "TASK: fix the parser"
    assert texts[1].startswith("[context] ") and f"{report.evicted_message_count} earlier messages" in texts[1]
    kept_steps = [m.content for m in admitted.messages if m.role == "assistant"]
    assert kept_steps == [f"step {n}" for n in range(12 - len(kept_steps), 12)]
    assert texts[-1] == big("r11")
    assert report.estimated_after == estimate_request(admitted, COUNTER, output_reserve=1024).total <= 4096


def test_after_eviction_the_estimate_drops_to_the_low_water_mark() -> None:
    chat = long_session(batches=30, size=1500)
    _, report = admit_request(chat.request(), window=8192, counter=COUNTER, low_water=0.6)
    assert 0.55 * 8192 < report.estimated_after <= 0.6 * 8192 < report.estimated_before
    assert 0 < report.evicted_message_count < 58
    _, everything = admit_request(chat.request(), window=8192, counter=COUNTER, low_water=0.1)
    assert everything.evicted_message_count == 58  # All but the task and the latest exchange.


def test_only_observations_are_evicted_never_user_messages() -> None:
    chat = long_session(batches=6)
    chat.log.append("context.injected", {"text": "AGENTS.md: run ruff before committing", "source": "AGENTS.md"})
    chat.answer("done with part one")
    chat.user("NOW: also update the docs")
    for n in range(6):
        chat.batch(("read_file", big(f"d{n}")))
    admitted, report = admit_request(chat.request(), window=4096, counter=COUNTER)
    assert report.evicted_message_count > 0
    users = [m.content for m in admitted.messages if m.role == "user" and not m.content.startswith("[context]")]
    assert users == ["TASK: fix the parser", "AGENTS.md: run ruff before committing", "NOW: also update the docs"]
    tool_pairs_are_whole(admitted)


def test_task_record_is_reinserted_after_eviction_and_changes_are_appended() -> None:
    chat = long_session()
    record = {"text": "goal: fix the parser; criteria: tests pass; phase: edit"}
    hook = ContextAdmissionHook(window=4096, task_record=lambda _tools: record["text"])
    admitted = hook(chat.request(), chat.events)
    assert hook.last_report is not None and hook.last_report.evicted_message_count > 0
    assert admitted.messages[0].content == "TASK: fix the parser"
    assert admitted.messages[1].role == "user"
    assert admitted.messages[1].content == f"{TASK_RECORD_MARK}\n{record['text']}"
    record["text"] = "goal: fix the parser; phase: verify"
    chat.batch(("read_file", "small"))
    again = hook(chat.request(), chat.events)
    # The record shown in the prefix stays as it was; the change is appended where the chat stands.
    assert again.messages[1] == admitted.messages[1]
    assert again.messages[-1].content == "[task record update]\ngoal: fix the parser; phase: verify"
    assert sum(m.content.startswith(TASK_RECORD_MARK) for m in again.messages) == 1


def test_mandatory_input_too_large_fails_explicitly() -> None:
    chat = long_session(batches=1)
    request = replace(chat.request(), system="rules " * 20_000)
    with pytest.raises(LimitExceeded) as caught:
        ContextAdmissionHook(profile="small")(request, chat.events)
    assert caught.value.limit == "context"
    message = str(caught.value)
    assert "window is 8192" in message and "system " in message and "output reserve 1024" in message


def test_task_record_is_mandatory() -> None:
    chat = long_session(batches=1, size=100)
    hook = ContextAdmissionHook(window=2048, task_record=lambda _tools: "criteria " * 3000)
    with pytest.raises(LimitExceeded, match="task record"):
        hook(chat.request(), chat.events)


def test_output_reserve_is_part_of_the_mandatory_input() -> None:
    chat = long_session(batches=1, size=100)
    request = chat.request(max_output_tokens=8000)
    with pytest.raises(LimitExceeded, match="output reserve 8000"):
        admit_request(request, window=8192, counter=COUNTER)


def test_small_profile_without_window_uses_8192_cap() -> None:
    chat = long_session(batches=40)
    request = chat.request()
    assert estimate_request(request, COUNTER).total > 20_000
    small = ContextAdmissionHook(profile="small")
    assert small.window == 8192
    assert len(render_prompt(small(request, chat.events))) < len(render_prompt(request))
    assert small.last_report is not None and small.last_report.estimated_after <= 8192
    standard = ContextAdmissionHook(profile="standard")
    assert standard.window is None
    assert standard(request, chat.events) == request


def test_context_window_config_overrides_cap() -> None:
    chat = long_session(batches=40)
    hook = ContextAdmissionHook.for_provider(object(), ModelConfig(context_window=4096), "small")
    hook(chat.request(), chat.events)
    assert hook.window == 4096 and hook.last_report is not None and hook.last_report.estimated_after <= 4096
    wide = ContextAdmissionHook.for_provider(object(), ModelConfig(context_window=200_000), "small")
    assert wide(chat.request(), chat.events) == chat.request()


class TokenizingProvider:
    """A provider-shaped object with its own tokenizer (as the embedded llama.cpp one has)."""

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def test_provider_tokenizer_is_used_when_offered() -> None:
    chat = long_session(batches=2)
    hook = ContextAdmissionHook.for_provider(TokenizingProvider(), ModelConfig(context_window=4096), "small")
    hook(chat.request(), chat.events)
    assert hook.last_report is not None
    words = hook.last_report.estimated_before
    by_estimate = estimate_request(chat.request(), COUNTER, output_reserve=1024).total
    assert words < by_estimate


def test_eviction_boundary_only_moves_forward_and_later_steps_append() -> None:
    chat = long_session(batches=4)
    hook = ContextAdmissionHook(window=4096)
    previous: ModelRequest | None = None
    boundaries: list[int] = []
    append_only = 0
    for n in range(4, 20):
        chat.batch(("read_file", big(f"r{n}", 900)))
        admitted = hook(chat.request(), chat.events)
        assert hook.last_report is not None
        boundaries.append(hook.last_report.boundary)
        tool_pairs_are_whole(admitted)
        if previous is not None and boundaries[-1] == boundaries[-2]:
            assert render_prompt(admitted).startswith(render_prompt(previous))
            assert common_prefix_ratio(previous, admitted) > 0.8
            append_only += 1
        previous = admitted
    assert boundaries == sorted(boundaries) and boundaries[-1] > 0
    assert append_only >= len(boundaries) // 2


def test_admission_is_deterministic() -> None:
    chat = long_session()
    first = admit_request(chat.request(), window=4096, counter=COUNTER, task_record="rec")
    second = admit_request(chat.request(), window=4096, counter=COUNTER, task_record="rec")
    assert first == second
