"""ToolContextProjectionHook: old results become receipts by a token budget, at the model boundary only."""

from __future__ import annotations

import copy
from dataclasses import replace

from protoagent.context.projection import ProjectionSettings, ProjectionState, project_request
from protoagent.context.tokens import EstimatingCounter, common_prefix_ratio, message_tokens, render_prompt
from protoagent.hooks.projection import ToolContextProjectionHook
from protoagent.models.types import ModelRequest

from .support import METADATA, TOOLS, Conversation, big, payloads, text_tool, tool_contents

TIGHT = ProjectionSettings(budget_tokens=2000)
"""A budget that four 3,000-character results overflow."""
REV_A, REV_B, REV_C = "a" * 64, "b" * 64, "c" * 64


def projected_ids(request: ModelRequest) -> set[str]:
    return {m.tool_call_id for m in request.messages if m.tool_call_id and "[projected result of" in m.content}


def history(request: ModelRequest) -> int:
    return sum(message_tokens(m, EstimatingCounter()) for m in request.messages)


def old_turn_searches(count: int = 4) -> tuple[Conversation, list[str]]:
    chat = Conversation()
    chat.user("fix the bug")
    chat.turn()
    ids = [chat.batch(("search_regex", big(f"s{n}")))[0] for n in range(count)]
    chat.turn()
    return chat, ids


def test_results_stay_exact_while_the_history_fits_the_budget() -> None:
    chat, ids = old_turn_searches()
    request = chat.request()
    shaped = ToolContextProjectionHook(METADATA)(request, chat.events)
    assert [tool_contents(shaped)[i] for i in ids] == [big(f"s{n}") for n in range(4)]
    assert "recall" not in {t.name for t in shaped.tools}  # nothing projected: recall costs nothing


def test_over_budget_oldest_results_are_projected_first_down_to_the_low_water_mark() -> None:
    chat, ids = old_turn_searches()
    chat.batch(("search_regex", "latest"))
    shaped = ToolContextProjectionHook(METADATA, TIGHT)(chat.request(), chat.events)
    projected = projected_ids(shaped)
    assert projected == set(ids[: len(projected)]) and projected  # a prefix of the oldest
    assert history(shaped) <= TIGHT.budget_tokens * TIGHT.low_water
    # One result fewer would still be over the low-water mark: no more was projected than needed.
    assert len(projected) < 4


def test_the_latest_batch_is_never_projected() -> None:
    chat = Conversation()
    chat.user("task")
    chat.turn()
    latest = chat.batch(("search_regex", big("a")), ("search_regex", big("b")), ("search_regex", big("c")))
    shaped = ToolContextProjectionHook(METADATA, ProjectionSettings(budget_tokens=100))(chat.request(), chat.events)
    assert [tool_contents(shaped)[i] for i in latest] == [big("a"), big("b"), big("c")]


def test_current_turn_reads_stay_exact_while_older_results_are_projected() -> None:
    chat = Conversation()
    chat.user("task")
    chat.turn()
    old_read = chat.read("old.py", big("old"), REV_A)
    chat.turn()  # a new assignment starts: its reads are the ones the agent works with
    current = [chat.read(f"new{n}.py", big(f"new{n}"), REV_B) for n in range(3)]
    chat.batch(("search_regex", "latest"))
    settings = ProjectionSettings(budget_tokens=2000)
    shaped = ToolContextProjectionHook(METADATA, settings)(chat.request(), chat.events)
    results = tool_contents(shaped)
    assert results[old_read].startswith("[projected result of read_file")
    assert [results[i] for i in current] == [big(f"new{n}") for n in range(3)]
    assert settings.budget_tokens < history(shaped) <= settings.budget_tokens * settings.hard_factor


def test_current_turn_reads_are_projected_oldest_first_only_past_the_hard_limit() -> None:
    chat = Conversation()
    chat.user("task")
    chat.turn()
    current = [chat.read(f"new{n}.py", big(f"new{n}"), REV_B) for n in range(6)]
    chat.batch(("search_regex", "latest"))
    settings = ProjectionSettings(budget_tokens=2000)  # six reads are about 5,200 tokens: past 1.5 x 2,000
    shaped = ToolContextProjectionHook(METADATA, settings)(chat.request(), chat.events)
    projected = projected_ids(shaped)
    assert projected == set(current[: len(projected)]) and 0 < len(projected) < 6
    assert history(shaped) <= settings.budget_tokens


