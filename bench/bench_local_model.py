"""Figures for the embedded llama.cpp model: prefix reuse, harness speed, grammar cost, valid actions.

Method
------
The model is found through ``protoagent.models.installed`` (``--model ALIAS|PATH.gguf``; default:
the embedded default) and built with ``llama_local.from_spec``, so the context window is the
one ``local`` would use. Every request is a small-profile Coder request: the compact protocol
hook over the six real workspace tools (``WORKSPACE_TOOLS``), JSON action mode, temperature 0.
Wall-clock times come from ``time.perf_counter``; all harness calls share one event loop.

1. Prefix reuse: a 20-step session through the model's worker process (max 96 output tokens).
   After each step the conversation grows the way the agent loop grows it: the model's tool
   call as an assistant action plus a synthetic tool result (a 20-line read, a listing, search
   matches or an edit receipt); a final answer gets a user follow-up; a cut-off reply gets the
   loop's invalid-action feedback. Per step the re-evaluated share is
   ``1 - usage.cached_input_tokens / usage.input_tokens``; median and max over steps 2-20 are
   reported (target: median under 20%; over 50% on an append-only step is a bug and prints a
   warning). llama.cpp's own prompt-evaluation counter (``n_p_eval``) is shown as a check.
2. Harness vs raw generation speed: one create-a-test-file prompt (128 output tokens). Arm
   "harness" times ``stream`` up to its final ``ModelTurn``; arm "raw" calls the same loaded
   ``Llama`` with ``create_completion(prompt tokens, grammar=the same action grammar,
   max_tokens=128, temperature=0, stop=the same stop strings)``. The raw prompt tokens are
   rendered exactly as the provider renders them (checked against ``usage.input_tokens``).
   One warm-up call per arm, then ``--rounds`` rounds with the arm order rotated; the prompt
   never changes, so every timed call finds the same prefix in the KV cache. tokens/s = output
   tokens (the reply text re-tokenized, as ``Usage.output_tokens`` counts them) / wall time;
   medians are reported with the ratio harness/raw (target at least 0.95).
3. Constrained vs unconstrained decoding: in the same rounds, raw ``create_completion`` on the
   same prompt and max tokens with and without the grammar (no ``ignore_eos``). tokens/s =
   ``usage.completion_tokens`` / wall time; create_completion overhead = raw-free tokens/s /
   raw-grammar tokens/s - 1 (llama.cpp's grammar sampler over the whole vocabulary: a baseline,
   no target). Also in the same rounds, the harness's own greedy loop
   (``llama_sampling.greedy_generate``, called directly on the same prompt, cache prefix and
   max tokens) with the grammar checked lazily and without a grammar; tokens/s = generated
   tokens / wall time; lazy overhead = lazy-free tokens/s / lazy-grammar tokens/s - 1 (target
   under 15%). Both loops are also compared unconstrained (lazy-free vs raw-free).
4. Valid-action rate: 50 prompts from seven coding situations (read a file, edit a line after
   reading it, list a folder, search for a definition, create a test file, answer from a file
   already read, answer a plain question), varied over files and symbols, each a fresh
   conversation. "On": ``stream`` with the grammar; "off": raw ``create_completion`` on the same
   prompt tokens without the grammar, then ``parse_action``. Both with ``--max-tokens`` (96).
   Valid = a tool call to a known tool whose arguments validate against that tool's pydantic
   input model, or a ``final`` action; prose without an action is not valid. Also shown: the
   share that chose the situation's expected action, and the kinds of failures.
5. The demo's fix time with this build: ``bench_guided_repair.py``'s demo arm (``protoagent run``
   on a fresh copy of ``examples/date-parser`` with ``--model local``, guided repair on,
   ``PROTOAGENT_LOCAL_SEED`` = 1..``--demo-seeds``); wall seconds per run, model load included,
   and whether it was fixed and verified (``--demo-seeds 0`` skips it).

The summary starts with the llama-cpp-python build the figures hold for: its version, the build
key ``scripts/bootstrap`` recorded in the virtual environment (``.llama-cpp-build``: version,
instruction-set level, interpreter, hash of the CMake arguments; the build users get is the
portable level the bootstrap picks) and llama.cpp's own system info (the instruction sets
compiled in).

Run: ``python bench/bench_local_model.py [--model ALIAS|PATH.gguf] [--rounds 5] [--max-tokens 96]
[--demo-seeds 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from protoagent.agents.loop import INVALID_ACTION_FEEDBACK
from protoagent.errors import ConfigError, LimitExceeded
from protoagent.hooks.compact_protocol import CompactProtocolHook
from protoagent.models import installed
from protoagent.models.json_actions import action_schema, json_mode_system, parse_action, render_history
from protoagent.models.llama_engine import LoadedModel, Prompt, load_model, render_prompt
from protoagent.models.llama_local import LlamaLocalProvider, chat_messages, from_spec
from protoagent.models.llama_sampling import cached_prefix
from protoagent.models.registry import ModelConfig
from protoagent.models.types import Message, ModelRequest, ModelTurn, ToolCall, ToolSchema
from protoagent.workspace.tools import WORKSPACE_TOOLS

SESSION_STEPS = 20
SESSION_MAX_TOKENS = 96
SPEED_MAX_TOKENS = 128
VALIDITY_PROMPTS = 50
REEVALUATION_TARGET = 0.20
REEVALUATION_BUG = 0.50
RATIO_TARGET = 0.95
GRAMMAR_OVERHEAD_TARGET = 0.15

TOOLS: tuple[ToolSchema, ...] = tuple(tool().schema() for tool in WORKSPACE_TOOLS)
TOOL_INPUTS: dict[str, type[BaseModel]] = {tool.name: tool.input_model for tool in WORKSPACE_TOOLS}
PROTOCOL = CompactProtocolHook(
    identity="You are ProtoAgent's Coder: you change source for one focused task.",
    instructions=(
        "Read before editing. For edit_file copy a short unique old span from read_file content and pass "
        "its revision as expected_revision. Use create_file for new files. Answer with a final action when done."
    ),
)
SESSION_TASK = (
    "Add type hints to every function in src/shop/. Work one file at a time: list the folder, read a file, "
    "edit it, then move on to the next file."
)
FOLLOW_UP = "Continue with the next file of the task."
SOURCE_LINES = (
    "from decimal import Decimal",
    "",
    "def total_price(items, discount=None):",
    "    subtotal = sum(item.price * item.quantity for item in items)",
    "    if discount:",
    "        subtotal = apply_discount(subtotal, discount)",
    "    return subtotal.quantize(Decimal('0.01'))",
    "",
    "def apply_discount(amount, discount):",
    "    return amount * (1 - discount.rate)",
    "",
    "class Cart:",
    "    def __init__(self, owner):",
    "        self.owner = owner",
    "        self.items = []",
)
LISTING = ("__init__.py", "cart.py", "pricing.py", "orders.py", "inventory.py", "tax.py", "models/", "README.md")


def request_for(messages: Sequence[Message], max_tokens: int) -> ModelRequest:
    """A small-profile Coder request over the workspace tools, as the compact protocol shapes it."""
    request = ModelRequest(
        system="",
        messages=tuple(messages),
        tools=TOOLS,
        action_mode="json",
        max_output_tokens=max_tokens,
        temperature=0.0,
    )
    return PROTOCOL(request, ())


def harness_prompt(loaded: LoadedModel, request: ModelRequest) -> Prompt:
    """The prompt tokens the provider renders for this request."""
    system = json_mode_system(request.system, request.tools, tools_in_prompt=request.tools_in_prompt)
    return render_prompt(loaded, chat_messages([Message("system", system), *render_history(request.messages)]))


def action_grammar(loaded: LoadedModel, tools: Sequence[ToolSchema]) -> Any:
    """The grammar object the provider uses for these tools (its cache), built the same way if absent."""
    key = json.dumps(action_schema(tools))
    grammar = loaded.grammars.get(key)
    if grammar is None:
        from llama_cpp.llama_grammar import LlamaGrammar

        grammar = LlamaGrammar.from_json_schema(key, verbose=False)
    return grammar


async def harness_turn(provider: LlamaLocalProvider, request: ModelRequest) -> ModelTurn:
    turn: ModelTurn | None = None
    async for event in provider.stream(request):
        if isinstance(event, ModelTurn):
            turn = event
    if turn is None:
        raise RuntimeError("the provider ended without a ModelTurn")
    return turn


def raw_completion(loaded: LoadedModel, prompt: Prompt, max_tokens: int, grammar: Any) -> tuple[str, int]:
    """``create_completion`` on the loaded model: the reply text and its generated token count."""
    with loaded.lock:
        result = loaded.llama.create_completion(
            prompt=prompt.tokens, max_tokens=max_tokens, temperature=0.0, stop=prompt.stop, grammar=grammar
        )
    return str(result["choices"][0]["text"]), int(result["usage"]["completion_tokens"])


def lazy_completion(loaded: LoadedModel, prompt: Prompt, max_tokens: int, grammar: Any) -> int:
    """The harness's greedy loop (grammar checked lazily; none if ``grammar`` is None): tokens generated."""
    from protoagent.models.llama_sampling import greedy_generate

    with loaded.lock:
        llama = loaded.llama
        reuse = cached_prefix(llama, prompt.tokens)
        generation = greedy_generate(
            llama, prompt.tokens, reuse=reuse, max_tokens=max_tokens, stop=prompt.stop, grammar=grammar, emit=print_none
        )
    return len(generation.tokens)


