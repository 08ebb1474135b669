"""``protoagent chat``: a prompt loop over one session, rendered like ``run``.

The first message starts a session; every later one continues it (``/resume ID`` switches to a
recorded one).

Lines are messages to the agent, except ``!command`` (the person's own command, through the
same pipeline), ``/skill:<name> …`` (passed on to the run, which activates the skill),
``/agents [NAME on|off]``, ``/resume ID``, ``/compact [FOCUS]`` (summarize the conversation so
far), ``/help`` and ``/exit``. Ctrl-C stops the current
run (its processes too) and returns to the prompt; Ctrl-D leaves. On a terminal the line editor
keeps a history per repository, takes several lines (Alt-Enter) and completes ``/`` commands
and ``$skill`` names (``line_editor``).
"""

from __future__ import annotations

import asyncio
import signal
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from protoagent.agents.profiles import LEADS
from protoagent.errors import ConfigError, SessionLoadError
from protoagent.events.catalog import SessionCreated, UserMessage
from protoagent.events.queries import session_head
from protoagent.interfaces.cli.render import TerminalRenderer, answer_from_reply, render_report, visible
from protoagent.tools.approvals import Answerer, ApprovalAnswer, ApprovalRequest, Policy

if TYPE_CHECKING:
    from rich.console import Console

    from protoagent.events.store import SessionStore
    from protoagent.events.types import Event
    from protoagent.workflow.run import RunOptions, RunReport

PROMPT = "you› "
HELP = (
    "type a message for the agent, or: !command (run it yourself), /skill:NAME message, "
    "/mcp:SERVER:PROMPT [args], /agents [NAME on|off], /resume SESSION_ID, /compact [FOCUS], "
    "/rewind [N|verified] [code|conversation|both], /help, /exit. "
    "Ctrl-C stops a run, Ctrl-D leaves; on a terminal Alt-Enter adds a line, Tab completes, Up recalls."
)
COMMANDS = ("/help", "/exit", "/agents", "/resume", "/compact", "/rewind", "/mcp:")
"""What the line editor completes after ``/`` (with ``/skill:NAME`` for each skill)."""
APPROVAL_QUESTION = "allow? y = once, s = for this session, n or a reason = deny [y/s/N] "


