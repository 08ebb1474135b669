"""Passing final verification ends the edit phase without another Architect request.

Spec: "Final verification closes the edit phase for this attempt". Once every selected check
has a passing ``verify`` receipt newer than the run's last file change, and no worker report
is unresolved, the Architect's next request could only be a closing summary, so it is not
sent: a before-model hook yields the Architect's turn (``Verified``) and the Graph ends the
phase. The run's summary is then composed by the harness from the worker reports and the
receipts: deterministic, and never a claim the receipts do not back.

Calls the Architect put after the passing verify in the same turn are not lost: they still run
through the pipeline in order (an edit among them is refused by the phase gate, as before),
their receipts stay in the log, and the summary names them. Only the request that would have
followed them is not sent. A failing verify keeps its own path (the Graph's repair).

Checks cannot see every criterion ("CHANGELOG.md gets a bullet", an AGENTS.md rule). So the run
closes without another request only when every recorded criterion is covered by a passing check.
Otherwise, where the lead has ``review_criteria``, the Graph opens a ``review`` phase and the lead
gets one closing request with the criteria, what covers each, and the run's final diff: it
confirms what the diff meets (``review_criteria``) or sends one repair. The request after that
is not sent either. A lead without the review tool (the small profile) closes as before and the
report says which criteria nothing supports.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from protoagent.agents.profiles import ARCHITECT
from protoagent.errors import YieldControl
from protoagent.events.catalog import ModelCompleted, ModelRequested, ToolEnded, WorkflowPhase
from protoagent.events.queries import facts, starts_run, tool_results
from protoagent.events.types import Event
from protoagent.hooks.pipeline import BeforeModelHook
from protoagent.models.types import ModelRequest
from protoagent.workflow import changes
from protoagent.workflow.criteria import REVIEW_TOOL, CriterionSupport, PassingCheck, criteria_support
from protoagent.workflow.evidence import CheckResult, check_results, seeks_fix
from protoagent.workflow.offer import REVIEW_PHASE, review_opened
from protoagent.workflow.phase_control import run_start
from protoagent.workflow.reports import file_changes, recorded_report
from protoagent.workflow.signals import Verified
from protoagent.workflow.task import TaskRecord
from protoagent.workflow.workers import file_writes

MAX_SUMMARY_REPORT_CHARS = 400
MAX_UNREAD_ADVICE_CHARS = 2000
MAX_REVIEW_DIFF_CHARS = 8000


def passing_verification(events: Sequence[Event], record: TaskRecord) -> list[CheckResult] | None:
    """The passing final receipts that close this run's edit phase, one per selected check, or
    ``None`` while it stays open: no change in this run yet, a selected check with no passing
    ``verify`` run after the last change (zero tests never pass), or an unresolved worker report."""
    start = run_start(events)
    writes = file_writes(events, after_seq=start)
    if not writes or not record.selected_check_ids or record.unresolved_reports:
        return None
    last_write = writes[-1].seq
    final = {r.id: r for r in check_results(events) if r.phase == "verify" and r.seq > last_write}
    passed = [final.get(check_id) for check_id in record.selected_check_ids]
    if not all(r is not None and r.outcome == "passed" and r.tests_run != 0 for r in passed):
        return None
    return [r for r in passed if r is not None]


def closing_hook(record: Callable[[], TaskRecord]) -> BeforeModelHook:
    """A before-model hook: no Architect request once passing final verification closed the phase,
    except the one closing request of an opened ``review`` phase."""

    def close_when_verified(request: ModelRequest, events: Sequence[Event]) -> ModelRequest:
        if request.agent_role != ARCHITECT or _review_pending(events):
            return request
        if passing_verification(events, record()) is not None:
            raise YieldControl(Verified())
        return request

    return close_when_verified


def _review_pending(events: Sequence[Event]) -> bool:
    """A ``review`` phase opened after the lead's last request: its closing request is still to go."""
    for event in reversed(events):
        if event.agent == ARCHITECT and event.fact(ModelRequested) is not None:
            return False
        if (phase := event.fact(WorkflowPhase)) is not None and phase.phase == REVIEW_PHASE:
            return True
    return False


def unchecked_criteria(events: Sequence[Event], record: TaskRecord) -> tuple[int, ...]:
    """The 1-based positions of the recorded criteria that no passing final check covers and no
    review of the final diff affirms; empty while verification has not passed."""
    return tuple(i for i, c in enumerate(_judged(events, record), start=1) if c.support == "unsupported")


def _judged(events: Sequence[Event], record: TaskRecord) -> tuple[CriterionSupport, ...]:
    """What supports each recorded criterion after passing verification; empty before it."""
    passed = passing_verification(events, record)
    if passed is None:
        return ()
    passing = [PassingCheck(r.id, r.fixed_tests) for r in passed]
    return criteria_support(events, record, passing, seeks_fix=seeks_fix(record.objective))


