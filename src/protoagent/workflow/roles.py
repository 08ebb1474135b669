"""Roles are data: a prompt, the exact tools, limits and the profile they run with."""

from __future__ import annotations

from dataclasses import replace

from protoagent.agents.presets import READ_TOOLS, Preset
from protoagent.models.types import ActionMode
from protoagent.tools.base import Profile

WINDOW_MODEL_CALLS = 9
"""Coder stops before the tenth provider call of an inference window."""

ARCHITECT_PROMPT = (
    "You are the Architect of a coding task. Choose focused work and explain the outcome. "
    "Read source with read_file/list_directory/search_regex. Call plan_task only to narrow scope or checks. "
    "Give Coder one focused edit assignment with coder(task). Use tester(task) for behaviour changes "
    "when it is available. Run final checks with run_check(check_id, phase='verify'). "
    "Reports are advice; only check receipts prove a change. Finish with a short summary."
)
CODER_PROMPT = (
    "You are Coder. Apply the assignment with small exact edits: read the file, copy a short unique old "
    "span literally from read_file content, and call edit_file with the returned revision. Use create_file "
    "for new files. When done call report_task(status='done'); if you lack context call "
    "report_task(status='needs_context', missing_paths=[...])."
)
TESTER_PROMPT = (
    "You are Tester. Read the code and tests, propose regression cases and which existing check ids "
    "cover them. You cannot write files or run commands. End with report_task."
)
QUESTION_PROMPT = (
    "You answer questions about this repository with evidence. Read with read_file, list_directory and "
    "search_regex, then answer citing paths and line numbers. You cannot change files."
)
CONVERSATION_PROMPT = "You are ProtoAgent, a coding assistant. Answer briefly and plainly; no tools are available."
VERIFIER_PROMPT = (
    "You verify this repository without changing it. Use run_check(check_id, phase='verify') for the "
    "selected checks and read files if needed, then summarize the results."
)

ARCHITECT_TOOLS = ("task_status", "plan_task", *READ_TOOLS, "coder", "tester", "run_check", "execute_command")
CODER_TOOLS = ("read_file", "edit_file", "create_file", "replace_file", "report_task")
TESTER_TOOLS = (*READ_TOOLS, "report_task")


def architect(profile: Profile, mode: ActionMode, tester_enabled: bool = True) -> Preset:
    tools = ARCHITECT_TOOLS if tester_enabled else tuple(t for t in ARCHITECT_TOOLS if t != "tester")
    if profile == "small":
        # The task record is already injected into every small-profile request, so task_status
        # would only spend a model call re-reading it.
        tools = tuple(t for t in tools if t != "task_status")
    else:
        # Small owned-local inference hides the low-level packet in favour of coder(task)/tester(task).
        tools = (*tools, "worker_packet")
    return Preset("architect", ARCHITECT_PROMPT, tools, max_steps=16, profile=profile, action_mode=mode)


def coder(profile: Profile, mode: ActionMode) -> Preset:
    return Preset("coder", CODER_PROMPT, CODER_TOOLS, max_steps=WINDOW_MODEL_CALLS, profile=profile, action_mode=mode)


def tester(profile: Profile, mode: ActionMode) -> Preset:
    return Preset("tester", TESTER_PROMPT, TESTER_TOOLS, max_steps=6, profile=profile, action_mode=mode)


def question(profile: Profile, mode: ActionMode) -> Preset:
    return Preset("question", QUESTION_PROMPT, READ_TOOLS, max_steps=8, profile=profile, action_mode=mode)


def conversation(profile: Profile, mode: ActionMode) -> Preset:
    return Preset("conversation", CONVERSATION_PROMPT, (), max_steps=1, profile=profile, action_mode=mode)


def verifier(profile: Profile, mode: ActionMode) -> Preset:
    return Preset(
        "verifier",
        VERIFIER_PROMPT,
        ("task_status", *READ_TOOLS, "run_check"),
        max_steps=8,
        profile=profile,
        action_mode=mode,
    )


def with_steps(preset: Preset, steps: int) -> Preset:
    return replace(preset, max_steps=steps)