@dataclass(slots=True)
class Chat:
    """The state of one chat: where it works, how, and the session it continues."""

    console: Console
    store: SessionStore
    repo: Path
    model: str
    approval: Policy
    home: Path
    session_id: str | None = None

    def handle(self, line: str) -> bool:
        """Act on one typed line; ``False`` means leave."""
        text = line.strip()
        if not text:
            return True
        if text in ("/exit", "/quit"):
            return False
        if text == "/help":
            self.console.print(HELP, markup=False, highlight=False)
        elif text == "/agents" or text.startswith("/agents "):
            self._agents(text.split()[1:])
        elif text == "/resume" or text.startswith("/resume "):
            self._resume(text.split()[1:])
        elif text == "/compact" or text.startswith("/compact "):
            self._compact(text.removeprefix("/compact").strip())
        elif text == "/rewind" or text.startswith("/rewind "):
            self._rewind(text.split()[1:])
        elif text.startswith("/mcp:") and not self._mcp_on():
            self._error("MCP is off: turn it on with 'protoagent agents enable coding/mcp'")
        elif text.startswith("/") and not text.startswith(("/skill:", "/mcp:")):
            self._error(f"unknown command {text.split()[0]!r}; {HELP}")
        else:
            self._run(text)
        return True

    def _rewind(self, words: list[str]) -> None:
        from protoagent.interfaces.cli.checkpoint_cmds import rewind_words

        if self.session_id is None:
            self._error("nothing to rewind yet: send a message first, or /resume a session")
            return
        try:
            self.console.print(rewind_words(self.store, self.session_id, words), markup=False, highlight=False)
        except ConfigError as exc:
            self._error(str(exc))

    def _mcp_on(self) -> bool:
        from protoagent.settings import agent_enabled

        return agent_enabled(self.home, "mcp")

    def _run(self, text: str) -> None:
        from protoagent.interfaces.cli.signals import Interrupted, run_until_signalled
        from protoagent.workflow.run import run_task

        if text.startswith("/skill:"):
            problem = self._skill_problem(text.removeprefix("/skill:").split(maxsplit=1))
            if problem:
                self._error(problem)
                return
        own_command = text.startswith("!")
        try:
            report = run_until_signalled(run_task(text, self._options(own_command)))
        except Interrupted as stop:
            self.console.print("[yellow]stopped: the run and every command it started were stopped[/yellow]")
            if stop.signum != signal.SIGINT:
                raise  # SIGTERM or SIGHUP: the chat itself is asked to end
            return
        except ConfigError as exc:
            self._error(str(exc))
            return
        self._report(report)

    def _options(self, own_command: bool) -> RunOptions:
        """The run's options: the chat's session is continued (a ``!command`` is recorded as a
        session of its own and leaves the chat's session as it is). The person's own ``!command``
        is theirs: it runs without a question (still sandboxed, still recorded), unless the
        policy denies every effect."""
        from protoagent.workflow.run_options import run_options

        renderer = TerminalRenderer(self.console)

        def on_event(event: Event) -> None:
            if event.fact(SessionCreated) is not None and not own_command:
                self.session_id = event.session_id  # known from the start, so a stopped run is continued too
            renderer(event)

        return replace(
            run_options(self.repo, self.model, self.store, self.home),
            approval=self.approval,
            answerer=typed_by_you() if own_command else line_answerer(self.console),  # asked only when the policy asks
            on_event=on_event,
            resume=None if own_command else self.session_id,
        )

    def _report(self, report: RunReport) -> None:
        if report.surface in ("editing", "verification") or report.evidence.changed_files:
            render_report(self.console, report)
        elif report.surface == "command":
            self.console.print(report.summary, markup=False, highlight=False)
        self.console.print(f"[dim]── {report.status} · session {report.session_id}[/dim]")

    def _skill_problem(self, words: list[str]) -> str:
        """Why ``/skill:NAME …`` cannot be passed on, or ``""``: the run activates the skill."""
        from protoagent.skills.activation import manual_off_message
        from protoagent.skills.discovery import load_skills

        if not words:
            return "name the skill, e.g. /skill:review check the diff"
        bundles = {b.name: b for b in load_skills([self.repo], self.home).management()}
        name = words[0].lower().replace("_", "-")
        if name not in bundles:
            known = ", ".join(sorted(bundles)) if bundles else "none were found"
            return f"unknown skill {words[0]!r}; available skills: {known}"
        return "" if bundles[name].preferences.manual else manual_off_message(name)

    def _agents(self, words: list[str]) -> None:
        """List the agents this repository sees (built-in, user, project), or turn one on or off."""
        from protoagent.api import list_agents, set_agent_enabled

        try:
            if words:
                if len(words) != 2 or words[1] not in ("on", "off"):
                    self._error("say /agents, or /agents NAME on|off, e.g. /agents tester off")
                    return
                agent_id = set_agent_enabled(self.home, words[0], words[1] == "on", self.repo)
                self.console.print(f"{agent_id}: {words[1]}", highlight=False)
                return
            rows = list_agents(None, self.repo, self.home)
        except ConfigError as exc:
            self._error(str(exc))
            return
        for row in rows:
            lead = f" (lead: {row['lead']})" if row["lead"] else ""
            state = "" if row["enabled"] else " [off]"
            line = f"{row['id']:<22} {row['role']:<6} {row['source']:<7} {row['description']}{lead}{state}"
            self.console.print(line, markup=False, highlight=False)

    def _compact(self, focus: str) -> None:
        """Summarize the session's conversation so far (``compact_session``); the next message follows it."""
        from protoagent.context.session_compaction import compact_session
        from protoagent.interfaces.cli.signals import Interrupted, run_until_signalled

        if self.session_id is None:
            self._error("nothing to compact yet: send a message first")
            return
        try:
            result = run_until_signalled(compact_session(self.session_id, self.store, focus=focus, model=self.model))
        except Interrupted as stop:
            self.console.print("[yellow]stopped: nothing was compacted[/yellow]")
            if stop.signum != signal.SIGINT:
                raise
            return
        except (ConfigError, SessionLoadError) as exc:
            self._error(str(exc))
            return
        if not result.compacted:
            self.console.print(result.reason, markup=False, highlight=False)
            return
        first, last = (result.turns[0], result.turns[-1]) if result.turns else (0, 0)
        turns = f"turns {first}-{last}" if first != last else f"turn {first}" if first else "the conversation"
        tokens = f"{result.replaced_tokens} → {result.summary_tokens} tokens"
        self.console.print(
            f"compacted {turns} into a {result.method} summary ({tokens})",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )

    def _resume(self, words: list[str]) -> None:
        if len(words) != 1:
            self._error("say which session: /resume SESSION_ID (see 'protoagent sessions list')")
            return
        try:
            events = self.store.load(words[0])
        except SessionLoadError as exc:
            self._error(str(exc))
            return
        renderer = TerminalRenderer(self.console)
        for event in events:
            if (said := event.fact(UserMessage)) is not None and event.agent in LEADS:
                self.console.print(f"{PROMPT}{said.text}", markup=False, highlight=False)
            renderer(event)
        self.repo = Path(session_head(events).root)
        self.session_id = words[0]
        self.console.print(f"[dim]── resumed session {words[0]} in {self.repo}; your next message continues it[/dim]")

    def _error(self, message: str) -> None:
        self.console.print(f"[red]error:[/red] {message}", highlight=False)


