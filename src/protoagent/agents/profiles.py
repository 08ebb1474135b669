"""The one role table: every built-in agent's name, description, prompt and tools.

Code-owned first-party agent profiles. User files override identity and model settings and add
tools, skills, MCP servers and prompt text; the capability lists here are never copied into a
Markdown file. The workflow's roles (``workflow.roles``) are built from this table with the
budgets of ``workflow.limits``; tool groups are read from the workspace tools' own metadata.
"""

from __future__ import annotations

from protoagent.agents.definition import AgentDefinition, AppMode
from protoagent.workspace.tools import WORKSPACE_TOOLS

ARCHITECT = "architect"
"""The Coding lead's role: every Coding surface runs under this agent name, whatever lead file."""
CODER = "coder"
TESTER = "tester"
EXPLORER = "explorer"
VERIFIER = "verifier"
SCOUT = "scout"
MCP = "mcp"
ASSISTANT = "assistant"
RESEARCHER = "researcher"
WRITER = "writer"
MAIN = "main"
"""The agent of a session composed from a preset alone (no workflow lead)."""
LEADS = frozenset({ARCHITECT, MAIN})
"""Agent names that speak for a whole Coding run (the workflow's lead, a preset's only agent)."""

READ_TOOLS = tuple(t.name for t in WORKSPACE_TOOLS if t.metadata.effect == "read")
"""The workspace tools that only read (``read_file``, ``list_directory``, ``search_regex``)."""
WRITE_TOOLS = tuple(t.name for t in WORKSPACE_TOOLS if t.metadata.effect == "write")
"""The workspace tools that change files (``edit_file``, ``create_file``, ``replace_file``)."""
COMMAND_TOOLS = ("execute_command", "shell")
CODE_NAVIGATION = ("code_context",)
"""Structural navigation of exact symbols: offered to the Coding roles that read source."""
DEFAULT_LEADS: dict[AppMode, str] = {"coding": ARCHITECT, "work": ASSISTANT}
"""The deterministic default lead of each mode (members that name no lead serve it)."""

