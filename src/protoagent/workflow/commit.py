"""``protoagent commit``: commit exactly a session's files, with a message from its evidence.

The files are the session's net changes from its log (``workflow.changes``); each must still hold
the session's last image of it, so a file someone else changed since is never committed as the
session's work. The message names the objective, what changed, and which checks verified it: a
check receipt that passed in the verify phase after the session's last write. The commit is an
effect like any other: it is previewed and goes through the approval service (a person, or a
policy that allows it), and the request, the decision and the commit are recorded in the log.
Git runs hardened (``workflow.git_ops``): hooks and configured programs never run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from protoagent.errors import ConfigError
from protoagent.events.catalog import SessionCreated
from protoagent.events.log import SessionLog
from protoagent.events.queries import tool_results
from protoagent.events.session_lease import claim_session
from protoagent.events.store import SessionStore
from protoagent.events.types import Event
from protoagent.tools.approvals import ApprovalRequest, ApprovalService
from protoagent.workflow.changes import FileChange, file_writes, session_changes, user_turns
from protoagent.workflow.checkpoints import current_revision
from protoagent.workflow.git_ops import commit_paths, toplevel

SUBJECT_CHARS = 72
Checks = tuple[str, ...]
COMMITTED_EVENT = "session.committed"


@dataclass(frozen=True, slots=True)
class CommitPlan:
    root: Path
    paths: tuple[str, ...]
    message: str
    verified_by: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CommitResult:
    commit: str
    plan: CommitPlan


def verifying_checks(events: Sequence[Event]) -> tuple[str, ...]:
    """Checks that passed in the verify phase after the session's last write, in order."""
    writes = file_writes(events)
    after = writes[-1].seq if writes else 0
    found: list[str] = []
    for _, ended in tool_results(events, ("run_check",), after=after):
        data = ended.data
        if data.get("phase") == "verify" and data.get("outcome") == "passed":
            tests = data.get("tests_run")
            label = f"{data.get('check_id')}" + (f" ({tests} tests passed)" if tests else " (passed)")
            if label not in found:
                found.append(label)
    return tuple(found)


def commit_message(
    events: Sequence[Event], changes: Sequence[FileChange], session_id: str
) -> tuple[str, tuple[str, ...]]:
    """The commit message from the evidence: objective, what changed, which checks verified it."""
    objectives = [t.objective for t in user_turns(events) if t.objective]
    subject = (objectives[0] if objectives else "Changes made by a ProtoAgent session").splitlines()[0]
    if len(subject) > SUBJECT_CHARS:
        subject = subject[: SUBJECT_CHARS - 1] + "…"
    lines = [subject, ""]
    if len(objectives) > 1:
        lines += ["Requests:", *[f"- {o.splitlines()[0]}" for o in objectives], ""]
    lines.append("What changed:")
    lines += [f"- {c.path} ({_kind(c)})" for c in changes]
    checks = verifying_checks(events)
    lines.append("")
    lines.append(
        "Verified by: " + ", ".join(checks) if checks else "Not verified: no check passed after the last change."
    )
    lines += ["", f"ProtoAgent-Session: {session_id}"]
    return "\n".join(lines) + "\n", checks


def _kind(change: FileChange) -> str:
    if change.created:
        return "new"
    if change.deleted:
        return "deleted"
    return "modified"


def plan_commit(events: Sequence[Event], session_id: str) -> CommitPlan:
    """What ``commit`` would do; ``ConfigError`` when a file changed outside the session or the
    workspace is not a git work tree."""
    created = events[0].fact(SessionCreated)
    root = Path(created.root if created is not None else "")
    if not root.is_dir():
        raise ConfigError(f"session {session_id}'s workspace {str(root)!r} is gone; nothing to commit")
    top = toplevel(root)
    changes = [c for c in session_changes(events) if not Path(c.path).is_absolute()]
    if not changes:
        raise ConfigError(f"session {session_id} changed no files; nothing to commit")
    moved = [c.path for c in changes if current_revision(root, c.path) != c.revision_after]
    if moved:
        raise ConfigError(
            f"not committing: {', '.join(moved)} changed outside the session since it wrote them; commit by hand"
        )
    prefix = root.resolve().relative_to(top.resolve())
    paths = tuple(str(prefix / c.path) if str(prefix) != "." else c.path for c in changes)
    message, checks = commit_message(events, changes, session_id)
    return CommitPlan(top, paths, message, checks)


async def commit_session(store: SessionStore, session_id: str, approvals: ApprovalService) -> CommitResult:
    """Commit the session's files once the approval service allows it; record every step."""
    lease = claim_session(store, session_id)
    try:
        log = SessionLog.open(store, session_id)
        plan = plan_commit(log.events, session_id)
        call_id = f"commit_{len(log)}"
        preview = f"git commit --only -- {' '.join(plan.paths)}\n\n{plan.message}"
        request = ApprovalRequest(call_id, "git_commit", "execute", preview, plan.paths)
        log.append("approval.requested", {"call_id": call_id, "tool": "git_commit", "effect": "execute",
                                          "preview": preview, "paths": list(plan.paths)})  # fmt: skip
        decision = await approvals.decide(request)
        log.append("approval.decided", {"call_id": call_id, "tool": "git_commit", "source": decision.source,
                                        "decision": "allow" if decision.allow else "deny",
                                        "reason": decision.reason})  # fmt: skip
        if not decision.allow:
            raise ConfigError(f"commit not approved: {decision.reason}")
        commit = commit_paths(plan.root, plan.paths, plan.message)
        log.append(COMMITTED_EVENT, {"commit": commit, "paths": list(plan.paths), "message": plan.message,
                                     "verified_by": list(plan.verified_by)})  # fmt: skip
        return CommitResult(commit, plan)
    finally:
        lease.release()