def skill_names(repo: Path, home: Path) -> list[str]:
    """The skills a person may name in ``repo`` (``$name`` or ``/skill:NAME``)."""
    from protoagent.skills.discovery import load_skills

    return sorted(b.name for b in load_skills([repo], home).management() if b.valid and b.preferences.manual)


def typed_by_you() -> Answerer:
    """The answer for the person's own ``!command``: they typed it, so it is allowed once."""

    async def allow(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer.once("you typed this command in the chat")

    return allow


def line_answerer(console: Console) -> Answerer:
    """Ask on the terminal, showing the diff or the command; Ctrl-C while asking stops the run."""

    async def ask(request: ApprovalRequest) -> ApprovalAnswer:
        console.rule(f"approve {request.effect} by {request.tool}?")
        console.print(visible(request.preview), markup=False, highlight=False)
        reply = await read_line(APPROVAL_QUESTION)
        return answer_from_reply(reply)

    return ask


async def read_line(prompt: str) -> str:
    """One line from stdin without a blocking thread, so a cancelled run leaves no reader behind."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[str] = loop.create_future()
    fd = sys.stdin.fileno()

    def readable() -> None:
        if not done.done():
            done.set_result(sys.stdin.readline())

    sys.stdout.write(prompt)
    sys.stdout.flush()
    loop.add_reader(fd, readable)
    try:
        return await done
    finally:
        loop.remove_reader(fd)


def chat_command(repo: Path, model: str, approval: Policy) -> int:
    """The prompt loop. Exit status 0 when the person leaves (Ctrl-D or /exit)."""
    from rich.console import Console

    from protoagent.api import data_home, open_store
    from protoagent.interfaces.cli.line_editor import LineEditor
    from protoagent.interfaces.cli.signals import Interrupted

    if not Path(repo).expanduser().is_dir():
        print(
            f"error: repository {str(repo)!r} is not a directory; pass an existing folder with --repo", file=sys.stderr
        )
        return 2
    console = Console()
    with open_store() as store:
        chat = Chat(console, store, Path(repo).expanduser().resolve(), model, approval, data_home())
        console.print(f"[bold]protoagent chat[/bold] in {chat.repo} · model {model} · /help for commands")
        editor = LineEditor(chat.home, COMMANDS, lambda repo: skill_names(repo, chat.home))
        while True:
            try:
                line = editor.read(PROMPT, chat.repo)
            except EOFError:
                console.print()
                return 0
            except KeyboardInterrupt:
                console.print()
                continue
            try:
                if not chat.handle(line):
                    return 0
            except Interrupted as stop:
                return stop.exit_code