def print_none(_: str) -> None:
    """Streamed text is not shown."""


# 1. Prefix reuse ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SessionStep:
    step: int
    input_tokens: int
    cached_tokens: int
    counted: int | None
    """Prompt tokens llama.cpp's own counter saw evaluated in this step."""
    action: str

    @property
    def reevaluated(self) -> float:
        return 1 - self.cached_tokens / self.input_tokens if self.input_tokens else 0.0


def synthetic_result(call: ToolCall, step: int) -> str:
    """A deterministic tool output shaped like the real tool's text."""
    path = str(call.arguments.get("path") or "src/shop")
    revision = f"{(step * 2654435761) % 16**8:08x}"
    if call.name == "read_file":
        count = len(SOURCE_LINES)
        lines = [f"{n:>4}  {SOURCE_LINES[(n + step) % count]}" for n in range(1, 21)]
        return f"{path} lines 1-20 of 20; revision {revision}\n" + "\n".join(lines)
    if call.name == "list_directory":
        return "\n".join(LISTING)
    if call.name == "search_regex":
        return "\n".join(
            f"src/shop/{name}:{3 + n}: def {name[:-3]}_total(items):" for n, name in enumerate(LISTING[1:6])
        )
    return f"edited {path} lines {step}-{step + 2}; source_revision: {revision}"