ARCHITECT_PROMPT = (
    "You are the Architect of a coding task. Read what you need, several files a reply. "
    "Use plan_task only to narrow scope or checks. "
    "Give Coder one focused assignment with coder(task); use tester(task) for behavior changes "
    "if offered (tester then coder in one turn hands Coder its cases), unless the request gives "
    "expected results (then put the test in Coder's task). "
    "Workers run no commands; verify with run_check(check_id, phase='verify'). "
    "Reports are advice; check receipts are proof. A passing verify of all selected checks ends "
    "the run; with no checks, end with a summary."
)
CODER_PROMPT = (
    "You are Coder. Apply the assignment with small exact edits: read the file unless your assignment shows the "
    "lines and their revision, copy a short unique old span exactly from it, and call edit_file with "
    "that revision (several spans of one file: one call with edits). Use create_file for new files. When done call "
    "report_task(status='done'); if you lack context call "
    "report_task(status='needs_context', missing_paths=[...])."
)
TESTER_PROMPT = (
    "You are Tester. Read the code and tests you need in one reply (several calls), then propose regression "
    "cases and which existing check ids cover them: write the cases as test code in your reply text (your lead "
    "is shown it) and name them in report_task's summary. You cannot write files or run commands."
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
CONVERSATION_PROMPT = "You are ProtoAgent, a coding assistant. Answer briefly and plainly; no tools are available."
BATCHING = {
    ARCHITECT: "Calls in one turn run in order (coder, then run_check).",
    CODER: "Calls in one turn run in order and stop at a denial: e.g. edit_file then report_task.",
}
"""What native tool calling lets a role do in one turn (a small model's JSON action is one call)."""

ARCHITECT_TIER = (
    "plan_task",
    *READ_TOOLS,
    *CODE_NAVIGATION,
    CODER,
    TESTER,
    "run_check",
    "execute_command",
    "review_criteria",
)
"""The Coding workflow lead's tools; the run drops those its profile or team does not use.
``task_status`` (the record is in every request already), ``worker_packet`` (assignments carry
the source they name) and ``explorer`` (the lead reads and searches source itself, as the spec's
direct reads do, without another model's inference) are not offered by default; an agent file's
``tools`` can add them."""
WORK_TIER = (*READ_TOOLS, *WRITE_TOOLS, "shell", "preview")
"""Tools the Work tier offers by default (the session workspace is the only root)."""

CODING_PROMPT = (
    "You are ProtoAgent, a careful coding agent working in a real repository. "
    "Use the tools to read before you change anything. Edit with edit_file using exact old text "
    "copied from read_file and its revision. Keep changes small and focused on the objective. "
    "When the work is done, reply with a short summary and no tool call."
)
READONLY_PROMPT = (
    "You are ProtoAgent answering questions about a repository. You may only read: "
    "use read_file, list_directory and search_regex, then answer with evidence (paths and lines)."
)
CHAT_PROMPT = "You are ProtoAgent, a coding assistant. Answer briefly and plainly."
PRESET_ROWS: dict[str, tuple[str, tuple[str, ...]]] = {
    "coding": (CODING_PROMPT, READ_TOOLS + WRITE_TOOLS + COMMAND_TOOLS),
    "readonly": (READONLY_PROMPT, READ_TOOLS),
    "chat": (CHAT_PROMPT, ()),
}
"""The built-in presets a session may be composed from alone (``agents.presets``): prompt and tools."""

PROFILES: tuple[AgentDefinition, ...] = (
    AgentDefinition(
        ARCHITECT,
        "coding",
        "lead",
        "plans a coding task, delegates edits and verifies them",
        prompt=ARCHITECT_PROMPT,
        tools=ARCHITECT_TIER,
    ),
    AgentDefinition(
        CODER,
        "coding",
        "member",
        "applies edits for one focused assignment now",
        prompt=CODER_PROMPT,
        tools=("read_file", "edit_file", "create_file", "replace_file", "report_task"),
    ),
    AgentDefinition(
        TESTER,
        "coding",
        "member",
        "read-only: proposes regression cases and check ids",
        prompt=TESTER_PROMPT,
        tools=(*READ_TOOLS, *CODE_NAVIGATION, "report_task"),
    ),
    AgentDefinition(
        EXPLORER,
        "coding",
        "member",
        "read-only source discovery: finds the files and lines that matter, with evidence",
        prompt=EXPLORER_PROMPT,
        tools=(*READ_TOOLS, *CODE_NAVIGATION),
    ),
    AgentDefinition(
        VERIFIER,
        "coding",
        "member",
        "runs the selected checks without changing files",
        prompt=VERIFIER_PROMPT,
        tools=("task_status", *READ_TOOLS, "run_check"),
    ),
    AgentDefinition(SCOUT, "coding", "member", "searches the web and fetches pages", prompt=SCOUT_PROMPT),
    AgentDefinition(MCP, "coding", "member", "uses the configured MCP servers' tools", prompt=MCP_PROMPT),
    AgentDefinition(
        ASSISTANT,
        "work",
        "lead",
        "researches, writes and produces artifacts in a session workspace",
        prompt=ASSISTANT_PROMPT,
        tools=WORK_TIER,
    ),
    AgentDefinition(
        RESEARCHER,
        "work",
        "member",
        "reads workspace files and reports findings",
        prompt=RESEARCHER_PROMPT,
        tools=READ_TOOLS,
    ),
    AgentDefinition(
        WRITER,
        "work",
        "member",
        "drafts and revises documents in the workspace",
        prompt=WRITER_PROMPT,
        tools=(*READ_TOOLS, *WRITE_TOOLS),
    ),
)
"""Every built-in agent. Coder, Tester and Explorer run through the workflow's own worker tools."""

SPECIALISED_MEMBERS = frozenset({CODER, TESTER, EXPLORER})
"""Built-in members whose delegate tool (``coder``/``tester``/``explorer``) is the workflow's own."""
INTERNAL_MEMBERS = frozenset({VERIFIER, SCOUT, MCP})
"""Built-in Coding profiles the workflow runs itself (verification surface, tool sets). Explorer is a
member a lead whose agent file adds ``explorer`` delegates source discovery to with
``explorer(task)`` (and the question surface's role)."""

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