def test_current_turn_non_read_results_are_projected_after_older_ones_under_pressure() -> None:
    chat = Conversation()
    chat.user("task")
    chat.turn()
    search = chat.batch(("search_regex", big("listing")))[0]
    read = chat.read("a.py", big("a"), REV_A)
    chat.batch(("search_regex", "latest"))
    shaped = ToolContextProjectionHook(METADATA, ProjectionSettings(budget_tokens=1000))(chat.request(), chat.events)
    assert projected_ids(shaped) == {search}
    assert tool_contents(shaped)[read] == big("a")


def test_read_receipt_says_how_to_re_run_read_file_and_the_revision_it_saw() -> None:
    chat = Conversation()
    chat.user("task")
    chat.turn()
    read = chat.read("pkg/dates.py", big("dates"), REV_A, start=10, end=70)
    chat.turn()
    chat.batch(("search_regex", "latest"))
    shaped = ToolContextProjectionHook(METADATA, ProjectionSettings(budget_tokens=100))(chat.request(), chat.events)
    receipt = tool_contents(shaped)[read]
    assert receipt.startswith("[projected result of read_file (ok, 3000 chars): BEGIN dates")
    assert receipt.endswith(
        '| to see it again: re-run read_file(path="pkg/dates.py", start_line=10, end_line=70); '
        f"revision {REV_A[:12]} at the time]"
    )
    assert "event seq" not in receipt
    assert "recall" not in {t.name for t in shaped.tools}  # read_file brings reads back


def test_other_receipts_point_to_recall_by_call_id_and_declare_recall() -> None:
    chat, ids = old_turn_searches()
    chat.batch(("search_regex", "latest"))
    request = chat.request()
    shaped = ToolContextProjectionHook(METADATA, TIGHT)(request, chat.events)
    receipt = tool_contents(shaped)[ids[0]]
    assert receipt.endswith(f'END s0 | to see it again: recall(call_id="{ids[0]}")]')
    assert "event seq" not in receipt
    assert [t.name for t in shaped.tools] == [t.name for t in request.tools]  # recall stays declared


def test_a_result_the_agent_could_not_get_back_is_never_projected() -> None:
    chat, ids = old_turn_searches()
    chat.batch(("search_regex", "latest"))
    shaped = ToolContextProjectionHook(METADATA, TIGHT)(chat.request(recall=False), chat.events)
    assert [tool_contents(shaped)[i] for i in ids] == [big(f"s{n}") for n in range(4)]


def test_small_results_are_never_projected() -> None:
    chat = Conversation()
    chat.user("task")
    ids = [chat.batch(("search_regex", "x" * 1200))[0] for _ in range(40)]
    chat.turn()
    shaped = ToolContextProjectionHook(METADATA, ProjectionSettings(budget_tokens=100))(chat.request(), chat.events)
    assert [tool_contents(shaped)[i] for i in ids] == ["x" * 1200] * 40


def test_exact_and_skill_results_are_never_projected() -> None:
    chat = Conversation()
    chat.user("task")
    exact = chat.batch(("check_status", big("exact")))[0]
    skill = chat.batch(("skill", big("skill body")))[0]
    activate = chat.batch(("activate_skill", big("activation")))[0]
    chat.turn()
    chat.batch(("search_regex", "a"))
    results = tool_contents(ToolContextProjectionHook(METADATA, TIGHT)(chat.request(), chat.events))
    assert results[exact] == big("exact")
    assert results[skill] == big("skill body")
    assert results[activate] == big("activation")


def test_observation_comes_from_tool_metadata() -> None:
    chat, ids = old_turn_searches(1)
    chat.batch(("search_regex", "a"))
    everything_exact = ToolContextProjectionHook(lambda name: "exact", ProjectionSettings(budget_tokens=100))
    assert tool_contents(everything_exact(chat.request(), chat.events))[ids[0]] == big("s0")
    from_tools = ToolContextProjectionHook.for_tools(TOOLS, ProjectionSettings(budget_tokens=100))
    assert tool_contents(from_tools(chat.request(), chat.events))[ids[0]].startswith("[projected result of search")


def test_multimodal_results_are_never_projected() -> None:
    chat = Conversation()
    chat.user("look at the screenshot")
    image = chat.batch(("view_image", big("image caption")), data={"multimodal": True})[0]
    text = chat.batch(("view_image", big("plain")), data={"multimodal": False})[0]
    chat.turn()
    chat.batch(("read_file", "a"))
    hook = ToolContextProjectionHook(METADATA, ProjectionSettings(budget_tokens=100))
    results = tool_contents(hook(chat.request(), chat.events))
    assert results[image] == big("image caption")
    assert results[text].startswith("[projected result of view_image")


