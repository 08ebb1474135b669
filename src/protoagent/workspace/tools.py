"""The workspace tools: read, exact edit, create, replace, list and search files beneath the root."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from protoagent.errors import ToolRejected
from protoagent.tools.base import InputT, Prepared, Tool, ToolContext, ToolMetadata, ToolOutput
from protoagent.workspace.edits import diff_stat, replace_each_exactly_once, whole_file_diff
from protoagent.workspace.files import (
    MAX_FILE_BYTES,
    check_writable,
    read_bytes,
    refuse_protected,
    revision_of,
    write_atomic,
)
from protoagent.workspace.images import write_images
from protoagent.workspace.inputs import (
    CreateFileInput,
    EditFileInput,
    ListDirectoryInput,
    ReadFileInput,
    ReplaceFileInput,
    SearchRegexInput,
)
from protoagent.workspace.listing import list_entries
from protoagent.workspace.paths import Located, feedback_for_os_error, locate, open_root
from protoagent.workspace.search import compile_pattern, search_files
from protoagent.workspace.text import (
    decode_source,
    read_char_cap,
    render_span,
    revision_matches,
    stale_revision,
    uses_crlf,
)

RAW_TEXT_ROLES = frozenset({"coder"})
"""Roles that read raw text on the small profile so copied old text matches exactly; every other
role, and every role on the standard profile, sees numbered lines (edit_file takes old text
copied with its line numbers)."""


def _locate(ctx: ToolContext, path: str) -> Located:
    """Place a path under the primary root or, in a multi-repository session, another root."""
    return locate(ctx.root, path, ctx.services.extra_roots)


@contextmanager
def _workspace(ctx: ToolContext, path: str) -> Iterator[tuple[int, str]]:
    """Open the root that holds ``path`` (as the tools report it); yield its descriptor and the
    path relative to it. Filesystem errors become feedback the model can correct."""
    where = _locate(ctx, path)
    try:
        with open_root(where.root) as root_fd:
            yield root_fd, where.rel
    except OSError as err:
        raise feedback_for_os_error(err, path) from None


@dataclass(frozen=True, slots=True)
class _WritePlan:
    path: str
    data: bytes
    revision_before: str | None
    """None for a new file."""
    summary: str
    diff: str = ""
    before: str | None = None
    """The text the write replaces (None for a new file): recorded as the write's preimage."""


class _WriteTool(Tool[InputT, _WritePlan]):
    """A tool that writes one file: shown as a diff, approved as a write, written atomically."""

    metadata = ToolMetadata(effect="write", presentation="diff")

    async def execute(self, prepared: Prepared[_WritePlan], ctx: ToolContext) -> ToolOutput:
        return await _execute_write(prepared.state, ctx)


async def _execute_write(plan: _WritePlan, ctx: ToolContext) -> ToolOutput:
    def write() -> str:
        with _workspace(ctx, plan.path) as (root_fd, rel):
            return write_atomic(
                root_fd,
                rel,
                plan.data,
                create=plan.revision_before is None,
                expected_revision=plan.revision_before,
            )

    revision = await asyncio.to_thread(write)
    data: dict[str, Any] = {"path": plan.path, "revision_before": plan.revision_before}
    data["source_revision"] = revision
    data["lines_added"], data["lines_removed"] = diff_stat(plan.diff)
    data.update(write_images(plan.before, plan.data))
    return ToolOutput(f"{plan.summary}; source_revision: {revision}", data=data)


def _rewritable(ctx: ToolContext, path: str) -> str:
    """The shown path of an existing file a tool is about to rewrite; a protected file is refused."""
    where = _locate(ctx, path)
    refuse_protected(where.rel)
    return where.shown


def _read_current(ctx: ToolContext, path: str, expected_revision: str) -> tuple[str, str]:
    """Read a file that is about to be rewritten; check the model's revision. Returns text, revision."""
    with _workspace(ctx, path) as (root_fd, rel):
        check_writable(root_fd, rel, create=False)
        data = read_bytes(root_fd, rel)
    revision = revision_of(data)
    if not revision_matches(expected_revision, revision):
        raise stale_revision(path, expected_revision, revision)
    return decode_source(data, path), revision


@dataclass(frozen=True, slots=True)
class _ReadPlan:
    path: str
    start_line: int
    end_line: int | None


