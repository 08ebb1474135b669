"""``AgentSession``: a preset composed with a model, tools, approvals and a session log."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from protoagent.agents.presets import Preset, get_preset
from protoagent.errors import ConfigError
from protoagent.events.log import SessionLog, new_session_id
from protoagent.events.session_lease import NoLease, SessionLease, claim_session
from protoagent.events.store import SessionStore
from protoagent.events.types import Event
from protoagent.hooks.pipeline import HookPipeline
from protoagent.hooks.projection import PROJECTION_OWNER
from protoagent.models.protocol import ModelProvider
from protoagent.models.registry import ModelConfig, resolve_model
from protoagent.processes.preview import PreviewRegistry
from protoagent.processes.runner import ProcessRegistry
from protoagent.processes.tools import process_tool_available
from protoagent.tools.approvals import POLICIES, Answerer, ApprovalService, Policy, rules_from_events
from protoagent.tools.base import AnyTool
from protoagent.tools.pipeline import Guard, ToolEnvironment, ToolPipeline
from protoagent.tools.registry import ToolRegistry
from protoagent.tools.services import RunServices


def builtin_tools() -> list[AnyTool]:
    """Every first-party tool, instantiated. Presets pick from these by exact name."""
    from protoagent.navigation.tool import NAVIGATION_TOOLS
    from protoagent.processes.preview import PREVIEW_TOOLS
    from protoagent.processes.tools import PROCESS_TOOLS
    from protoagent.tools.recall import RECALL_TOOLS
    from protoagent.workspace.tools import WORKSPACE_TOOLS

    return [cls() for cls in (*WORKSPACE_TOOLS, *NAVIGATION_TOOLS, *PROCESS_TOOLS, *PREVIEW_TOOLS, *RECALL_TOOLS)]


@dataclass(slots=True)
class SessionSpec:
    """Everything needed to compose a session; validated before anything is recorded."""

    repo: Path
    model: str
    store: SessionStore
    preset: str | Preset = "coding"
    approval: Policy = "ask"
    answerer: Answerer | None = None
    title: str = ""
    parent_session_id: str | None = None
    """Set for a delegated child session: it never prompts (policy ``never``)."""
    model_config: ModelConfig = field(default_factory=ModelConfig)
    tools: Sequence[AnyTool] | None = None
    """Tools to offer instead of the built-in set."""
    guards: Sequence[Guard] = ()
    services: RunServices = field(default_factory=RunServices)
    """What the run provides its tools and agents; the session adds its own registries and log."""
    provider: ModelProvider | None = None
    """A ready provider (the SDK may pass one); otherwise ``model`` is resolved."""
    on_event: Callable[[Event], None] | None = None
    """Subscriber that sees every event from ``session.created`` on (interfaces render with it)."""
    artifacts_root: Path | None = None
    """Folder for per-session artifacts (command journals); a temp folder when unset."""
    mode: str = "coding"
    """The application mode (``work`` or ``coding``), persisted at creation."""
    lead: str | None = None
    """The lead agent of the session, persisted at creation."""
    resume_id: str | None = None
    """Continue this recorded session (its log is opened, not created)."""
    session_id: str | None = None
    """The id of a new session when an interface handed it out before the first run (ACP's
    ``session/new``); a fresh id when unset. Ignored with ``resume_id``."""
    extra_roots: Sequence[Path] = ()
    """Further repositories of a multi-repository session (``repo`` is the primary); tools
    reach them by absolute path, confined beneath each root. Persisted at creation."""
    agent_providers: Mapping[str, ModelProvider] = field(default_factory=dict)
    """Agent name → the provider of an agent whose own ``model`` differs from the session's."""


