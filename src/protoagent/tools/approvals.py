"""``ApprovalService``: policy first, then the interface's answerer; one-time allows."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from protoagent.events.catalog import ApprovalRuleAdded
from protoagent.events.queries import facts
from protoagent.events.types import Event

Policy = Literal["ask", "auto-edit", "auto", "deny", "never"]
POLICIES: tuple[Policy, ...] = ("ask", "auto-edit", "auto", "deny", "never")
EFFECTS_NEEDING_APPROVAL = frozenset({"write", "execute"})


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What an approver sees: exactly one prepared call."""

    call_id: str
    tool: str
    effect: str
    preview: str
    paths: tuple[str, ...] = ()
    inside_workspace: bool = True
    agent: str = "main"
    trusted_by: str = ""
    """Why configuration trusts this effect outside the workspace (see ``Prepared.trusted_by``)."""
    external: str = ""
    """What acts outside the workspace, e.g. ``MCP tool 'x' of server 'y'`` (see ``Prepared.external``)."""
    action: str = ""
    """The exact action a session rule matches when it differs from the preview (see ``Prepared.action``)."""

    @property
    def fingerprint(self) -> str:
        """Identity of the exact action: a grant is only good for this call and this preview."""
        text = "\0".join((self.call_id, self.tool, self.effect, self.preview, *self.paths))
        return hashlib.sha256(text.encode()).hexdigest()


Scope = Literal["once", "session"]


@dataclass(frozen=True, slots=True)
class ApprovalAnswer:
    """An answerer's reply: one of the three choices every interface offers.

    - ``ApprovalAnswer.once()``: allow this one call; the grant is consumed by its execution.
    - ``ApprovalAnswer.for_session()``: allow it and add a session rule, so later calls of the
      same tool on the same paths (or the exact same command) are allowed without asking. A
      rule never widens past the workspace, the sandbox, a guard's or the policy's denial.
    - ``ApprovalAnswer.deny(reason)``: refuse; the reason is part of the result the model sees.

    Interfaces map their widgets onto these (terminal keys, web buttons, ACP's allow-once /
    allow-always / reject options, an SDK callback's return value).
    """

    allow: bool
    reason: str = ""
    scope: Scope = "once"
    """``session`` adds a session rule; only meaningful with ``allow``."""

    def __post_init__(self) -> None:
        if self.scope not in ("once", "session"):
            raise ValueError(f"unknown approval scope {self.scope!r}; use 'once' or 'session'")
        if self.scope == "session" and not self.allow:
            raise ValueError("a denial has no scope: deny with scope 'once'")

    @classmethod
    def once(cls, reason: str = "approved once") -> ApprovalAnswer:
        return cls(True, reason, "once")

    @classmethod
    def for_session(cls, reason: str = "approved for this session") -> ApprovalAnswer:
        return cls(True, reason, "session")

    @classmethod
    def deny(cls, reason: str = "") -> ApprovalAnswer:
        return cls(False, reason, "once")


Answerer = Callable[[ApprovalRequest], Awaitable[ApprovalAnswer]]


class GrantError(Exception):
    """A grant was used twice or for another call: an effect without a decision of its own."""


@dataclass(slots=True)
class Grant:
    """A one-time allow, consumed by the one execution it was given for."""

    fingerprint: str
    _used: bool = field(default=False, repr=False)

    def consume(self, request: ApprovalRequest) -> None:
        if self._used:
            raise GrantError(f"approval for call {request.call_id!r} was already used")
        if request.fingerprint != self.fingerprint:
            raise GrantError(f"approval does not match call {request.call_id!r}")
        self._used = True


