"""Terminal rendering of a live session: model text, tool cards and approval prompts."""

from __future__ import annotations

import asyncio
import re
import sys
from typing import TYPE_CHECKING, Any

from rich.markup import escape

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
        payload = event.payload
        match event.type:
            case "session.created":
                self.console.print(
                    f"[bold]session[/bold] {event.session_id}  model={payload['model']}  "
                    f"approval={payload['approval_policy']}  repo={payload['root']}"
                )
            case "session.resumed":
                self.console.print(f"[bold]session[/bold] {event.session_id} continued  model={payload['model']}")
            case "model.delta":
                self._streaming = True
                self.console.print(visible(payload["text"]), end="", markup=False, highlight=False)
            case "model.completed":
                self._end_stream()
            case "tool.started":
                args = ", ".join(f"{k}={_short(v)}" for k, v in payload["arguments"].items())
                self.console.print(
                    f"[cyan]▶ {escape(visible(payload['tool']))}[/cyan]({escape(args)})", highlight=False
                )
            case "tool.ended":
                self._tool_ended(payload)
            case "model.retrying":
                self.console.print(f"[yellow]retrying in {payload['delay_s']:.1f}s: {payload['error']}[/yellow]")
            case "model.failed":
                self._end_stream()
                self.console.print(f"[red]model failed: {payload['error']}[/red]", highlight=False)
            case "run.contract":
                self.console.print(
                    f"[bold]surface[/bold] {payload['surface']} ({payload['source']}: {payload['reason']})"
                )
            case "workflow.phase":
                self.console.print(f"[bold magenta]── {payload['phase']}[/bold magenta]")
            case "worker.started":
                self.console.print(f"[bold]{payload['role']}[/bold] ← {_short(payload.get('task', ''), 100)}")
            case "verification.unavailable":
                self.console.print(f"[yellow]verification unavailable: {payload['note']}[/yellow]")
            case "approval.decided" if payload["source"] != "answerer":
                self.console.print(f"  [dim]{payload['decision']} by {payload['source']}: {payload['reason']}[/dim]")
            case _:
                self._notice(event)

    def _tool_ended(self, payload: dict[str, Any]) -> None:
        status = payload["status"]
        data = payload.get("data") or {}
        if status == "ok" and data.get("outcome") == "failed":
            status = "failed"  # a check that ran and failed: the tool worked, the check did not pass
        style = _STATUS_STYLE.get(status, "white")
        first = payload["output"].splitlines()[0] if payload["output"] else ""
        first = first.removeprefix("error:").removeprefix(payload["status"]).strip()
        self.console.print(f"  [{style}]{status}[/{style}] {escape(_short(first, 100))}", highlight=False)
        if payload["tool"] == "preview" and data.get("running") and isinstance(data.get("url"), str):
            self.console.print(
                f"  [bold]preview[/bold] {escape(data['url'])}", highlight=False
            )  # a server left running

    def _notice(self, event: Event) -> None:
        """Events shown only in some cases: a skill the request named but that was refused, and a
        compaction (the oldest turns now read as a summary)."""
        if event.type == "skill.resolved" and event.payload.get("refused"):
            self.console.print(f"[yellow]skill not activated: {escape(event.payload['reason'])}[/yellow]")
        elif event.type == "context.compacted":
            from protoagent.context.compaction import describe_compaction

            line = describe_compaction(event.payload)
            self.console.print(f"[dim]{escape(visible(line))}[/dim]", highlight=False)

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