def review_due(events: Sequence[Event], record: TaskRecord, tools: Sequence[str]) -> bool:
    """The lead gets a closing request: verification passed, some criterion is unchecked, the lead
    can record a review, and this run has not had its closing request yet."""
    if REVIEW_TOOL not in tools or review_opened(events):
        return False
    return bool(unchecked_criteria(events, record))


def review_request(events: Sequence[Event], record: TaskRecord) -> str:
    """The closing request: every criterion with what covers it, and this run's final diff."""
    passed = passing_verification(events, record) or []
    unchecked = set(unchecked_criteria(events, record))
    checks = ", ".join(f"{r.id} passed ({_tests(r.tests_run)})" for r in passed)
    lines = [
        f"Final verification passed ({checks}), but no check result shows criteria {sorted(unchecked)} met. "
        "Review the final diff below against them (and any AGENTS.md rules in your instructions): call "
        "review_criteria(met=[...]) with the positions it meets, or give Coder one repair assignment. Checks still "
        "decide verified.",
        "",
        "Criteria:",
    ]
    labels = {"check": "covered by a check", "review": "affirmed by your review", "unsupported": "no check"}
    lines += [f"{i}. {c.text} ({labels[c.support]})" for i, c in enumerate(_judged(events, record), start=1)]
    return "\n".join(lines) + "\n\nFinal diff of this run:\n" + final_diff(events)


def final_diff(events: Sequence[Event]) -> str:
    """This run's net file changes as a unified diff, cut at ``MAX_REVIEW_DIFF_CHARS``."""
    turn = sum(1 for e in events if starts_run(e))
    diff = changes.unified_diff(changes.session_changes(events, turn)) or "(no net change)\n"
    if len(diff) > MAX_REVIEW_DIFF_CHARS:
        cut = len(diff) - MAX_REVIEW_DIFF_CHARS
        diff = diff[:MAX_REVIEW_DIFF_CHARS] + f"\n[... {cut} characters of the diff cut; read the files for the rest]\n"
    return diff


def verified_summary(events: Sequence[Event], record: TaskRecord) -> str:
    """What changed and what verified, composed from this run's worker reports and receipts."""
    start = run_start(events)
    passed = passing_verification(events, record) or []
    checks = ", ".join(f"{r.id} passed ({_tests(r.tests_run)})" for r in passed)
    parts = [f"Final verification passed: {checks}." if checks else "Final verification passed."]
    changes = file_changes(events, None, start)
    if changes:
        parts.append("Changed: " + ", ".join(f"{c.path} (+{c.added} -{c.removed})" for c in changes) + ".")
    unread = unread_advice(events, start)
    for role in _reporting_roles(events, start):
        report = recorded_report(events, role, start)
        if role in unread:
            continue  # its whole advice follows
        if report is not None and report.summary:
            said = report.summary.strip()
            if len(said) > MAX_SUMMARY_REPORT_CHARS:
                said = said[:MAX_SUMMARY_REPORT_CHARS].rstrip() + " …"
            parts.append(f"{role.capitalize()} reported {report.status}: {said}")
    later = _after_verification(events, max((r.seq for r in passed), default=0))
    if later:
        parts.append("Also run after verification: " + ", ".join(later) + ".")
    advice = [
        f"Advice from {role} that the lead had not read when verification closed the run (not evidence):\n{text}"
        for role, text in unread.items()
    ]
    return "\n\n".join([" ".join(parts), *advice])


def unread_advice(events: Sequence[Event], after_seq: int) -> dict[str, str]:
    """Advice results (Tester, team members) the Architect received after its last model reply:
    no request followed them, so only the run's report can carry them. Bounded per worker."""
    last_reply = max((e.seq for e, _ in facts(events, ModelCompleted, agent=ARCHITECT)), default=0)
    found: dict[str, str] = {}
    for _, ended in facts(events, ToolEnded, agent=ARCHITECT, after=max(after_seq, last_reply)):
        role = ended.data.get("advice")
        if isinstance(role, str) and ended.status == "ok":
            text = ended.output.removeprefix("advice, not evidence:\n").strip()
            if len(text) > MAX_UNREAD_ADVICE_CHARS:
                text = (
                    text[:MAX_UNREAD_ADVICE_CHARS].rstrip()
                    + f" [... {len(text) - MAX_UNREAD_ADVICE_CHARS} characters cut]"
                )
            found[role] = text
    return found


def _tests(count: int | None) -> str:
    if count is None:
        return "tests run: unknown"
    return f"{count} test{'s' if count != 1 else ''}"


def _reporting_roles(events: Sequence[Event], after_seq: int) -> list[str]:
    """Workers that recorded a report after ``after_seq``, in the order they first reported."""
    return list(dict.fromkeys(e.agent for e, _ in tool_results(events, ("report_task",), after=after_seq)))


def _after_verification(events: Sequence[Event], verified_seq: int) -> list[str]:
    """The Architect's calls that ended after the last passing receipt, with their status."""
    if not verified_seq:
        return []
    return [
        f"{ended.tool} ({ended.status})" for _, ended in facts(events, ToolEnded, agent=ARCHITECT, after=verified_seq)
    ]