@dataclass(frozen=True, slots=True)
class SessionRule:
    """A session-scoped allow: the same tool on the same paths, or the exact same command.

    A command is matched on its whole prepared preview (argv, cwd, environment, limits and
    sandbox), so a rule never covers a command that would run differently; a check is matched
    on its id and prepared command, so the rule covers it in every phase. A rule only applies
    inside the workspace and only after the policy and the guards have spoken.
    """

    tool: str
    effect: str
    paths: tuple[str, ...] = ()
    command: str = ""
    """The exact prepared command (its preview) when the effect names no paths."""

    @classmethod
    def for_request(cls, request: ApprovalRequest) -> SessionRule:
        if request.paths:
            return cls(request.tool, request.effect, tuple(sorted(request.paths)))
        return cls(request.tool, request.effect, (), request.action or request.preview)

    def matches(self, request: ApprovalRequest) -> bool:
        return request.inside_workspace and SessionRule.for_request(request) == self

    def describe(self) -> str:
        target = ", ".join(self.paths) if self.paths else self.command.splitlines()[0] if self.command else ""
        return f"{self.tool} on {target}"

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "effect": self.effect, "paths": list(self.paths), "command": self.command}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SessionRule:
        paths = tuple(str(p) for p in data.get("paths", ()))
        return cls(str(data["tool"]), str(data["effect"]), paths, str(data.get("command", "")))


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome of one approval: who decided and, when allowed, the one-time grant."""

    allow: bool
    source: Literal["policy", "answerer", "rule", "default"]
    reason: str
    grant: Grant | None = None
    rule: SessionRule | None = None
    """The session rule that allowed the call (``source == 'rule'``) or that the answer added."""


class ApprovalService:
    """Decides effects for one session.

    Policies: ``ask`` (the answerer decides), ``auto-edit`` (file writes inside the allowed
    paths are allowed, other effects ask), ``auto`` (every effect inside the workspace is
    allowed), ``deny`` (every effect is denied) and ``never`` (nobody is watching: whatever
    would ask is denied; delegated child sessions use it). A missing or failing answerer denies.
    Under ``ask`` and ``auto-edit``, a session rule an answerer added allows matching calls.
    """

    def __init__(
        self,
        policy: Policy = "ask",
        answerer: Answerer | None = None,
        allowed_paths: Callable[[], Sequence[str]] | None = None,
    ) -> None:
        if policy not in POLICIES:
            raise ValueError(f"unknown approval policy {policy!r}; use one of {', '.join(POLICIES)}")
        self.policy: Policy = policy
        self.answerer = answerer
        self._allowed_paths = allowed_paths
        self._rules: list[SessionRule] = []

    @property
    def rules(self) -> tuple[SessionRule, ...]:
        """The session rules in force, oldest first."""
        return tuple(self._rules)

    def restore_rules(self, rules: Iterable[SessionRule]) -> None:
        """Reinstate rules recorded earlier in this session (a resumed session keeps them)."""
        for rule in rules:
            if rule not in self._rules:
                self._rules.append(rule)

    def for_child(self) -> ApprovalService:
        """The service a delegated child session gets: it never prompts."""
        return ApprovalService("never" if self.policy not in ("deny",) else "deny", None, self._allowed_paths)

    async def decide(self, request: ApprovalRequest) -> Decision:
        verdict = self._policy_verdict(request)
        if verdict is not None:
            return verdict
        for rule in self._rules:
            if rule.matches(request):
                reason = f"allowed by the session rule for {rule.describe()}"
                return Decision(True, "rule", reason, Grant(request.fingerprint), rule)
        return await self._ask(request)

    def _policy_verdict(self, request: ApprovalRequest) -> Decision | None:
        if self.policy == "deny":
            return Decision(False, "policy", "approval policy 'deny' denies every effect")
        if self.policy == "auto" and request.trusted_by:
            return self._allow("policy", f"approval policy 'auto' allows this call: {request.trusted_by}", request)
        if self.policy == "auto" and request.inside_workspace:
            return self._allow("policy", "approval policy 'auto' allows effects inside the workspace", request)
        if self.policy == "auto-edit" and request.effect == "write" and self._within_allowed(request.paths):
            return self._allow("policy", "approval policy 'auto-edit' allows writes inside the allowed paths", request)
        if self.policy == "never":
            return Decision(False, "policy", f"approval policy 'never': nobody can approve this {request.effect}")
        return None

    async def _ask(self, request: ApprovalRequest) -> Decision:
        if self.answerer is None and request.external:
            return Decision(
                False,
                "default",
                f"{request.external} acts outside the workspace and is not trusted in configuration, so no "
                "policy allows it without a person; rerun on a terminal to approve it, or trust it in configuration",
            )
        if self.answerer is None and self.policy == "auto" and request.effect == "execute":
            # Only a sandbox confines a command to the workspace; without one a person decides.
            reason = "approval policy 'auto' allows commands only inside a sandbox, and none is active"
            return Decision(False, "default", f"{reason}; rerun on a terminal to approve each, or install bubblewrap")
        if self.answerer is None:
            return Decision(
                False,
                "default",
                "no one is available to approve this; rerun on a terminal, or choose "
                "--approval auto-edit (file writes) or --approval auto (all effects in the workspace)",
            )
        try:
            answer = await self.answerer(request)
        except Exception as exc:
            return Decision(False, "default", f"the approver failed ({type(exc).__name__}: {exc}); denied")
        if not answer.allow:
            return Decision(False, "answerer", answer.reason or "denied by the approver")
        decision = self._allow("answerer", answer.reason or "approved", request)
        if answer.scope != "session":
            return decision
        if not request.inside_workspace:
            note = "; allowed once only: no session rule outside the workspace"
            return replace(decision, reason=decision.reason + note)
        rule = SessionRule.for_request(request)
        if rule not in self._rules:
            self._rules.append(rule)
        return replace(decision, rule=rule)

    @staticmethod
    def _allow(source: Literal["policy", "answerer"], reason: str, request: ApprovalRequest) -> Decision:
        return Decision(True, source, reason, Grant(request.fingerprint))

    def _within_allowed(self, paths: Sequence[str]) -> bool:
        if not paths:
            return False
        if self._allowed_paths is None:
            return True
        allowed = [p.strip("/") for p in self._allowed_paths()]
        if not allowed:
            return True
        return all(any(_beneath(path, scope) for scope in allowed) for path in paths)


def _beneath(path: str, scope: str) -> bool:
    path = path.strip("/")
    return scope in ("", ".") or path == scope or path.startswith(scope + "/")


def rules_from_events(events: Iterable[Event]) -> list[SessionRule]:
    """The session rules a log recorded (``approval.rule_added``), oldest first."""
    return [SessionRule.from_json(added.rule) for _, added in facts(events, ApprovalRuleAdded)]