def grow(turn: ModelTurn, step: int) -> list[Message]:
    """What the agent loop appends after a step: the action and its result, or feedback."""
    if turn.tool_calls:
        call = turn.tool_calls[0]
        result = Message("tool", synthetic_result(call, step), tool_call_id=call.id, name=call.name)
        return [Message("assistant", turn.text, tool_calls=(call,)), result]
    if turn.stop_reason == "invalid_action":
        return [Message("user", INVALID_ACTION_FEEDBACK)]
    return [Message("assistant", turn.text), Message("user", FOLLOW_UP)]


def action_name(turn: ModelTurn) -> str:
    if turn.tool_calls:
        return turn.tool_calls[0].name
    return "cut off" if turn.stop_reason == "invalid_action" else "final"


async def worker_turn(provider: LlamaLocalProvider, request: ModelRequest) -> tuple[ModelTurn, int]:
    """One turn through the model's worker process, and the prompt tokens llama.cpp evaluated there."""
    from protoagent.models.types import Usage

    pieces: list[str] = []
    done = await asyncio.to_thread(provider.worker.request, provider.generate_message(request), on_text=pieces.append)
    reply = "".join(pieces)
    turn = parse_action(reply, request.tools)
    if not turn.tool_calls and reply.lstrip().startswith("{") and turn.text == reply.strip():
        turn = replace(turn, stop_reason="invalid_action")  # cut off, as the provider reports it
    return replace(turn, usage=Usage(**done["usage"])), int(done["evaluated"])