@dataclass(eq=False, slots=True)
class AgentSession:
    """One composed agent: preset, provider, tool pipeline and its session log."""

    spec: SessionSpec
    preset: Preset
    provider: ModelProvider
    registry: ToolRegistry
    log: SessionLog
    pipeline: ToolPipeline
    hooks: HookPipeline
    lease: SessionLease = field(default_factory=NoLease, init=False)
    """This run's claim on the session, released by ``close``."""

    def close(self) -> None:
        """End the session: every tracked process group and preview server is terminated, then the
        session is given back."""
        registry, previews = self.services.processes, self.services.previews
        try:
            if registry is not None:
                registry.shutdown()
        finally:
            try:
                if previews is not None:
                    previews.shutdown()
            finally:
                self.lease.release()

    def offered_tools(self, names: Sequence[str], agent: str) -> tuple[str, ...]:
        """The role's tools, tools activated by the skills ``agent`` loaded, ``recall`` for a role with
        tools when projection is mounted (its receipts point to it), plus ``process`` once a ``shell``
        call left a process running. A tool whose metadata names roles is offered only to those
        agents; the pipeline runs only offered tools, so it is never executed for another."""
        registry, skills = self.services.processes, self.services.skills
        granted: Mapping[str, Iterable[str]] = skills.active_tools if skills is not None else {}
        # Dependencies of a skill join only the offer of the agent that loaded it (bounded by its
        # role when the skill was activated); a lead's skills never widen a member.
        skill_tools = sorted(granted.get(agent, ()))
        names = (*names, *(t for t in skill_tools if t not in names and t in self.registry))
        if names and "recall" in self.registry and "recall" not in names and PROJECTION_OWNER in self.hooks.owners:
            names = (*names, "recall")  # projection declares it to the model only once a receipt needs it
        if "shell" in names and "process" in self.registry and registry is not None:
            if process_tool_available(registry) and "process" not in names:
                names = (*names, "process")
        return tuple(n for n in names if self._permits(n, agent))

    def _permits(self, name: str, agent: str) -> bool:
        tool = self.registry.get(name)
        return tool is None or not tool.metadata.roles or agent in tool.metadata.roles

    @property
    def services(self) -> RunServices:
        """The session's services as every tool call sees them now."""
        return self.pipeline.env.services

    def provide(self, services: RunServices) -> None:
        """Hand later services to the session's agents and every later tool call (what needs the
        session itself to exist: the task board, the workers, the compactor)."""
        self.pipeline.env = replace(self.pipeline.env, services=services)

    @property
    def root(self) -> Path:
        """The selected (primary) workspace root."""
        return self.pipeline.env.root

    @property
    def roots(self) -> tuple[Path, ...]:
        """Every root of the session, the primary first."""
        return (self.root, *self.services.extra_roots)

    def provider_for(self, agent: str) -> ModelProvider:
        """The provider that answers ``agent``: its own model's, else the session's."""
        return self.spec.agent_providers.get(agent, self.provider)

    @property
    def session_id(self) -> str:
        return self.log.session_id

    @classmethod
    def create(cls, spec: SessionSpec) -> AgentSession:
        """Compose and record a new session. Anything unknown or broken fails here, before any
        model call and before the log exists. The session is claimed for this run first (a second
        run on it, from any process, is refused with ``SessionRunning``); ``close`` gives it back."""
        session_id = spec.resume_id or spec.session_id or new_session_id()
        lease = claim_session(spec.store, session_id)
        try:
            session = cls._compose(spec, session_id)
        except BaseException:
            lease.release()
            raise
        session.lease = lease
        return session

    @classmethod
    def _compose(cls, spec: SessionSpec, session_id: str) -> AgentSession:
        root = _check_repo(spec.repo)
        extra = tuple(r for r in dict.fromkeys(_check_repo(r) for r in spec.extra_roots) if r != root)
        preset = spec.preset if isinstance(spec.preset, Preset) else get_preset(spec.preset)
        if spec.approval not in POLICIES:
            raise ConfigError(f"unknown approval policy {spec.approval!r}; use one of {', '.join(POLICIES)}")
        available = ToolRegistry(spec.tools if spec.tools is not None else builtin_tools())
        available.subset(preset.tools)  # every tool the preset names must exist
        registry = available
        provider = spec.provider or resolve_model(spec.model, spec.model_config)
        approvals = ApprovalService(spec.approval, spec.answerer)
        if spec.parent_session_id is not None:
            approvals = approvals.for_child()
        resumed = spec.resume_id
        log = SessionLog.open(spec.store, resumed) if resumed else SessionLog(spec.store, session_id)
        if spec.on_event is not None:
            log.subscribe(spec.on_event)
        artifacts_root = spec.artifacts_root or Path(tempfile.gettempdir()) / "protoagent-artifacts"
        artifacts = artifacts_root / log.session_id
        given = spec.services
        services = replace(
            given,
            processes=ProcessRegistry() if given.processes is None else given.processes,
            previews=PreviewRegistry() if given.previews is None else given.previews,  # apart from the processes
            session_log=log,  # read by ``recall``
            extra_roots=extra or given.extra_roots,
        )
        env = ToolEnvironment(root, artifacts, services, preset.profile)
        pipeline = ToolPipeline(registry, approvals, log, env, guards=spec.guards)
        if spec.resume_id is not None:
            approvals.restore_rules(rules_from_events(log.events))  # "for this session" outlives a run
            log.append("session.resumed", {"preset": preset.name, "model": spec.model, "title": spec.title})
            return cls(spec, preset, provider, registry, log, pipeline, HookPipeline())
        log.append(
            "session.created",
            {
                "mode": spec.mode,
                "lead": spec.lead,
                "preset": preset.name,
                "model": spec.model,
                "root": str(root),
                **({"roots": [str(r) for r in (root, *extra)]} if extra else {}),
                "approval_policy": approvals.policy,
                "parent_session_id": spec.parent_session_id,
                "title": spec.title,
                "tools": list(preset.tools),
            },
        )
        return cls(spec, preset, provider, registry, log, pipeline, HookPipeline())


def _check_repo(repo: Path) -> Path:
    root = Path(repo).expanduser()
    if not root.is_dir():
        raise ConfigError(f"repository {str(repo)!r} is not a directory; pass an existing folder with --repo")
    return root.resolve()


def tool_names(tools: Iterable[AnyTool]) -> list[str]:
    return [t.name for t in tools]
