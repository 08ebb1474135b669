"""The chat's line editor: on a terminal, prompt_toolkit with history per repository (0600 in the
data home), multi-line input and completion (Tab) of ``/`` commands and ``$skill`` names; from a
pipe or on a dumb terminal (one that does its own line editing, like Emacs' shell), plain
``input()``, so piped input keeps working."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from protoagent.private_files import create_private, private_dir

if TYPE_CHECKING:
    from prompt_toolkit.document import Document

HISTORY_DIR = "chat-history"


def history_file(home: Path, repo: Path) -> Path:
    """The chat history of ``repo``: one private file per repository under the data home."""
    folder = private_dir(home / HISTORY_DIR)
    path = folder / hashlib.sha256(str(repo.resolve()).encode()).hexdigest()[:24]
    create_private(path)
    return path


def completions(text: str, commands: Sequence[str], skills: Callable[[], Sequence[str]]) -> list[tuple[str, int]]:
    """What completes the text before the cursor: ``(replacement, start offset)`` pairs. A first
    word starting with ``/`` completes to a command or ``/skill:NAME``; a word starting with
    ``$`` completes to a skill name."""
    word = text.split(" ")[-1] if text else ""
    if word.startswith("/") and text.lstrip() == word:
        options = [*commands, *(f"/skill:{name}" for name in skills())]
    elif word.startswith("$"):
        options = [f"${name}" for name in skills()]
    else:
        return []
    return [(option, -len(word)) for option in options if option.startswith(word) and option != word]


class LineEditor:
    """Reads one message at a time; the history and the skills follow the chat's repository."""

    def __init__(self, home: Path, commands: Sequence[str], skills: Callable[[Path], Sequence[str]]) -> None:
        self.home = home
        self.commands = tuple(commands)
        self.skills = skills
        self.interactive = sys.stdin.isatty() and sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
        self._sessions: dict[Path, PromptSession[str]] = {}

    def read(self, prompt: str, repo: Path) -> str:
        """One message (``EOFError`` on Ctrl-D, ``KeyboardInterrupt`` on Ctrl-C)."""
        if not self.interactive:
            return input(prompt)
        return self._session(repo).prompt(prompt)

    def _session(self, repo: Path) -> PromptSession[str]:
        session = self._sessions.get(repo)
        if session is None:
            session = self._sessions[repo] = self._new_session(repo)
        return session

    def _new_session(self, repo: Path) -> PromptSession[str]:
        known: list[str] | None = None

        def skill_names() -> Sequence[str]:
            nonlocal known
            if known is None:
                known = list(self.skills(repo))
            return known

        return PromptSession(
            history=FileHistory(str(history_file(self.home, repo))),
            completer=ChatCompleter(self.commands, skill_names),
            complete_while_typing=False,
            key_bindings=_multiline_keys(),
            prompt_continuation=lambda width, line, wrap: "." * (width - 1) + " ",
        )


class ChatCompleter(Completer):
    """prompt_toolkit's side of ``completions``."""

    def __init__(self, commands: Sequence[str], skills: Callable[[], Sequence[str]]) -> None:
        self.commands = commands
        self.skills = skills

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        for text, start in completions(document.text_before_cursor, self.commands, self.skills):
            yield Completion(text, start_position=start)


def _multiline_keys() -> KeyBindings:
    """Enter sends; Alt-Enter (Esc then Enter), or Enter after a trailing ``\\``, starts a new line."""
    keys = KeyBindings()

    @keys.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @keys.add("enter")
    def _send_or_continue(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.document.text_before_cursor.endswith("\\"):
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    return keys
