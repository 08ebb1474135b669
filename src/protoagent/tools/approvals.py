"""``ApprovalService``: policy first, then the interface's answerer; one-time allows."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

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

    @property
    def fingerprint(self) -> str:
        """Identity of the exact action: a grant is only good for this call and this preview."""
        text = "\0".join((self.call_id, self.tool, self.effect, self.preview, *self.paths))
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class ApprovalAnswer:
    """An answerer's reply."""

    allow: bool
    reason: str = ""


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
class Decision:
    """The outcome of one approval: who decided and, when allowed, the one-time grant."""

    allow: bool
    source: Literal["policy", "answerer", "default"]
    reason: str
    grant: Grant | None = None


class ApprovalService:
    """Decides effects for one session.

    Policies: ``ask`` (the answerer decides), ``auto-edit`` (file writes inside the allowed
    paths are allowed, other effects ask), ``auto`` (every effect inside the workspace is
    allowed), ``deny`` (every effect is denied) and ``never`` (nobody is watching: whatever
    would ask is denied; delegated child sessions use it). A missing or failing answerer denies.
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

    def for_child(self) -> ApprovalService:
        """The service a delegated child session gets: it never prompts."""
        return ApprovalService("never" if self.policy not in ("deny",) else "deny", None, self._allowed_paths)

    async def decide(self, request: ApprovalRequest) -> Decision:
        verdict = self._policy_verdict(request)
        if verdict is not None:
            return verdict
        return await self._ask(request)

    def _policy_verdict(self, request: ApprovalRequest) -> Decision | None:
        if self.policy == "deny":
            return Decision(False, "policy", "approval policy 'deny' denies every effect")
        if self.policy == "auto" and request.inside_workspace:
            return self._allow("policy", "approval policy 'auto' allows effects inside the workspace", request)
        if self.policy == "auto-edit" and request.effect == "write" and self._within_allowed(request.paths):
            return self._allow("policy", "approval policy 'auto-edit' allows writes inside the allowed paths", request)
        if self.policy == "never":
            return Decision(False, "policy", f"approval policy 'never': nobody can approve this {request.effect}")
        return None

    async def _ask(self, request: ApprovalRequest) -> Decision:
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
        return self._allow("answerer", answer.reason or "approved", request)

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
