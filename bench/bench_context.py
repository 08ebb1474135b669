"""Context-layer figures: fixed prompt overhead per request and prefix reuse across a session.

Method
------
1. Fixed prompt overhead per request = system text + tool declarations (+ worker cards, which
   live in the system text), counted the way admission counts them (``estimate_request``
   with no messages and no output reserve; JSON-mode schemas as prompt text, native schemas
   as the provider payload). Counted with the default estimator (ceil(utf-8 bytes / 3.5) plus
   4 tokens per message) and, when the default embedded model is installed, also with that
   model's own tokenizer (vocabulary only, no inference).
   - small profile, Coder: the compact protocol hook (JSON action mode) over read_file,
     edit_file, create_file, replace_file (the real workspace tool classes when present, else
     representative pydantic models defined here) and report_task (a representative model
     defined here). Target: at most 1,000 tokens.
   - small profile, Architect: the compact protocol with six worker cards and report_task.
   - standard profile: the ``coding`` preset's prompt with native declarations of its tools
     (the real built-in tools when they import, else the representative models), and the
     Architect's prompt with the native declarations ``run_task`` offers it on the editing
     surface (tester enabled). Also counted with OpenAI's cl100k_base when tiktoken is installed.
     Target: at most 1,000 cl100k tokens.
   - the standard Architect once ``recall`` is declared (projection declares it only after one
     of its receipts is in the request; before that the Architect's figure above is what is sent).
2. Prefix reuse: a synthetic 20-step small-profile Coder session in a real session log
   (``SessionLog(MemoryStore())``): one task, then 20 tool calls whose outputs cycle through a
   4,000-char read, an 800-char search, a 2,400-char read and a 120-char edit receipt; the task
   record changes at step 10 (a report). Each step's request goes through projection (the
   small profile's history budget, capped at half a known window; the assignment's reads stay
   exact), the compact protocol and admission (8,192-token cap, task record shown once and its
   update appended). For every step after the first, the new share is
   ``1 - common_prefix_ratio(previous, current)`` on the rendered requests. A step is
   append-only when the previous rendered request is a prefix of the current one (nothing
   newly projected or evicted). Target: new share under 20% on append-only steps.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import statistics
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from protoagent.agents.presets import get_preset
from protoagent.agents.profiles import CODING_PROMPT
from protoagent.context.projection import settings_for
from protoagent.context.tokens import EstimatingCounter, TokenCounter, common_prefix_ratio, estimate_request
from protoagent.context.tokens import render_prompt as render
from protoagent.events import MemoryStore, SessionLog, derive_messages, new_session_id
from protoagent.hooks.admission import ContextAdmissionHook
from protoagent.hooks.compact_protocol import CompactProtocolHook, WorkerCard
from protoagent.hooks.projection import ToolContextProjectionHook
from protoagent.models.types import ActionMode, ModelRequest, ToolSchema
from protoagent.tools.base import AnyTool, ToolMetadata
from protoagent.tools.recall import RecallTool

CODER_IDENTITY = "You are ProtoAgent's Coder: you change source for one focused task."
CODER_INSTRUCTIONS = (
    "Read before editing. For edit_file copy a short unique old span literally from read_file content "
    "and pass its revision (or the source_revision of your last edit) as expected_revision. "
    "Use create_file for new files and replace_file only for whole-file rewrites. "
    "Finish with report_task."
)
ARCHITECT_IDENTITY = "You are ProtoAgent's Architect: you plan the task and delegate to workers."
ARCHITECT_INSTRUCTIONS = "Delegate one focused step at a time; decide from receipts, not from reports."
CARDS = (
    WorkerCard("explorer", "question", "reads the repository and answers with evidence"),
    WorkerCard("coder", "task", "applies edits for one focused task"),
    WorkerCard("tester", "checks", "runs discovered checks and returns receipts"),
    WorkerCard("verifier", "criteria", "checks evidence against the acceptance criteria"),
    WorkerCard("scout", "query", "searches the web and fetches pages"),
    WorkerCard("mcp", "request", "calls a configured MCP server tool"),
)
Hook = Callable[[ModelRequest, Any], ModelRequest]
CODER_TOOLS = ("read_file", "edit_file", "create_file", "replace_file")
STRICT = ConfigDict(extra="forbid")


class ReportTaskInput(BaseModel):
    """Representative input of the Coder's closing report (the real tool lands elsewhere)."""

    model_config = STRICT
    status: str = Field(description="done, blocked or partial.")
    summary: str = Field(description="What changed and why, in a few sentences.")
    changed_paths: list[str] = Field(default_factory=list, description="Files you changed.")


