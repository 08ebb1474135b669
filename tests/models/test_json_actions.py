"""JSON action mode: schema building, tolerant parsing, streaming of final text, stable history."""

from __future__ import annotations

import json

import pytest

from protoagent.models.json_actions import (
    FinalTextStream,
    action_guide,
    action_schema,
    json_mode_system,
    parse_action,
    render_history,
)
from protoagent.models.types import Message, ToolCall, ToolSchema

READ = ToolSchema(
    "read_file",
    "Read one span of a file.\n\nLong details that the guide leaves out.",
    {
        "title": "ReadArgs",
        "type": "object",
        "properties": {"path": {"title": "Path", "type": "string"}, "span": {"$ref": "#/$defs/Span"}},
        "required": ["path"],
        "$defs": {
            "Span": {
                "type": "object",
                "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
                "required": ["start", "end"],
            }
        },
    },
)
RUN = ToolSchema(
    "run_command",
    "Run a command.",
    {"type": "object", "properties": {"argv": {"type": "array", "items": {"type": "string"}}}, "required": ["argv"]},
)
TOOLS = (READ, RUN)


def test_schema_has_one_variant_per_tool_and_a_final_answer() -> None:
    schema = action_schema(TOOLS)
    variants = schema["anyOf"]
    assert [v["properties"]["tool"]["const"] for v in variants[:2]] == ["read_file", "run_command"]
    assert variants[1]["properties"]["args"] == RUN.parameters
    final = variants[2]
    assert final["properties"]["type"] == {"const": "final"}
    assert final["required"] == ["type", "text"]
    assert all(v["additionalProperties"] is False for v in variants)


def test_schema_hoists_tool_defs_and_rewrites_their_refs() -> None:
    schema = action_schema(TOOLS)
    args = schema["anyOf"][0]["properties"]["args"]
    assert "$defs" not in args
    assert args["properties"]["span"] == {"$ref": "#/$defs/read_file__Span"}
    assert schema["$defs"]["read_file__Span"]["required"] == ["start", "end"]
    # The caller's schema is not modified.
    assert "$defs" in READ.parameters


def test_schema_properties_keep_the_action_order() -> None:
    variant = action_schema(TOOLS)["anyOf"][0]
    assert list(variant["properties"]) == ["type", "tool", "args"]


def test_guide_names_format_and_compact_schemas() -> None:
    guide = action_guide(TOOLS)
    assert '"type": "tool_call"' in guide
    assert '"type": "final"' in guide
    assert "- read_file: Read one span of a file." in guide
    assert "Long details" not in guide
    assert '"title"' not in guide
    assert '"required":["argv"]' in guide
    assert "No tools are available" in action_guide(())


def test_json_mode_system_appends_the_guide() -> None:
    system = json_mode_system("Be brief.", TOOLS)
    assert system.startswith("Be brief.\n\n")
    assert system.endswith(action_guide(TOOLS))
    assert json_mode_system("", TOOLS) == action_guide(TOOLS)


def test_parse_plain_tool_call() -> None:
    turn = parse_action('{"type":"tool_call","tool":"read_file","args":{"path":"a.py"}}', TOOLS)
    assert turn.text == ""
    assert turn.stop_reason == "tool_calls"
    (call,) = turn.tool_calls
    assert (call.name, call.arguments) == ("read_file", {"path": "a.py"})
    assert call.id.startswith("call_")


@pytest.mark.parametrize(
    "reply",
    [
        'Sure, here it is:\n```json\n{"type": "tool_call", "tool": "run_command", "args": {"argv": ["pytest"]}}\n```',
        'I will run the tests. {"type": "tool_call", "tool": "run_command", "args": {"argv": ["pytest"]}} Done.',
        '```\n{"tool": "run_command", "arguments": {"argv": ["pytest"]}}\n```',
        '{"type": "run_command", "args": {"argv": ["pytest"]}}',
    ],
)
def test_parse_tolerates_fences_prose_and_small_slips(reply: str) -> None:
    (call,) = parse_action(reply, TOOLS).tool_calls
    assert (call.name, call.arguments) == ("run_command", {"argv": ["pytest"]})


def test_parse_final_answer() -> None:
    turn = parse_action('{"type": "final", "text": "All done.\\nBye"}', TOOLS)
    assert (turn.text, turn.tool_calls, turn.stop_reason) == ("All done.\nBye", (), "stop")


@pytest.mark.parametrize("reply", ["Just prose, no JSON.", '{"type": "tool_call", "tool": ', "[1, 2]", ""])
def test_unparseable_reply_becomes_final_text(reply: str) -> None:
    turn = parse_action(reply, TOOLS)
    assert turn.tool_calls == ()
    assert turn.text == reply.strip()


def test_parse_accepts_raw_control_characters_in_strings() -> None:
    turn = parse_action('{"type": "final", "text": "line one\nline two"}', TOOLS)
    assert turn.text == "line one\nline two"


def _history() -> tuple[Message, ...]:
    return (
        Message("user", "Fix the test."),
        Message("assistant", "", tool_calls=(ToolCall("c1", "read_file", {"path": "a.py", "span": None}),)),
        Message("tool", "x = 1", tool_call_id="c1"),
        Message("assistant", "Running.", tool_calls=(ToolCall("c2", "run_command", {"argv": ["pytest", "-q"]}),)),
        Message("tool", "1 passed", tool_call_id="c2", name="run_command"),
        Message("user", "Thanks."),
    )


def test_history_renders_tool_exchanges_as_text() -> None:
    rendered = render_history(_history())
    assert [m.role for m in rendered] == ["user", "assistant", "user", "assistant", "user"]
    assert json.loads(rendered[1].content) == {
        "type": "tool_call",
        "tool": "read_file",
        "args": {"path": "a.py", "span": None},
    }
    assert rendered[2].content == "Result of tool 'read_file':\nx = 1"
    assert rendered[3].content.startswith("Running.\n{")
    # A tool result followed by a user message merges into one user turn.
    assert rendered[4].content == "Result of tool 'run_command':\n1 passed\n\nThanks."
    assert all(not m.tool_calls and m.tool_call_id is None for m in rendered)


def test_history_rendering_is_deterministic_and_prefix_stable() -> None:
    history = _history()
    first = render_history(history[:3])
    again = render_history(history[:3])
    longer = render_history(history)
    assert first == again
    # A request that extends the conversation starts with the same rendered messages.
    assert longer[:2] == first[:2]
    assert longer[2].content.startswith(first[2].content)


def test_final_text_streams_while_json_arrives() -> None:
    reply = '{"type": "final", "text": "caf\\u00e9 \\"quoted\\" \\ud83d\\ude00 end"}'
    stream = FinalTextStream()
    pieces = [stream.feed(char) for char in reply]
    streamed = "".join(pieces)
    turn = parse_action(reply, TOOLS)
    assert streamed == turn.text == 'café "quoted" 😀 end'
    assert sum(1 for piece in pieces if piece) > 5
    assert stream.rest(turn) == ""


def test_final_text_stream_stays_silent_for_tool_calls_and_prose() -> None:
    for reply in ['{"type": "tool_call", "tool": "x", "args": {}}', "plain words"]:
        stream = FinalTextStream()
        assert "".join(stream.feed(char) for char in reply) == ""
        turn = parse_action(reply, TOOLS)
        assert stream.rest(turn) == turn.text