class ReadFileTool(Tool[ReadFileInput, _ReadPlan]):
    name = "read_file"
    description = "Read a file's lines and its revision."
    metadata = ToolMetadata(effect="read", observation="revision_aware")

    def prepare(self, args: ReadFileInput, ctx: ToolContext) -> Prepared[_ReadPlan]:
        path = _locate(ctx, args.path).shown
        plan = _ReadPlan(path, args.start_line, args.end_line)
        return Prepared(f"read {path} from line {args.start_line}", "read", state=plan)

    async def execute(self, prepared: Prepared[_ReadPlan], ctx: ToolContext) -> ToolOutput:
        plan = prepared.state
        return await asyncio.to_thread(self._read, plan, ctx)

    def _read(self, plan: _ReadPlan, ctx: ToolContext) -> ToolOutput:
        with _workspace(ctx, plan.path) as (root_fd, rel):
            data = read_bytes(root_fd, rel)
        text = decode_source(data, plan.path)
        numbered = ctx.agent_role not in RAW_TEXT_ROLES or ctx.profile != "small"
        cap = read_char_cap(ctx.profile, ctx.services.context_window)
        span = render_span(text, plan.start_line, plan.end_line, numbered=numbered, cap=cap)
        revision = revision_of(data)
        header = f"{plan.path} lines {span.start_line}-{span.end_line} of {span.total_lines}; revision {revision}"
        footer = f"[more: next_start_line={span.next_start_line}]\n" if span.next_start_line else ""
        result = {
            "path": plan.path,
            "revision": revision,
            "content": span.content,
            "start_line": span.start_line,
            "end_line": span.end_line,
            "total_lines": span.total_lines,
            "next_start_line": span.next_start_line,
            "truncated": span.truncated,
            "truncated_long_line": span.truncated_long_line,
            "line_endings": "crlf" if uses_crlf(text) else "lf",
        }
        return ToolOutput(f"{header}\n{span.content}{footer}", data=result)


class EditFileTool(_WriteTool[EditFileInput]):
    name = "edit_file"
    description = (
        "Replace old (exact, found once) with new; empty old appends new at the end. Several spans of one "
        "revision: edits=[{old,new},...], all or none."
    )

    def prepare(self, args: EditFileInput, ctx: ToolContext) -> Prepared[_WritePlan]:
        path = _rewritable(ctx, args.path)
        pairs = _edit_pairs(args)
        text, revision = _read_current(ctx, path, args.expected_revision)
        edit = replace_each_exactly_once(text, pairs, path)
        summary = f"edited {path} lines {edit.lines_label()}"
        plan = _WritePlan(path, edit.text.encode("utf-8"), revision, summary, edit.diff, before=text)
        return Prepared(preview=edit.diff, effect="write", paths=(path,), state=plan)


def _edit_pairs(args: EditFileInput) -> list[tuple[str, str]]:
    """The ``(old, new)`` pairs of one call: ``old``/``new`` or ``edits``, never both; each pair
    must change something."""
    if args.edits is not None and (args.old is not None or args.new is not None):
        raise ToolRejected("give either old/new or edits, not both", kind="invalid_arguments")
    if args.edits is None:
        if args.old is None or args.new is None:
            raise ToolRejected("give old and new, or edits=[{old,new},...]", kind="invalid_arguments")
        pairs = [(args.old, args.new)]
    elif not args.edits:
        raise ToolRejected("edits is empty; give at least one {old,new} pair", kind="invalid_arguments")
    else:
        pairs = [(pair.old, pair.new) for pair in args.edits]
    for index, (old, new) in enumerate(pairs):
        which = f"edits[{index}]: " if args.edits is not None and len(pairs) > 1 else ""
        if old == new:
            raise ToolRejected(f"{which}old and new are identical; nothing would change", kind="no_change")
    return pairs


class CreateFileTool(_WriteTool[CreateFileInput]):
    name = "create_file"
    description = "Create a new file (and its folders); fails if it exists."

    def prepare(self, args: CreateFileInput, ctx: ToolContext) -> Prepared[_WritePlan]:
        path = _locate(ctx, args.path).shown
        data = _bounded(args.content, path)
        with _workspace(ctx, path) as (root_fd, rel):
            check_writable(root_fd, rel, create=True)
        diff = whole_file_diff(path, None, args.content)
        plan = _WritePlan(path, data, None, f"created {path}", diff)
        return Prepared(diff, "write", paths=(path,), state=plan)