class _Read(BaseModel):
    model_config = STRICT
    path: str = Field(description="Path relative to the workspace root.")
    start_line: int = Field(1, ge=1, description="First line (1-based).")
    end_line: int | None = Field(None, ge=1, description="Last line, inclusive; omit to read as far as fits.")


class _Edit(BaseModel):
    model_config = STRICT
    path: str = Field(description="Path relative to the workspace root.")
    old: str = Field(description="Exact text to replace; must occur exactly once.")
    new: str = Field(description="Replacement text.")
    expected_revision: str = Field(description="revision from read_file, or source_revision from your last edit.")


class _Create(BaseModel):
    model_config = STRICT
    path: str = Field(description="Path relative to the workspace root.")
    content: str = Field(description="Full content of the new file.")


class _Replace(_Create):
    expected_revision: str = Field(description="revision from read_file, or source_revision from your last edit.")


REPRESENTATIVE: dict[str, tuple[str, type[BaseModel]]] = {
    "read_file": ("Read lines of a text file. Returns content and revision.", _Read),
    "edit_file": ("Replace one exact occurrence of old with new in a file.", _Edit),
    "create_file": ("Create a new file. Fails if the file exists.", _Create),
    "replace_file": ("Replace a whole existing file. Prefer edit_file for small changes.", _Replace),
}


def report_task_schema() -> ToolSchema:
    return ToolSchema("report_task", "Report the task's outcome and end.", ReportTaskInput.model_json_schema())


def workspace_schemas(names: tuple[str, ...]) -> tuple[tuple[ToolSchema, ...], str]:
    """Schemas from the real tool classes when they import, else the representative models."""
    try:
        from protoagent.workspace.tools import WORKSPACE_TOOLS

        real = {cls.name: cls() for cls in WORKSPACE_TOOLS}
        return tuple(real[name].schema() for name in names), "real workspace tools"
    except (ImportError, KeyError):
        made = (ToolSchema(n, REPRESENTATIVE[n][0], REPRESENTATIVE[n][1].model_json_schema()) for n in names)
        return tuple(made), "representative models"


def standard_schemas() -> tuple[tuple[ToolSchema, ...], str]:
    names = get_preset("coding").tools
    try:
        from protoagent.agents.session import builtin_tools

        real = {tool.name: tool for tool in builtin_tools()}
        return tuple(real[name].schema() for name in names), "real built-in tools"
    except (ImportError, KeyError):
        schemas, _ = workspace_schemas(CODER_TOOLS)
        return schemas, "representative models (built-in tools unavailable)"


def architect_schemas() -> tuple[ToolSchema, ...]:
    """The standard-profile Architect's tools exactly as ``run_task`` offers them (editing surface)."""
    from protoagent.agents.session import builtin_tools
    from protoagent.checks.run_check import CHECK_TOOLS
    from protoagent.workflow import roles
    from protoagent.workflow.delegation import BUILTIN_DELEGATE_TOOLS
    from protoagent.workflow.packets import PACKET_TOOLS
    from protoagent.workflow.task_tools import TASK_TOOLS

    workflow_tools: tuple[type[AnyTool], ...] = (
        *TASK_TOOLS,
        *BUILTIN_DELEGATE_TOOLS,
        *PACKET_TOOLS,
        *CHECK_TOOLS,
    )
    tools = [*builtin_tools(), *(cls() for cls in workflow_tools)]
    by_name = {tool.name: tool for tool in tools}
    return tuple(by_name[name].schema() for name in roles.architect("standard", "native").tools)


def architect_prompt() -> str:
    """The standard-profile Architect's system prompt as sent (role prompt + the batching hint)."""
    from protoagent.workflow import roles

    return roles.architect("standard", "native").system_prompt


def cl100k_counter() -> tuple[str, TokenCounter] | None:
    """OpenAI's cl100k_base encoding via tiktoken, if installed. Offline, tiktoken cannot fetch the
    vocabulary; litellm (a dependency of the ``bench`` extra) ships a copy, used when present."""
    try:
        import tiktoken
    except ImportError:
        return None
    spec = importlib.util.find_spec("litellm")
    if spec is not None and spec.origin is not None:
        bundled = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(bundled))
    try:
        encoding = tiktoken.get_encoding("cl100k_base")
    except Exception:  # tiktoken raises plain request errors when the vocabulary is unreachable
        return None

    class Cl100kCounter:
        def count(self, text: str) -> int:
            return len(encoding.encode(text, disallowed_special=()))

    return "cl100k", Cl100kCounter()