async def measure_prefix_reuse(provider: LlamaLocalProvider, steps: int) -> list[SessionStep]:
    messages = [Message("user", SESSION_TASK)]
    figures: list[SessionStep] = []
    for step in range(1, steps + 1):
        try:
            turn, counted = await worker_turn(provider, request_for(messages, SESSION_MAX_TOKENS))
        except LimitExceeded as error:
            print(f"  session stopped at step {step}: {error}")
            break
        usage = turn.usage
        figure = SessionStep(step, usage.input_tokens, usage.cached_input_tokens, counted, action_name(turn))
        figures.append(figure)
        print(
            f"  step {step:>2}: prompt {figure.input_tokens:>5} tokens, cached {figure.cached_tokens:>5}, "
            f"re-evaluated {figure.reevaluated:6.1%} (llama.cpp counter: {counted}), action {figure.action}"
        )
        messages.extend(grow(turn, step))
    return figures


# 2 and 3. Speed --------------------------------------------------------------------------------


@dataclass(slots=True)
class Arm:
    """Timed runs of one way of generating."""

    name: str
    run: Callable[[], Any]
    seconds: list[float] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)

    def tokens_per_second(self) -> float:
        return statistics.median(n / s for n, s in zip(self.tokens, self.seconds, strict=True) if s > 0)


def speed_request() -> ModelRequest:
    task = (
        "Create tests/test_pricing.py with pytest tests for total_price in src/shop/pricing.py: an empty cart "
        "costs 0, two items of price 2.50 cost 5.00, and a 10% discount is applied."
    )
    return request_for([Message("user", task)], SPEED_MAX_TOKENS)


async def measure_speed(provider: LlamaLocalProvider, rounds: int) -> dict[str, Arm]:
    request = speed_request()
    loaded = load_model(provider.path, provider.n_ctx)
    await harness_turn(provider, request)  # Loads the model and caches the grammar.
    prompt = harness_prompt(loaded, request)
    grammar = action_grammar(loaded, request.tools)
    llama = loaded.llama

    async def harness() -> int:
        turn = await harness_turn(provider, request)
        if turn.usage.input_tokens != len(prompt.tokens):
            print(f"  note: harness prompt has {turn.usage.input_tokens} tokens, raw prompt {len(prompt.tokens)}")
        return turn.usage.output_tokens

    async def raw() -> int:
        text, _ = raw_completion(loaded, prompt, SPEED_MAX_TOKENS, grammar)
        return len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    async def raw_grammar() -> int:
        return raw_completion(loaded, prompt, SPEED_MAX_TOKENS, grammar)[1]

    async def raw_free() -> int:
        return raw_completion(loaded, prompt, SPEED_MAX_TOKENS, None)[1]

    async def lazy_grammar() -> int:
        return lazy_completion(loaded, prompt, SPEED_MAX_TOKENS, grammar)

    async def lazy_free() -> int:
        return lazy_completion(loaded, prompt, SPEED_MAX_TOKENS, None)

    arms = [Arm("harness", harness), Arm("raw", raw), Arm("raw+grammar", raw_grammar), Arm("raw-free", raw_free)]
    arms += [Arm("lazy+grammar", lazy_grammar), Arm("lazy-free", lazy_free)]
    for arm in arms:
        await arm.run()  # Warm-up: every timed call then finds the same cached prefix.
    for round_index in range(rounds):
        shift = round_index % len(arms)
        for arm in arms[shift:] + arms[:shift]:
            start = time.perf_counter()
            tokens = await arm.run()
            arm.seconds.append(time.perf_counter() - start)
            arm.tokens.append(tokens)
    # Setup cost per call: a one-token reply, kept out of the rotation above because it leaves the
    # cache holding exactly the prompt, which would spare the next arm its one-token re-evaluation.
    setups = [Arm("setup+grammar", lambda: raw_completion(loaded, prompt, 1, grammar)[1])]
    setups.append(Arm("setup-free", lambda: raw_completion(loaded, prompt, 1, None)[1]))
    setups.append(Arm("setup lazy+grammar", lambda: lazy_completion(loaded, prompt, 1, grammar)))
    setups.append(Arm("setup lazy-free", lambda: lazy_completion(loaded, prompt, 1, None)))
    for _ in range(rounds):
        for arm in setups:
            start = time.perf_counter()
            arm.tokens.append(arm.run())
            arm.seconds.append(time.perf_counter() - start)
    return {arm.name: arm for arm in arms + setups}