def test_persisted_events_unchanged_by_projection() -> None:
    chat, _ = old_turn_searches()
    chat.batch(("search_regex", "latest"))
    events_before = chat.events
    payloads_before = copy.deepcopy(payloads(events_before))
    projected = ToolContextProjectionHook(METADATA, TIGHT)(chat.request(), chat.events)
    assert projected_ids(projected)
    assert chat.events == events_before
    assert payloads(chat.events) == payloads_before
    assert chat.log.store.load(chat.log.session_id) == events_before


def test_projection_is_deterministic_sticky_and_prefix_stable() -> None:
    chat = Conversation()
    chat.user("task")
    hook = ToolContextProjectionHook(METADATA, TIGHT)
    previous: ModelRequest | None = None
    seen: set[str] = set()
    state = ProjectionState()
    append_only = 0
    for n in range(12):
        chat.turn()
        chat.batch(("search_regex", big(f"r{n}") if n % 2 == 0 else f"short {n}"))
        request = chat.request()
        first = hook(request, chat.events)
        again, state = project_request(request, chat.events, _observation, TIGHT, state=state)
        assert first == again  # equal inputs (the same earlier projections), equal request
        now = projected_ids(first)
        assert seen <= now  # once projected, always projected
        if previous is not None and now == seen:
            old, new = render_prompt(previous), render_prompt(first)
            assert new.startswith(old)  # nothing newly projected: the step only appends
            assert common_prefix_ratio(previous, first) == len(old) / len(new)
            append_only += 1
        seen = now
        previous = first
    assert len(seen) >= 3 and append_only >= 6


def _observation(name: str) -> str | None:
    return METADATA[name].observation if name in METADATA else None


def test_old_read_of_a_changed_file_is_marked_stale_and_the_marker_is_sticky() -> None:
    chat = Conversation(agent="architect")
    chat.user("task")
    chat.turn()
    read = chat.read("dates.py", "dates.py lines 1-2 of 2\nold text", REV_A)
    fresh_elsewhere = chat.read("other.py", "other text", REV_A)
    hook = ToolContextProjectionHook(METADATA)
    assert tool_contents(hook(chat.request(), chat.events))[read].startswith("dates.py lines 1-2")
    chat.edit("dates.py", REV_B)  # the Coder changed the file after the Architect's read
    first = hook(chat.request(), chat.events)
    marker = f"[stale: dates.py changed since this read; revision now {REV_B[:12]}]"
    assert tool_contents(first)[read] == f"{marker}\ndates.py lines 1-2 of 2\nold text"
    assert tool_contents(first)[fresh_elsewhere] == "other text"
    chat.edit("dates.py", REV_C)
    chat.batch(("search_regex", "next step"))
    second = hook(chat.request(), chat.events)
    assert render_prompt(second).startswith(render_prompt(first)[: render_prompt(first).rindex("<tool")])
    assert tool_contents(second)[read] == tool_contents(first)[read]  # sticky: same text, no churn


def test_a_read_after_the_edit_is_not_stale() -> None:
    chat = Conversation()
    chat.user("task")
    chat.turn()
    chat.edit("dates.py", REV_B, agent="main")
    read = chat.read("dates.py", "new text", REV_B)
    assert tool_contents(ToolContextProjectionHook(METADATA)(chat.request(), chat.events))[read] == "new text"


def test_a_revision_aware_tool_is_brought_back_through_its_metadata_not_its_name() -> None:
    """Observation handling is declared by tool metadata rather than tool-name branches: any
    revision-aware tool's projected result says to re-run that tool; declared projectable, the
    same result says recall."""
    chat = Conversation()
    chat.user("task")
    chat.turn()
    data = {"path": "pkg/a.py", "revision": REV_A, "start_line": 3, "end_line": 9}
    shown = chat.batch(("view_source", big("src")), data=data)[0]
    chat.turn()
    chat.batch(("search_regex", "latest"))
    for observation, ending in (
        (
            "revision_aware",
            (
                "revision_aware",
                f're-run view_source(path="pkg/a.py", start_line=3, end_line=9); revision {REV_A[:12]} at the time]',
            ),
        ),
        ("projectable", f'recall(call_id="{shown}")]'),
    ):
        tool = text_tool("view_source", observation)
        request = chat.request()
        request = replace(request, tools=(*request.tools, tool.schema()))
        hook = ToolContextProjectionHook({**METADATA, tool.name: tool.metadata}, ProjectionSettings(budget_tokens=100))
        assert tool_contents(hook(request, chat.events))[shown].endswith(ending)
