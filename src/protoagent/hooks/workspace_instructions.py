"""``WorkspaceInstructionsHook``: the one owner of Coding workspace context.

It lists every repository root of the session and puts each applicable ``AGENTS.md`` chain
into the system text exactly once: the root's file, and the nested files on the path of every
file the task has touched. The text lives in the system prompt, not in the conversation, so
it is neither repeated per step nor lost or duplicated by compaction. Each file is read once
per session (a symlinked ``AGENTS.md`` is followed inside its repository, and one real file is
injected once; a link leading out of the repository, or a FIFO, is refused and never read).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from protoagent.events.catalog import ToolStarted
from protoagent.events.queries import facts
from protoagent.events.types import Event
from protoagent.hooks.order import HookOwner
from protoagent.hooks.pipeline import HookRegistration
from protoagent.models.types import ModelRequest
from protoagent.workspace.confined import RefusedRead, read_confined

INSTRUCTIONS_FILE = "AGENTS.md"
WORKSPACE_INSTRUCTIONS_OWNER: HookOwner = "workspace-instructions"
MULTI_ROOT_HEADER = (
    "Workspace repositories (a relative path is under the first; name a file in another by its "
    "absolute path; commands and checks run in the first):"
)
MAX_FILE_BYTES = 16_000
"""One instruction file's share of the prompt; a longer file is cut with a marker."""


class WorkspaceInstructionsHook:
    """Adds the repositories and their AGENTS.md chains to every request's system text."""

    def __init__(self, roots: Sequence[Path]) -> None:
        self.roots = tuple(dict.fromkeys(Path(r).resolve() for r in roots))
        self._texts: dict[Path, str | None] = {}
        """Real path of an instruction file → its text, read once per session."""
        self._seen_events = 0
        self._touched: dict[str, None] = {}
        self._folders: dict[Path, None] = {}
        """Folders (root first) whose AGENTS.md applies, in first-touched order."""
        self._block: tuple[int, str] | None = None
        self.refused: dict[str, str] = {}
        """Instruction files refused (a link leading out of the repository, not a regular file) → why."""

    def _text(self, path: Path) -> str | None:
        real = path.resolve()
        if real not in self._texts:
            root = self._owner(path.absolute()) or path.parent
            try:
                # Confined like read_file: a link leading out of the repository, or a FIFO, is not read.
                data: bytes | None = read_confined(root, path.absolute(), limit=MAX_FILE_BYTES, cut=True)
            except RefusedRead as refused:
                data = None
                self.refused[str(path)] = refused.reason
            except OSError:
                data = None
            text = None if data is None else data[:MAX_FILE_BYTES].decode("utf-8", errors="replace").strip()
            if data is not None and len(data) > MAX_FILE_BYTES:
                text = f"{text}\n[... {path.name} cut at {MAX_FILE_BYTES} bytes]"
            self._texts[real] = text or None
        return self._texts[real]

    def _owner(self, path: Path) -> Path | None:
        """The deepest root holding ``path`` (a repository nested in another owns its files)."""
        holders = [root for root in self.roots if path == root or root in path.parents]
        return max(holders, key=lambda root: len(root.parts)) if holders else None

    def _add_touched(self, rel: str) -> None:
        if rel in self._touched:
            return
        self._touched[rel] = None
        target = (self.roots[0] / rel) if not Path(rel).is_absolute() else Path(rel)
        target = target.resolve()
        root = self._owner(target)
        if root is not None:
            for folder in reversed(target.parents):
                if root in folder.parents:
                    self._folders.setdefault(folder)

    def chain_files(self, touched: Sequence[str]) -> list[Path]:
        """Each root's AGENTS.md, then nested ones between a root and each touched file."""
        for rel in touched:
            self._add_touched(rel)
        return [*(root / INSTRUCTIONS_FILE for root in self.roots), *(f / INSTRUCTIONS_FILE for f in self._folders)]

    def render(self, touched: Sequence[str]) -> str:
        """The block for the files touched so far; rebuilt only when a new folder applies."""
        files = self.chain_files(touched)
        if self._block is not None and self._block[0] == len(files):
            return self._block[1]
        block = self._render(files)
        self._block = (len(files), block)
        return block

    def _render(self, files: Sequence[Path]) -> str:
        lines = ["Workspace repositories:" if len(self.roots) == 1 else MULTI_ROOT_HEADER]
        lines += [f"- {root}" for root in self.roots]
        seen: set[Path] = set()
        for path in files:
            text = self._text(path)
            real = path.resolve()
            if real in seen or (text is None and str(path) not in self.refused):
                continue
            seen.add(real)
            root = self._owner(path.absolute()) or path.parent
            where = path.absolute().relative_to(root) if root in path.absolute().parents else path
            label = str(where) if len(self.roots) == 1 else f"{root.name}/{where}"
            if text is None:
                lines += ["", f"{label} was not read: it {self.refused[str(path)]}"]
            else:
                lines += ["", f"Instructions from {label}:", text]
        return "\n".join(lines)

    def __call__(self, request: ModelRequest, events: Sequence[Event]) -> ModelRequest:
        if not self.roots:
            return request
        # The log only grows: read just the events that arrived since the last request.
        fresh = events[self._seen_events :] if len(events) >= self._seen_events else events
        self._seen_events = len(events)
        block = self.render(list(touched_paths(fresh)))
        return replace(request, system=f"{request.system}\n\n{block}" if request.system else block)

    def registration(self) -> HookRegistration:
        return HookRegistration(WORKSPACE_INSTRUCTIONS_OWNER, self)


def touched_paths(events: Sequence[Event]) -> Iterator[str]:
    """Paths named by tool calls so far (reads, edits, listings)."""
    for _, started in facts(events, ToolStarted):
        path = started.arguments.get("path")
        if isinstance(path, str) and path:
            yield path
