"""Code-owned first-party agent profiles: role descriptions, prompts and mode tool policy.

User files override identity and model settings and add tools, skills, MCP servers and
prompt text; the capability lists here are never copied into a Markdown file.
"""

from __future__ import annotations

from protoagent.agents.definition import AgentDefinition, AppMode
from protoagent.agents.presets import COMMAND_TOOLS, READ_TOOLS, WRITE_TOOLS

CODE_NAVIGATION = ("code_context",)
"""Structural navigation of exact symbols: offered to the Coding roles that read source."""
DEFAULT_LEADS: dict[AppMode, str] = {"coding": "architect", "work": "assistant"}
"""The deterministic default lead of each mode (members that name no lead serve it)."""

ARCHITECT_PROMPT = (
    "You are the Architect of a coding task. Read the source you need. "
    "Call plan_task only to narrow scope or checks. "
    "Give Coder one focused edit assignment with coder(task); use tester(task) for behaviour changes "
    "if offered. Workers run no commands; run final checks with run_check(check_id, phase='verify'). "
    "Reports are advice; only check receipts prove a change. A passing verify of every selected check ends "
    "the run; with no checks, end with a short summary."
)
CODER_PROMPT = (
    "You are Coder. Apply the assignment with small exact edits: read the file unless your assignment shows the "
    "lines and their revision, copy a short unique old span literally from that content, and call edit_file with "
    "that revision (several spans of one file: one call with edits). Use create_file for new files. When done call "
    "report_task(status='done'); if you lack context call "
    "report_task(status='needs_context', missing_paths=[...])."
)
TESTER_PROMPT = (
    "You are Tester. Read the code and tests, propose regression cases and which existing check ids "
    "cover them. You cannot write files or run commands. End with report_task."
)
EXPLORER_PROMPT = (
    "You are Explorer: read-only source discovery. Find the files, symbols and lines that matter with "
    "search_regex, list_directory and read_file; once you know an exact symbol, use code_context for its "
    "definition, references, callers or callees. Answer briefly citing paths and line numbers. "
    "You cannot change files."
)
VERIFIER_PROMPT = (
    "You verify this repository without changing it. Use run_check(check_id, phase='verify') for the "
    "selected checks and read files if needed, then summarize the results."
)
SCOUT_PROMPT = "You are Scout. Search the web and fetch pages for the lead; report sources with their addresses."
MCP_PROMPT = "You are the MCP agent. Use the configured MCP servers' tools for the lead and report what they returned."
MEMBER_PROMPT = (
    "You are a member of a team working for its lead. Do the assignment with the tools you have, "
    "then end with a short report of what you found or did."
)
ASSISTANT_PROMPT = (
    "You are ProtoAgent's Work assistant. Research, write and produce artifacts in this session's "
    "workspace folder. Delegate focused parts to your team members when that helps, then finish with a "
    "short summary naming the files you produced."
)
RESEARCHER_PROMPT = "You are Researcher. Read the workspace files and sources you can reach and report findings."
WRITER_PROMPT = "You are Writer. Draft and revise documents in the workspace with create_file and edit_file."

ARCHITECT_TIER = (
    "plan_task",
    *READ_TOOLS,
    *CODE_NAVIGATION,
    "coder",
    "tester",
    "explorer",
    "run_check",
    "execute_command",
    "review_criteria",
)
"""The Coding workflow lead's tools; the run drops those its profile or team does not use.
``task_status`` (the record is in every request already) and ``worker_packet`` (assignments carry
the source they name) are not offered by default; an agent file's ``tools`` can add them."""
WORK_TIER = (*READ_TOOLS, *WRITE_TOOLS, "shell", "preview")
"""Tools the Work tier offers by default (the session workspace is the only root)."""

PROFILES: tuple[AgentDefinition, ...] = (
    AgentDefinition(
        "architect",
        "coding",
        "lead",
        "plans a coding task, delegates edits and verifies them",
        prompt=ARCHITECT_PROMPT,
        tools=ARCHITECT_TIER,
    ),
    AgentDefinition(
        "coder",
        "coding",
        "member",
        "applies edits for one focused assignment now",
        prompt=CODER_PROMPT,
        tools=("read_file", "edit_file", "create_file", "replace_file", "report_task"),
    ),
    AgentDefinition(
        "tester",
        "coding",
        "member",
        "read-only: proposes regression cases and check ids",
        prompt=TESTER_PROMPT,
        tools=(*READ_TOOLS, *CODE_NAVIGATION, "report_task"),
    ),
    AgentDefinition(
        "explorer",
        "coding",
        "member",
        "read-only source discovery: finds the files and lines that matter, with evidence",
        prompt=EXPLORER_PROMPT,
        tools=(*READ_TOOLS, *CODE_NAVIGATION),
    ),
    AgentDefinition(
        "verifier",
        "coding",
        "member",
        "runs the selected checks without changing files",
        prompt=VERIFIER_PROMPT,
        tools=("task_status", *READ_TOOLS, "run_check"),
    ),
    AgentDefinition("scout", "coding", "member", "searches the web and fetches pages", prompt=SCOUT_PROMPT),
    AgentDefinition("mcp", "coding", "member", "uses the configured MCP servers' tools", prompt=MCP_PROMPT),
    AgentDefinition(
        "assistant",
        "work",
        "lead",
        "researches, writes and produces artifacts in a session workspace",
        prompt=ASSISTANT_PROMPT,
        tools=WORK_TIER,
    ),
    AgentDefinition(
        "researcher",
        "work",
        "member",
        "reads workspace files and reports findings",
        prompt=RESEARCHER_PROMPT,
        tools=READ_TOOLS,
    ),
    AgentDefinition(
        "writer",
        "work",
        "member",
        "drafts and revises documents in the workspace",
        prompt=WRITER_PROMPT,
        tools=(*READ_TOOLS, *WRITE_TOOLS),
    ),
)
"""Every built-in agent. Coder, Tester and Explorer run through the workflow's own worker tools."""

SPECIALISED_MEMBERS = frozenset({"coder", "tester", "explorer"})
"""Built-in members whose delegate tool (``coder``/``tester``/``explorer``) is the workflow's own."""
INTERNAL_MEMBERS = frozenset({"verifier", "scout", "mcp"})
"""Built-in Coding profiles the workflow runs itself (verification surface, tool sets). Explorer is a
member the Architect delegates source discovery to with ``explorer(task)`` (and the question
surface's role)."""

MEMBER_DEFAULT_TOOLS: tuple[str, ...] = READ_TOOLS
"""A user member that is not a built-in and names no tools can read."""


def profile_for(mode: AppMode, name: str) -> AgentDefinition | None:
    for profile in PROFILES:
        if profile.mode == mode and profile.name == name:
            return profile
    return None


def base_of(definition: AgentDefinition) -> tuple[str, tuple[str, ...]]:
    """The code-owned prompt and tier tools of this agent: its profile's, else its role's."""
    profile = profile_for(definition.mode, definition.name)
    if profile is not None:
        return profile.prompt, profile.tools
    if definition.role == "member":
        return MEMBER_PROMPT, MEMBER_DEFAULT_TOOLS
    if definition.mode == "work":
        return ASSISTANT_PROMPT, WORK_TIER
    return ARCHITECT_PROMPT, ARCHITECT_TIER


__all__ = ["COMMAND_TOOLS", "DEFAULT_LEADS", "PROFILES", "profile_for"]
