"""What a run is asked to do (``RunOptions``, built by ``run_options``); what it reports is
``workflow.run_report``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from protoagent.agents.definition import AppMode
from protoagent.errors import ConfigError
from protoagent.events.store import SessionStore
from protoagent.events.types import Event
from protoagent.models.profile import ProfileRequest
from protoagent.models.protocol import ModelProvider
from protoagent.models.registry import ModelConfig
from protoagent.processes.sandbox import Sandbox, SandboxMode, select_sandbox
from protoagent.settings import OPTIONAL_AGENTS, agent_enabled
from protoagent.tools.approvals import Answerer, Policy
from protoagent.workflow.contract import Surface
from protoagent.workflow.run_report import RunReport as RunReport
from protoagent.workflow.run_report import RunStatus as RunStatus


@dataclass(slots=True)
class RunOptions:
    repo: Path
    """The repository of a Coding session (the primary one when ``extra_repos`` are given)."""
    model: str | None
    """Model spec for the lead (``local``, ``scripted:PATH``, ``openai:MODEL`` …); it wins over the
    lead agent's own ``model``. ``None``: the lead's ``model``, else ``local``."""
    store: SessionStore
    approval: Policy = "ask"
    answerer: Answerer | None = None
    surface: Surface | None = None
    """Force a surface; no classification call is made then."""
    tester: bool = True
    scout: bool = False
    """Offer Scout's web_search/fetch_url to the Architect (off by default)."""
    mcp: bool = False
    """Offer the MCP broker's tools to the Architect (off by default)."""
    data_home: Path | None = None
    """Where user-level configuration (mcp.json) lives."""
    provider: ModelProvider | None = None
    """A ready provider for the lead (it wins over ``model``)."""
    model_config: ModelConfig = field(default_factory=ModelConfig)
    on_event: Callable[[Event], None] | None = None
    artifacts_root: Path | None = None
    profile: ProfileRequest = "auto"
    """``small`` or ``standard`` prompt profile; ``auto`` decides by the model's context window."""
    max_model_calls: int | None = None
    """The run's model-call budget, shared by the Architect and every worker; ``None``: the
    profile's budget (``workflow.limits``)."""
    sandbox: SandboxMode = "auto"
    """How commands are confined: ``required``, ``auto`` (ask each command without a sandbox) or ``off``."""
    network: bool = False
    """Let sandboxed commands use the network."""
    writable: tuple[Path, ...] = ()
    """Folders outside the workspace that sandboxed commands may also write."""
    mode: AppMode | None = None
    """``work`` or ``coding`` for a new session (default coding); a resume keeps the persisted one."""
    agent: str | None = None
    """The lead agent of a new session (default: the mode's default lead)."""
    resume: str | None = None
    """Continue this recorded session from its log: same mode, workspace, lead and task record."""
    session_id: str | None = None
    """The id a new session gets (an interface that named it before the first run, as ACP's
    ``session/new`` does); a fresh id when unset. Ignored with ``resume``."""
    skill_resolver: bool | None = None
    """Run the implicit skill resolver before the model; ``None``: on for standard profiles."""
    extra_repos: tuple[Path, ...] = ()
    """Further repositories of a multi-repository Coding session; ``repo`` is the primary, where
    commands, checks and the baseline run. Tools reach a further repository by absolute path. On
    resume, empty keeps the persisted ones and any other set is refused."""


def run_options(
    repo: Path, model: str | None, store: SessionStore, home: Path | None, agents: Mapping[str, bool] | None = None
) -> RunOptions:
    """The options of a run from the configuration's layers below the flags: the optional agents
    (``agents`` as an interface resolved them, else the user settings in ``home``, else the
    defaults), the data home and its artifacts folder. Every interface builds its runs here and
    sets its flags on the result with ``dataclasses.replace``."""

    def enabled(name: str) -> bool:
        if agents is not None:
            return agents.get(name, OPTIONAL_AGENTS[name])
        return agent_enabled(home, name) if home is not None else OPTIONAL_AGENTS[name]

    return RunOptions(
        repo=repo,
        model=model,
        store=store,
        tester=enabled("tester"),
        scout=enabled("scout"),
        mcp=enabled("mcp"),
        data_home=home,
        artifacts_root=home / "artifacts" if home is not None else None,
    )


def run_sandbox(options: RunOptions) -> Sandbox:
    """The sandbox profile every command of the run goes through (``ConfigError`` if required
    and missing)."""
    return select_sandbox(
        options.sandbox, network=options.network, writable=options.writable, data_home=options.data_home
    )


def check_inputs(objective: str, options: RunOptions) -> tuple[Path, ...]:
    """The run's roots, resolved, the primary first (``ConfigError`` names what is wrong)."""
    if not objective.strip():
        raise ConfigError("the objective is empty: say what you want done, e.g. 'fix the failing test'")
    if options.extra_repos and options.mode == "work":
        raise ConfigError("Work mode uses its own session workspace; drop the extra repositories or use coding mode")
    roots = []
    for repo in (options.repo, *options.extra_repos):
        root = Path(repo).expanduser()
        if not root.is_dir():
            raise ConfigError(f"repository {str(repo)!r} is not a directory; pass an existing folder with --repo")
        roots.append(root.resolve())
    return tuple(dict.fromkeys(roots))