# 4. Valid actions ------------------------------------------------------------------------------

FILES = ("src/shop/cart.py", "src/shop/pricing.py", "src/app/routes.py", "lib/parser.py", "src/util/dates.py")
SYMBOLS = ("total_price", "apply_discount", "parse_header", "load_config", "format_date", "Cart.add_item", "main")
FOLDERS = ("src/shop", "tests", "lib", "src/app", "docs", "scripts", "src/util")


@dataclass(frozen=True, slots=True)
class Situation:
    messages: tuple[Message, ...]
    expected: str
    """The tool a sensible reply calls, or ``final``."""


def after_read(task: str, path: str, index: int) -> tuple[Message, ...]:
    call = ToolCall(f"call_{index}", "read_file", {"path": path})
    result = synthetic_result(call, index)
    return (
        Message("user", task),
        Message("assistant", "", tool_calls=(call,)),
        Message("tool", result, tool_call_id=call.id, name="read_file"),
    )


def situation(index: int) -> Situation:
    """One of seven coding situations, varied by ``index`` over files, symbols and folders."""
    kind, variant = index % 7, index // 7
    path, symbol = FILES[(variant + kind) % len(FILES)], SYMBOLS[(3 * variant + kind) % len(SYMBOLS)]
    folder, stem = FOLDERS[variant % len(FOLDERS)], path.rsplit("/", 1)[-1].removesuffix(".py")
    if kind == 0:
        return Situation((Message("user", f"Open {path} and tell me what {symbol} does."),), "read_file")
    if kind == 1:
        task = f"In {path}, change the line `return subtotal.quantize(Decimal('0.01'))` to round to 0.1 instead."
        return Situation(after_read(task, path, index), "edit_file")
    if kind == 2:
        return Situation((Message("user", f"What files are in the {folder} folder?"),), "list_directory")
    if kind == 3:
        return Situation((Message("user", f"Find where {symbol} is defined in the repository."),), "search_regex")
    if kind == 4:
        task = f"Create tests/test_{stem}.py with one pytest test checking that {symbol} exists."
        return Situation((Message("user", task),), "create_file")
    if kind == 5:
        return Situation(after_read(f"What does apply_discount in {path} return?", path, index), "final")
    question = f"Is {path} a sensible place for a helper named {symbol}? Answer in one sentence, no tools."
    return Situation((Message("user", question),), "final")


def classify(turn: ModelTurn, *, is_action: bool) -> str:
    """The tool name or ``final`` for a valid action; otherwise what is wrong with it."""
    if turn.tool_calls:
        call = turn.tool_calls[0]
        model = TOOL_INPUTS.get(call.name)
        if model is None:
            return "unknown tool"
        try:
            model.model_validate(call.arguments)
        except ValidationError:
            return "invalid arguments"
        return call.name
    if turn.stop_reason == "invalid_action":
        return "cut off"
    return "final" if is_action else "no action"


@dataclass(slots=True)
class Validity:
    outcomes: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)

    def valid_rate(self) -> float:
        return sum(o in TOOL_INPUTS or o == "final" for o in self.outcomes) / len(self.outcomes)

    def expected_rate(self) -> float:
        return sum(o == e for o, e in zip(self.outcomes, self.expected, strict=True)) / len(self.outcomes)

    def failures(self) -> str:
        counts = Counter(o for o in self.outcomes if o not in TOOL_INPUTS and o != "final")
        return ", ".join(f"{kind} {n}" for kind, n in counts.most_common()) or "none"


async def measure_validity(provider: LlamaLocalProvider, count: int, max_tokens: int) -> dict[str, Validity]:
    loaded = load_model(provider.path, provider.n_ctx)
    on, off = Validity(), Validity()
    for index in range(count):
        case = situation(index)
        request = request_for(case.messages, max_tokens)
        turn = await harness_turn(provider, request)
        on.outcomes.append(classify(turn, is_action=True))
        text, _ = raw_completion(loaded, harness_prompt(loaded, request), max_tokens, None)
        parsed = parse_action(text, request.tools)
        # parse_action turns prose into a final turn carrying the whole reply; that is no action.
        off.outcomes.append(classify(parsed, is_action=parsed.text != text.strip()))
        on.expected.append(case.expected)
        off.expected.append(case.expected)
    return {"on": on, "off": off}


