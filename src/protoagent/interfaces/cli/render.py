"""Terminal rendering of a live session: model text, tool cards and approval prompts."""

from __future__ import annotations

import asyncio
import re
import sys
from typing import TYPE_CHECKING

from rich.markup import escape

from protoagent.events.catalog import (
    ApprovalDecided,
    ContextCompacted,
    ModelCompleted,
    ModelDelta,
    ModelFailed,
    ModelRetrying,
    Payload,
    RunContract,
    SessionCreated,
    SessionResumed,
    SkillResolved,
    ToolEnded,
    ToolStarted,
    VerificationUnavailable,
    WorkerStarted,
    WorkflowPhase,
)
from protoagent.events.types import Event
from protoagent.tools.approvals import Answerer, ApprovalAnswer, ApprovalRequest

if TYPE_CHECKING:
    from rich.console import Console

    from protoagent.workflow.run_report import RunReport

_STATUS_STYLE = {"ok": "green", "error": "red", "failed": "red", "denied": "yellow", "rejected": "magenta"}
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0 controls but tab and newline, ESC among them, DEL and C1: what a terminal acts on instead of showing."""


def visible(text: str, *, lines: bool = True) -> str:
    """``text`` with every terminal control character written as a visible escape (``\\x1b``).

    Model-written or repository-written text (a command, an argument, output) must show what it
    says, never clear the screen, move the cursor or retitle the window. ``lines`` keeps newlines
    and tabs (a diff, a multi-line preview); otherwise they are escaped too.
    """
    pattern = _CONTROL if lines else _ALL_CONTROL
    return pattern.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


_ALL_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


class TerminalRenderer:
    """Subscribes to a session log and prints what happens as it happens."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._streaming = False

    def __call__(self, event: Event) -> None:
        match event.typed_payload():
            case SessionCreated(model=model, approval_policy=policy, root=root):
                self.console.print(
                    f"[bold]session[/bold] {event.session_id}  model={model}  approval={policy}  repo={root}"
                )
            case SessionResumed(model=model):
                self.console.print(f"[bold]session[/bold] {event.session_id} continued  model={model}")
            case ModelDelta(text=text):
                self._streaming = True
                self.console.print(visible(text), end="", markup=False, highlight=False)
            case ModelCompleted():
                self._end_stream()
            case ToolStarted(tool=tool, arguments=arguments):
                args = ", ".join(f"{k}={_short(v)}" for k, v in arguments.items())
                self.console.print(f"[cyan]▶ {escape(visible(tool))}[/cyan]({escape(args)})", highlight=False)
            case ToolEnded() as ended:
                self._tool_ended(ended)
            case ModelRetrying(delay_s=delay, error=error):
                self.console.print(f"[yellow]retrying in {delay:.1f}s: {error}[/yellow]")
            case ModelFailed(error=error):
                self._end_stream()
                self.console.print(f"[red]model failed: {error}[/red]", highlight=False)
            case RunContract(surface=surface, source=source, reason=reason):
                self.console.print(f"[bold]surface[/bold] {surface} ({source}: {reason})")
            case WorkflowPhase(phase=phase):
                self.console.print(f"[bold magenta]── {phase}[/bold magenta]")
            case WorkerStarted(role=role, task=task):
                self.console.print(f"[bold]{role}[/bold] ← {_short(task, 100)}")
            case VerificationUnavailable(note=note):
                self.console.print(f"[yellow]verification unavailable: {note}[/yellow]")
            case ApprovalDecided(decision=decision, source=source, reason=reason) if source != "answerer":
                self.console.print(f"  [dim]{decision} by {source}: {reason}[/dim]")
            case other:
                self._notice(other)

    def _notice(self, payload: Payload) -> None:
        """Events shown only in some cases: a skill the request named but that was refused, and a
        compaction (the oldest turns now read as a summary)."""
        match payload:
            case SkillResolved(refused=refused, reason=reason) if refused:
                self.console.print(f"[yellow]skill not activated: {escape(reason)}[/yellow]")
            case ContextCompacted() as compacted:
                from protoagent.context.compaction import describe_compaction

                line = describe_compaction(compacted)
                self.console.print(f"[dim]{escape(visible(line))}[/dim]", highlight=False)

    def _tool_ended(self, ended: ToolEnded) -> None:
        status: str = ended.status
        data = ended.data
        if status == "ok" and data.get("outcome") == "failed":
            status = "failed"  # a check that ran and failed: the tool worked, the check did not pass
        style = _STATUS_STYLE.get(status, "white")
        first = ended.output.splitlines()[0] if ended.output else ""
        first = first.removeprefix("error:").removeprefix(ended.status).strip()
        self.console.print(f"  [{style}]{status}[/{style}] {escape(_short(first, 100))}", highlight=False)
        if ended.tool == "preview" and data.get("running") and isinstance(data.get("url"), str):
            self.console.print(
                f"  [bold]preview[/bold] {escape(data['url'])}", highlight=False
            )  # a server left running

    def _end_stream(self) -> None:
        if self._streaming:
            self.console.print()
            self._streaming = False


