"""ToolContextProjectionHook: old oversized results become receipts at the model boundary only."""

from __future__ import annotations

import copy

from protoagent.context.projection import ProjectionSettings, project_request
from protoagent.context.tokens import common_prefix_ratio, render_prompt
from protoagent.hooks.projection import ToolContextProjectionHook
from protoagent.models.types import ModelRequest

from .support import METADATA, TOOLS, Conversation, big, payloads, tool_contents


def four_batches() -> tuple[Conversation, list[str]]:
    chat = Conversation()
    chat.user("fix the bug")
    ids: list[str] = []
    for n in range(4):
        ids += chat.batch(("read_file", big(f"r{n}")))
    return chat, ids


def test_recent_tool_batches_stay_exact() -> None:
    chat, ids = four_batches()
    request = chat.request()
    projected = ToolContextProjectionHook(METADATA)(request, chat.events)
    results = tool_contents(projected)
    assert results[ids[2]] == big("r2") and results[ids[3]] == big("r3")
    for old in ids[:2]:
        assert results[old].startswith("[projected result of read_file (ok, 3000 chars): BEGIN r")
        assert len(results[old]) < 700
    ended = {e.payload["call_id"]: e.seq for e in chat.events if e.type == "tool.ended"}
    assert results[ids[0]].endswith(f"END r0 | full output: event seq {ended[ids[0]]}]")


def test_batch_with_several_calls_counts_as_one_batch() -> None:
    chat = Conversation()
    chat.user("look around")
    first = chat.batch(("read_file", big("a")), ("search_regex", big("b")))
    second = chat.batch(("read_file", big("c")), ("search_regex", big("d")))
    results = tool_contents(ToolContextProjectionHook(METADATA)(chat.request(), chat.events))
    assert not any(results[i].startswith("[projected") for i in first + second)
    third = chat.batch(("read_file", "short"))
    results = tool_contents(ToolContextProjectionHook(METADATA)(chat.request(), chat.events))
    assert all(results[i].startswith("[projected result of ") for i in first)
    assert [results[i] for i in second + third] == [big("c"), big("d"), "short"]


def test_receipt_points_at_the_artifact_when_there_is_one() -> None:
    chat = Conversation()
    chat.user("run the tests")
    (old,) = chat.batch(("search_regex", big("log")), artifact="artifacts/s_1/call_1.log")
    chat.batch(("read_file", "x"))
    chat.batch(("read_file", "y"))
    results = tool_contents(ToolContextProjectionHook(METADATA)(chat.request(), chat.events))
    assert results[old].endswith("| full output: artifacts/s_1/call_1.log]")


def test_small_results_are_never_projected() -> None:
    chat = Conversation()
    chat.user("task")
    ids = [chat.batch(("search_regex", "x" * 1200))[0] for _ in range(4)]
    results = tool_contents(ToolContextProjectionHook(METADATA)(chat.request(), chat.events))
    assert [results[i] for i in ids] == ["x" * 1200] * 4


def test_exact_and_skill_results_are_never_projected() -> None:
    chat = Conversation()
    chat.user("task")
    exact = chat.batch(("check_status", big("exact")))[0]
    skill = chat.batch(("skill", big("skill body")))[0]
    activate = chat.batch(("activate_skill", big("activation")))[0]
    chat.batch(("read_file", "a"))
    chat.batch(("read_file", "b"))
    results = tool_contents(ToolContextProjectionHook(METADATA)(chat.request(), chat.events))
    assert results[exact] == big("exact")
    assert results[skill] == big("skill body")
    assert results[activate] == big("activation")


def test_observation_comes_from_tool_metadata() -> None:
    chat = Conversation()
    chat.user("task")
    old = chat.batch(("search_regex", big("s")))[0]
    chat.batch(("read_file", "a"))
    chat.batch(("read_file", "b"))
    everything_exact = ToolContextProjectionHook(lambda name: "exact")
    assert tool_contents(everything_exact(chat.request(), chat.events))[old] == big("s")
    from_tools = ToolContextProjectionHook.for_tools(TOOLS)
    assert tool_contents(from_tools(chat.request(), chat.events))[old].startswith("[projected result of search_regex")


def test_multimodal_results_are_never_projected() -> None:
    chat = Conversation()
    chat.user("look at the screenshot")
    image = chat.batch(("view_image", big("image caption")), data={"multimodal": True})[0]
    text = chat.batch(("view_image", big("plain")), data={"multimodal": False})[0]
    chat.batch(("read_file", "a"))
    chat.batch(("read_file", "b"))
    results = tool_contents(ToolContextProjectionHook(METADATA)(chat.request(), chat.events))
    assert results[image] == big("image caption")
    assert results[text].startswith("[projected result of view_image")


def test_persisted_events_unchanged_by_projection() -> None:
    chat, _ = four_batches()
    events_before = chat.events
    payloads_before = copy.deepcopy(payloads(events_before))
    hook = ToolContextProjectionHook(METADATA)
    projected = hook(chat.request(), chat.events)
    assert any(m.content.startswith("[projected") for m in projected.messages)
    assert chat.events == events_before
    assert payloads(chat.events) == payloads_before
    assert chat.log.store.load(chat.log.session_id) == events_before


def test_projection_is_deterministic_and_prefix_stable() -> None:
    chat = Conversation()
    chat.user("task")
    hook = ToolContextProjectionHook(METADATA)
    previous: ModelRequest | None = None
    seen: set[str] = set()
    append_only = 0
    for n in range(8):
        chat.batch(("read_file", big(f"r{n}") if n % 2 == 0 else f"short {n}"))
        request = chat.request()
        first = hook(request, chat.events)
        again, _ = project_request(request, chat.events, lambda name: METADATA[name].observation)
        assert first == again
        now = {m.tool_call_id for m in first.messages if m.content.startswith("[projected")}
        assert seen <= now  # Once projected, always projected.
        if previous is not None and now == seen:
            # Nothing newly projected: the step only appends to the previous prompt.
            old, new = render_prompt(previous), render_prompt(first)
            assert new.startswith(old)
            assert common_prefix_ratio(previous, first) == len(old) / len(new)
            append_only += 1
        seen = {i for i in now if i is not None}
        previous = first
    assert len(seen) == 3 and append_only == 4


def test_settings_change_threshold_and_kept_batches() -> None:
    chat, ids = four_batches()
    settings = ProjectionSettings(keep_batches=1, threshold=5000)
    results = tool_contents(ToolContextProjectionHook(METADATA, settings)(chat.request(), chat.events))
    assert all(not r.startswith("[projected") for r in results.values())
    settings = ProjectionSettings(keep_batches=1, head_chars=10, tail_chars=5)
    results = tool_contents(ToolContextProjectionHook(METADATA, settings)(chat.request(), chat.events))
    assert [results[i].startswith("[projected") for i in ids] == [True, True, True, False]
    assert results[ids[0]].endswith("(ok, 3000 chars): BEGIN r0\nr … ND r0 | full output: event seq 4]")