# Report ----------------------------------------------------------------------------------------


def session_summary(figures: Sequence[SessionStep]) -> list[str]:
    later = figures[1:]
    if not later:
        return ["prefix reuse: fewer than 2 steps ran"]
    shares = [f.reevaluated for f in later]
    lines = [
        f"session steps run: {len(figures)} (prompt {figures[0].input_tokens} -> {figures[-1].input_tokens} tokens)",
        f"prefix reuse, re-evaluated share, median steps 2-{figures[-1].step}: {statistics.median(shares):.1%} "
        f"(target < {REEVALUATION_TARGET:.0%})",
        f"prefix reuse, re-evaluated share, max steps 2-{figures[-1].step}: {max(shares):.1%}",
    ]
    counted = [f.counted / f.input_tokens for f in later if f.counted is not None and f.input_tokens]
    if counted:
        lines.append(f"prefix reuse, llama.cpp n_p_eval share, median: {statistics.median(counted):.1%}")
    lines.extend(
        f"WARNING: step {f.step} re-evaluated {f.reevaluated:.1%} of its prompt on an append-only step"
        for f in later
        if f.reevaluated > REEVALUATION_BUG
    )
    return lines


def speed_summary(arms: dict[str, Arm]) -> list[str]:
    harness, raw = arms["harness"].tokens_per_second(), arms["raw"].tokens_per_second()
    constrained, free = arms["raw+grammar"].tokens_per_second(), arms["raw-free"].tokens_per_second()
    lazy, lazy_free = arms["lazy+grammar"].tokens_per_second(), arms["lazy-free"].tokens_per_second()
    ratio, raw_overhead, overhead = harness / raw, free / constrained - 1, lazy_free / lazy - 1
    lines = [
        f"harness tokens/s (constrained, max {SPEED_MAX_TOKENS}): {harness:.1f}",
        f"raw llama-cpp-python tokens/s (same prompt and grammar): {raw:.1f}",
        f"harness / raw ratio: {ratio:.3f} (target >= {RATIO_TARGET})",
        f"output tokens per call, harness / raw: {statistics.median(arms['harness'].tokens):.0f} / "
        f"{statistics.median(arms['raw'].tokens):.0f}",
        f"raw constrained tokens/s: {constrained:.1f} ({statistics.median(arms['raw+grammar'].tokens):.0f} tokens)",
        f"raw unconstrained tokens/s: {free:.1f} ({statistics.median(arms['raw-free'].tokens):.0f} tokens)",
        f"grammar overhead, create_completion (full-vocabulary grammar sampler, baseline): {raw_overhead:.1%}",
        f"lazy constrained tokens/s (harness loop): {lazy:.1f} ({statistics.median(arms['lazy+grammar'].tokens):.0f} "
        "tokens)",
        f"lazy unconstrained tokens/s (harness loop, no grammar): {lazy_free:.1f} "
        f"({statistics.median(arms['lazy-free'].tokens):.0f} tokens)",
        f"grammar overhead, harness loop (lazy vs its own unconstrained run): {overhead:.1%} "
        f"(target < {GRAMMAR_OVERHEAD_TARGET:.0%})",
        f"harness loop unconstrained / raw unconstrained tokens/s: {lazy_free / free:.3f}",
        f"one-token call (setup), grammar / free: {1000 * statistics.median(arms['setup+grammar'].seconds):.1f} / "
        f"{1000 * statistics.median(arms['setup-free'].seconds):.1f} ms",
        "one-token call (setup), harness loop (always re-evaluates the last prompt token, which create_completion "
        f"skips when the cache holds exactly the prompt), grammar / free: "
        f"{1000 * statistics.median(arms['setup lazy+grammar'].seconds):.1f} / "
        f"{1000 * statistics.median(arms['setup lazy-free'].seconds):.1f} ms",
    ]
    if ratio < RATIO_TARGET:
        lines.append(f"MISSED: the harness reaches {ratio:.1%} of raw speed, under the {RATIO_TARGET:.0%} target")
    if overhead > GRAMMAR_OVERHEAD_TARGET:
        lines.append(
            f"MISSED: constrained decoding in the harness loop costs {overhead:.1%}, over the "
            f"{GRAMMAR_OVERHEAD_TARGET:.0%} target"
        )
    return lines