def _bounded(content: str, path: str) -> bytes:
    data = content.encode("utf-8")
    if len(data) > MAX_FILE_BYTES:
        raise ToolRejected(f"content for {path!r} is over {MAX_FILE_BYTES} bytes", kind="file_too_large")
    return data


class ReplaceFileTool(_WriteTool[ReplaceFileInput]):
    name = "replace_file"
    description = "Replace a whole existing file; prefer edit_file."

    def prepare(self, args: ReplaceFileInput, ctx: ToolContext) -> Prepared[_WritePlan]:
        path = _rewritable(ctx, args.path)
        text, revision = _read_current(ctx, path, args.expected_revision)
        content = args.content
        if uses_crlf(text) and "\r\n" not in content:
            content = content.replace("\n", "\r\n")  # Keep the file's line endings.
        if content == text:
            raise ToolRejected(f"content is identical to {path!r}; nothing would change", kind="no_change")
        diff = whole_file_diff(path, text, content)
        plan = _WritePlan(path, _bounded(content, path), revision, f"replaced {path}", diff, before=text)
        return Prepared(diff, "write", paths=(path,), state=plan)


class ListDirectoryTool(Tool[ListDirectoryInput, str]):
    name = "list_directory"
    description = "List a directory."
    metadata = ToolMetadata(effect="read")

    def prepare(self, args: ListDirectoryInput, ctx: ToolContext) -> Prepared[str]:
        path = _locate(ctx, args.path).shown
        return Prepared(f"list {path}", "read", state=path)

    async def execute(self, prepared: Prepared[str], ctx: ToolContext) -> ToolOutput:
        path = prepared.state

        def listing() -> ToolOutput:
            with _workspace(ctx, path) as (root_fd, rel):
                found = list_entries(root_fd, rel)
            more = f"\n[{found.total - len(found.entries)} more entries not shown]" if found.truncated else ""
            data = {"path": path, "entries": list(found.entries), "total": found.total}
            data["truncated"] = found.truncated
            return ToolOutput("\n".join(found.entries) + more, data=data)

        return await asyncio.to_thread(listing)


class SearchRegexTool(Tool[SearchRegexInput, SearchRegexInput]):
    name = "search_regex"
    description = "Python regex per line; skips git-ignored files."
    metadata = ToolMetadata(effect="read")

    def prepare(self, args: SearchRegexInput, ctx: ToolContext) -> Prepared[SearchRegexInput]:
        compile_pattern(args.pattern)
        path = _locate(ctx, args.path).shown
        return Prepared(f"search {path} for {args.pattern!r}", "read", state=args.model_copy(update={"path": path}))

    async def execute(self, prepared: Prepared[SearchRegexInput], ctx: ToolContext) -> ToolOutput:
        args = prepared.state

        cancel = threading.Event()

        def search() -> ToolOutput:
            where = _locate(ctx, args.path)
            with _workspace(ctx, args.path) as (root_fd, rel):
                pattern = compile_pattern(args.pattern)
                found = search_files(root_fd, pattern, rel, args.file_filter, cancel=cancel)
            # Matches under another root of a multi-repository session carry that root's path.
            prefix = "" if where.root == ctx.root else f"{where.root}/"
            found = replace(found, matches=tuple(replace(m, path=prefix + m.path) for m in found.matches))
            lines = [f"{m.path}:{m.line}: {m.text}" for m in found.matches]
            if found.truncated:
                lines.append("[results cut short; narrow the pattern, path or file_filter]")
            matches = [{"path": m.path, "line": m.line, "text": m.text} for m in found.matches]
            data = {"matches": matches, "files_searched": found.files_searched, "truncated": found.truncated}
            return ToolOutput("\n".join(lines) or "no matches", data=data)

        try:
            return await asyncio.to_thread(search)
        finally:
            # Ctrl-C cancels this task; the worker thread stops at its next match attempt.
            cancel.set()


WORKSPACE_TOOLS: tuple[type[Tool[Any]], ...] = (
    ReadFileTool,
    EditFileTool,
    CreateFileTool,
    ReplaceFileTool,
    ListDirectoryTool,
    SearchRegexTool,
)