def overhead(request: ModelRequest, counter: TokenCounter) -> int:
    estimate = estimate_request(request, counter)
    return estimate.system + estimate.tools


def compact_request(
    identity: str,
    instructions: str,
    tools: tuple[ToolSchema, ...],
    cards: tuple[WorkerCard, ...],
    mode: ActionMode = "json",
) -> ModelRequest:
    hook = CompactProtocolHook(identity=identity, instructions=instructions, cards=cards)
    return hook(ModelRequest(system="", messages=(), tools=tools, action_mode=mode, agent_role="coder"), [])


def embedded_counter() -> tuple[str, TokenCounter] | None:
    """The default embedded model's own tokenizer (vocabulary only, no inference), if installed."""
    try:
        import llama_cpp

        from protoagent.models import installed
    except ImportError:
        return None
    model = installed.default_embedded()
    if not installed.embedded_status(model).installed:
        return None
    path = installed.embedded_gguf_path(model)
    llama = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)

    class EmbeddedCounter:
        def count(self, text: str) -> int:
            return len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    return f"{model.alias} tokenizer", EmbeddedCounter()


def print_overheads(counters: dict[str, TokenCounter]) -> None:
    coder_tools, source = workspace_schemas(CODER_TOOLS)
    coder_tools = (*coder_tools, report_task_schema())
    standard_tools, standard_source = standard_schemas()
    cases: list[tuple[str, ModelRequest]] = [
        (
            "small Coder, JSON mode (compact protocol)",
            compact_request(CODER_IDENTITY, CODER_INSTRUCTIONS, coder_tools, ()),
        ),
        (
            "small Coder, native mode (compact protocol)",
            compact_request(CODER_IDENTITY, CODER_INSTRUCTIONS, coder_tools, (), mode="native"),
        ),
        (
            "small Architect, JSON mode, 6 worker cards",
            compact_request(ARCHITECT_IDENTITY, ARCHITECT_INSTRUCTIONS, (report_task_schema(),), CARDS),
        ),
        (
            "standard 'coding' preset, native declarations",
            ModelRequest(system=CODING_PROMPT, messages=(), tools=standard_tools),
        ),
        (
            "standard Architect, native declarations",
            ModelRequest(system=architect_prompt(), messages=(), tools=architect_schemas()),
        ),
    ]
    print(
        f"fixed prompt overhead per request (system + tool schemas + cards); Coder tools from {source}, "
        f"standard tools from {standard_source}"
    )
    for label, request in cases:
        figures = ", ".join(f"{name} {overhead(request, counter)}" for name, counter in counters.items())
        print(f"  {label:<48} {figures} tokens")
    coder = overhead(cases[0][1], counters["estimate"])
    print(f"  small Coder target <= 1000 tokens: {'met' if coder <= 1000 else 'MISSED'} ({coder} estimated)")
    for name, counter in counters.items():
        if name.endswith("tokenizer"):
            own = overhead(cases[0][1], counter)
            print(f"  small Coder, {name}: {own} tokens ({'met' if own <= 1000 else 'MISSED'}; target <= 1000)")
    if "cl100k" in counters:
        architect = overhead(cases[-1][1], counters["cl100k"])
        verdict = "met" if architect <= 1000 else "MISSED"
        print(f"  standard Architect, cl100k: {architect} tokens ({verdict}; target <= 1000)")
        with_recall = replace(cases[-1][1], tools=(*cases[-1][1].tools, RecallTool().schema()))
        print(
            f"  standard Architect once recall is declared, cl100k: {overhead(with_recall, counters['cl100k'])} tokens"
        )
    else:
        print("  cl100k figures need tiktoken (pip install -e '.[bench]' brings it with litellm)")


OUTPUT_CYCLE: tuple[tuple[str, int], ...] = (
    ("read_file", 4000),
    ("search_regex", 800),
    ("read_file", 2400),
    ("edit_file", 120),
)