def validity_summary(modes: dict[str, Validity], max_tokens: int) -> list[str]:
    lines = []
    for mode, validity in modes.items():
        count = len(validity.outcomes)
        lines.append(
            f"valid-action rate, constraints {mode} ({count} prompts, max {max_tokens}): {validity.valid_rate():.0%}"
        )
        lines.append(f"expected action chosen, constraints {mode}: {validity.expected_rate():.0%}")
        lines.append(f"failures, constraints {mode}: {validity.failures()}")
    return lines


async def run(provider: LlamaLocalProvider, rounds: int, max_tokens: int) -> list[str]:
    started = time.perf_counter()
    print(f"model {provider.model} ({provider.path.name}), context window {provider.n_ctx}")
    print(f"1. prefix reuse over a {SESSION_STEPS}-step session")
    session = await measure_prefix_reuse(provider, SESSION_STEPS)
    print(f"2-3. generation speed, {rounds} rounds after a warm-up")
    arms = await measure_speed(provider, rounds)
    print(f"4. valid actions over {VALIDITY_PROMPTS} prompts")
    modes = await measure_validity(provider, VALIDITY_PROMPTS, max_tokens)
    return [
        f"model: {provider.model}",
        *session_summary(session),
        *speed_summary(arms),
        *validity_summary(modes, max_tokens),
        f"total bench time: {time.perf_counter() - started:.0f} s",
    ]


def build_summary() -> list[str]:
    """The llama-cpp-python build these figures hold for."""
    import llama_cpp

    marker = Path(sys.prefix) / ".llama-cpp-build"
    key = (
        marker.read_text(encoding="utf-8").strip()
        if marker.is_file()
        else "none recorded (not built by scripts/bootstrap)"
    )
    info = llama_cpp.llama_print_system_info().decode("utf-8", "replace").strip(" |")
    return [f"llama-cpp-python {llama_cpp.__version__}, build {key}", f"llama.cpp system info: {info}"]


def demo_summary(seeds: int) -> list[str]:
    """The bundled demo fixed with this build: wall seconds per seed (bench_guided_repair's demo arm)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_guided_repair import DEMO, DEMO_OBJECTIVE, run_once

    check = [sys.executable, "-m", "unittest", "discover", "-s", ".", "-p", "test*.py", "-q"]
    outcomes = []
    for seed in range(1, seeds + 1):
        env = {"PROTOAGENT_GUIDED_REPAIR": "on", "PROTOAGENT_LOCAL_SEED": str(seed)}
        outcome = run_once(f"seed {seed}", DEMO, DEMO_OBJECTIVE, env, 180.0, check)
        print(f"  demo seed {seed}: {'fixed+verified' if outcome.fixed else 'not fixed'} {outcome.seconds:.1f} s")
        outcomes.append(outcome)
    fixed = [o.seconds for o in outcomes if o.fixed]
    times = ", ".join(f"{o.seconds:.1f}" for o in outcomes)
    return [
        f"demo (examples/date-parser): {len(fixed)}/{len(outcomes)} seeds fixed and verified; seconds per run: {times}"
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else None)
    parser.add_argument("--model", default="", help="embedded alias or GGUF path (default: the embedded default)")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds per speed arm")
    parser.add_argument("--max-tokens", type=int, default=96, help="output limit of the valid-action prompts")
    parser.add_argument("--demo-seeds", type=int, default=3, help="demo runs with this build (0: none)")
    args = parser.parse_args()
    if not args.model:
        print(f"embedded default: {installed.default_embedded().title}")
    try:
        provider = from_spec(args.model, ModelConfig())
    except ConfigError as error:
        print(f"cannot load the model: {error}", file=sys.stderr)
        return 1
    summary = asyncio.run(run(provider, args.rounds, args.max_tokens))
    if args.demo_seeds > 0:
        print(f"5. the demo's fix time, {args.demo_seeds} seeds")
        summary += demo_summary(args.demo_seeds)
    print("\n=== summary ===")
    print("\n".join([*build_summary(), *summary]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