def terminal_answerer(console: Console) -> Answerer | None:
    """An answerer that asks on the terminal, or ``None`` when there is no terminal to ask on."""
    if not sys.stdin.isatty():
        return None

    async def ask(request: ApprovalRequest) -> ApprovalAnswer:
        console.rule(f"approve {request.effect} by {request.tool}?")
        console.print(visible(request.preview), markup=False, highlight=False)
        reply = await asyncio.to_thread(input, "allow? y = once, s = for this session, n or a reason = deny [y/s/N] ")
        return answer_from_reply(reply)

    return ask


def answer_from_reply(reply: str) -> ApprovalAnswer:
    """A typed reply as one of the three choices: ``y`` once, ``s`` for the session, else deny
    (any other text is the reason the model sees)."""
    text = reply.strip()
    match text.lower():
        case "y" | "yes" | "once":
            return ApprovalAnswer.once("approved once on the terminal")
        case "s" | "session" | "always":
            return ApprovalAnswer.for_session("approved for this session on the terminal")
        case "" | "n" | "no":
            return ApprovalAnswer.deny("declined on the terminal")
        case _:
            return ApprovalAnswer.deny(f"declined on the terminal: {text}")


def _short(value: object, limit: int = 60) -> str:
    """One line of at most ``limit`` characters, control characters shown as escapes."""
    text = visible(str(value).replace("\n", "⏎"), lines=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_report(console: Console, report: RunReport) -> None:
    """The evidence report at the end of a run (or of a recorded one, ``RunReport.from_events``)."""
    yes = {True: "[green]yes[/green]", False: "[red]no[/red]"}
    evidence = report.evidence
    console.print()
    console.rule(f"{report.status} · {report.surface} · session {report.session_id}")
    console.print(
        f"applied: {yes[evidence.applied]}   verified: {yes[evidence.verified]} "
        f"({evidence.verification})   criteria_supported: {yes[evidence.criteria_supported]}"
    )
    if evidence.changed_files:
        console.print("changed files: " + ", ".join(evidence.changed_files), highlight=False)
    for effect in evidence.external_effects:
        line = f"{effect['server']}/{effect['tool']} {effect['arguments_summary']} ({effect['status']})"
        console.print(escape(f"  external effect (MCP, outside the workspace): {line}"), highlight=False)
    for check in evidence.checks:
        tests = f", {check.tests_run} tests" if check.tests_run is not None else ""
        console.print(escape(f"  check {check.id} [{check.phase}]: {check.outcome}{tests}"), highlight=False)
    for note in report.notes:
        console.print(f"  [yellow]note:[/yellow] {escape(note)}", highlight=False)
    if report.summary:
        console.print(visible(report.summary), markup=False, highlight=False)