def synthetic_output(step: int, size: int) -> str:
    lines = "".join(
        f"{step:02d}:{n:04d}    value_{n} = compute(value_{n - 1}, step={step})\n" for n in range(size // 40)
    )
    return (lines + "x" * size)[:size]


RECORD = {"text": "goal: fix parse_line\nphase: edit"}


def coder_hooks(counter: TokenCounter, window: int | None) -> tuple[list[Hook], ContextAdmissionHook]:
    admission = ContextAdmissionHook(
        window=window, profile="small", counter=counter, task_record=lambda: RECORD["text"]
    )
    metadata = {"read_file": ToolMetadata(observation="revision_aware")}
    compact = CompactProtocolHook(identity=CODER_IDENTITY, instructions=CODER_INSTRUCTIONS)
    projection = ToolContextProjectionHook(metadata, settings_for("small", window), counter)
    return [projection, compact, admission], admission


def session_requests(counter: TokenCounter, window: int | None, steps: int = 20) -> list[tuple[ModelRequest, int]]:
    """Each step's request after the hooks, with the messages admission had evicted by then."""
    log = SessionLog(MemoryStore(), new_session_id())
    log.append("session.created", {"preset": "bench", "model": "none", "root": ".", "approval_policy": "auto"})
    log.append("turn.started", {}, agent="coder")
    log.append("user.message", {"text": "Fix the off-by-one in parse_line and keep the tests green."}, agent="coder")
    tools, _ = workspace_schemas(CODER_TOOLS)
    search = ToolSchema("search_regex", "Search files.", {"type": "object"})
    tools = (*tools, report_task_schema(), search, RecallTool().schema())
    hooks, admission = coder_hooks(counter, window)
    RECORD["text"] = "goal: fix parse_line\nphase: edit"
    requests: list[tuple[ModelRequest, int]] = []
    for step in range(1, steps + 1):
        tool, size = OUTPUT_CYCLE[(step - 1) % len(OUTPUT_CYCLE)]
        call = {"id": f"c{step}", "name": tool, "arguments": {"path": "src/parse.py"}}
        log.append("model.completed", {"text": "", "tool_calls": [call]}, agent="coder")
        ended = {"call_id": f"c{step}", "tool": tool, "status": "ok", "output": synthetic_output(step, size)}
        if tool == "read_file":
            ended["data"] = {"path": "src/parse.py", "revision": "0" * 64, "start_line": 1, "end_line": size // 40}
        log.append("tool.ended", ended, agent="coder")
        if step == 10:
            RECORD["text"] += "\nreport from tester: done — two cases proposed"
        messages = tuple(derive_messages(log.events, "coder"))
        request = ModelRequest(system="", messages=messages, tools=tools, action_mode="json", agent_role="coder")
        for hook in hooks:
            request = hook(request, log.events)
        report = admission.last_report
        requests.append((request, report.evicted_message_count if report else 0))
    return requests


def prefix_reuse(counter: TokenCounter, window: int | None, label: str) -> None:
    requests = session_requests(counter, window)
    append_only: list[float] = []
    others: list[float] = []
    shares = ["   -"]
    for (previous, _), (current, _) in itertools.pairwise(requests):
        share = 1 - common_prefix_ratio(previous, current)
        (append_only if render(current).startswith(render(previous)) else others).append(share)
        shares.append(f"{share * 100:4.0f}")
    print(f"prefix reuse, synthetic 20-step small-profile Coder session, {label}:")
    print("  prompt tokens per step: " + " ".join(f"{estimate_request(r, counter).prompt:5d}" for r, _ in requests))
    print("  new share per step, %:  " + " ".join(f"{s:>5}" for s in shares))
    print("  evicted messages:       " + " ".join(f"{e:5d}" for _, e in requests))
    print(
        f"  append-only steps: {len(append_only)}, new share median {statistics.median(append_only):.1%}, "
        f"max {max(append_only):.1%} (target < 20%)"
    )
    if others:
        print(
            f"  steps that projected or evicted: {len(others)}, new share median {statistics.median(others):.1%}, "
            f"max {max(others):.1%}"
        )


def main() -> None:
    counters: dict[str, TokenCounter] = {"estimate": EstimatingCounter()}
    cl100k = cl100k_counter()
    if cl100k is not None:
        counters[cl100k[0]] = cl100k[1]
    embedded = embedded_counter()
    if embedded is not None:
        counters[embedded[0]] = embedded[1]
    print_overheads(counters)
    prefix_reuse(counters["estimate"], None, "8192-token small-profile cap (no known window)")
    prefix_reuse(counters["estimate"], 4096, "context_window 4096 (forces eviction)")


if __name__ == "__main__":
    main()
