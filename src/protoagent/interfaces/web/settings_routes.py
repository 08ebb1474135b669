"""The settings API: agents, skills and MCP servers, the same library calls as ``protoagent agents``,
``skills`` and ``mcp``. Every GET is pure (no file is created or changed). ``repo`` is confined to
the server's roots; ``scope=project`` writes the repository's file, and trust stays the person's
(a repository agent's ``model`` and extra ``tools`` remain ignored until ``agents trust``).

Agents (``namespace`` is ``work`` or ``coding``):
- ``GET /api/settings/agents?repo=R`` → ``{"agents": [...], "diagnostics": [...]}``
- ``GET /api/settings/agents/{namespace}/{name}?repo=R`` → ``{"raw", "form", "effective", ...}``
- ``PUT`` there ``{"raw": TEXT} | {"form": {...}}, "scope": "user"|"project"`` writes the file
- ``DELETE`` there ``?scope=user|project`` removes that file (never a built-in)

Skills: ``GET /api/settings/skills?repo=R&mode=M``, ``GET /api/settings/skills/{name}``,
``PUT .../{name}/preferences`` ``{"modes", "implicit", "manual", "identity"?, "mode"?}``,
``POST .../{name}/reset``, ``PUT .../{name}/content`` ``{"text"}``, ``DELETE .../{name}``.

MCP: ``GET /api/settings/mcp?repo=R``, ``POST /api/settings/mcp`` (as ``mcp add``),
``DELETE /api/settings/mcp/{name}``, ``POST /api/settings/mcp/{name}/enable|disable``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI
from pydantic import BaseModel, ConfigDict, Field

from protoagent.agents.compile import compile_agent_config
from protoagent.agents.definition import AppMode, split_agent_text
from protoagent.agents.files import agent_location, delete_agent, form_text, read_text, write_agent
from protoagent.agents.roster import load_catalog
from protoagent.agents.service import agent_listing
from protoagent.errors import ConfigError
from protoagent.interfaces.web.requests import WebConfig, confine_repo

Scope = Literal["user", "project"]


class AgentBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    raw: str | None = None
    """The whole file text (Raw editor)."""
    form: dict[str, Any] | None = None
    """Frontmatter fields to set (Form editor); ``prompt`` sets the body. Other lines are kept."""
    scope: Scope = "user"


class PreferencesBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    modes: list[Literal["work", "coding"]] | None = None
    implicit: bool | None = None
    manual: bool | None = None
    identity: str | None = None
    """The exact variant to change (from the listing); default the one ``mode`` uses, else the winner."""
    mode: Literal["work", "coding"] | None = None


class VariantBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    identity: str | None = None
    mode: Literal["work", "coding"] | None = None


class ContentBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(max_length=1 << 20)
    identity: str | None = None


class MCPBody(BaseModel):
    """``POST /api/settings/mcp``: the choices of ``protoagent mcp add``."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=64)
    command: list[str] = Field(default_factory=list)
    url: str | None = None
    type: str = ""
    env: list[str] = Field(default_factory=list)
    """``KEY=VALUE`` items (``${VAR}`` expands)."""
    headers: list[str] = Field(default_factory=list)
    trusted: bool = False
    replace: bool = False
    scope: Scope = "user"


def settings_routes(app: FastAPI, config: WebConfig) -> None:
    """Mount the settings API on ``app``."""
    home = config.data_home

    def repo_of(repo: str | None) -> Path:
        return confine_repo(repo or ".", config.roots)

    def need_home() -> Path:
        if home is None:
            raise ConfigError("this server has no data home; restart 'protoagent serve' with PROTOAGENT_HOME set")
        return home

    _agent_routes(app, repo_of, home)
    _skill_routes(app, repo_of, need_home)
    _mcp_routes(app, repo_of, need_home)


def _agent_routes(app: FastAPI, repo_of: Any, home: Path | None) -> None:
    @app.get("/api/settings/agents")
    async def list_agents(repo: str | None = None, mode: Literal["work", "coding"] | None = None) -> dict[str, Any]:
        return agent_listing(mode, repo_of(repo), home)

    @app.get("/api/settings/agents/{namespace}/{name}")
    async def get_agent(namespace: str, name: str, repo: str | None = None) -> dict[str, Any]:
        return agent_view(namespace, name, repo_of(repo), home)

    @app.put("/api/settings/agents/{namespace}/{name}")
    async def put_agent(namespace: str, name: str, body: AgentBody, repo: str | None = None) -> dict[str, Any]:
        root = repo_of(repo)
        location = agent_location(namespace, name, body.scope, root, home)
        if (body.raw is None) == (body.form is None):
            raise ConfigError("send either 'raw' (the whole file) or 'form' (fields to set)")
        text = body.raw if body.raw is not None else form_text(location, body.form or {}, read_text(location))
        write_agent(location, text)
        return agent_view(namespace, name, root, home)

    @app.delete("/api/settings/agents/{namespace}/{name}")
    async def delete(namespace: str, name: str, repo: str | None = None, scope: Scope | None = None) -> dict[str, Any]:
        root = repo_of(repo)
        chosen = scope or _file_scope(namespace, name, root, home)
        delete_agent(agent_location(namespace, name, chosen, root, home))
        return {"deleted": f"{namespace}/{name}", "scope": chosen}


def _file_scope(namespace: str, name: str, repo: Path, home: Path | None) -> Scope:
    """The scope of the file that wins now; a built-in agent has no file to delete."""
    definition = load_catalog(repo, home).find(name, _mode(namespace))
    if definition.source == "builtin":
        raise ConfigError(f"{definition.agent_id!r} is built in and has no file to delete; turn it off instead")
    return definition.source


def _mode(namespace: str) -> AppMode:
    if namespace not in ("work", "coding"):
        raise ConfigError(f"namespace {namespace!r} is not one of: work, coding")
    return namespace  # type: ignore[return-value]


def agent_view(namespace: str, name: str, repo: Path, home: Path | None) -> dict[str, Any]:
    """The agent's file (the project's over the user's) as Raw text and Form fields, its problems,
    and the compiled config the runtime uses. An invalid file is still shown, so it can be repaired."""
    mode = _mode(namespace)
    catalog = load_catalog(repo, home)
    scopes: list[Scope] = ["project", "user"] if home is not None else ["project"]
    texts = {scope: read_text(agent_location(mode, name, scope, repo, home)) for scope in scopes}
    shown = next((scope for scope in scopes if texts[scope] is not None), None)
    try:
        effective: dict[str, Any] | None = compile_agent_config(catalog.find(name, mode)).to_json()
    except ConfigError:
        effective = None
    if shown is None and effective is None:
        raise ConfigError(f"unknown agent {namespace}/{name}; list them with GET /api/settings/agents")
    raw = texts[shown] if shown is not None else None
    path = agent_location(mode, name, shown, repo, home).path if shown is not None else None
    form: dict[str, Any] = {}
    if raw is not None:
        try:
            agent = split_agent_text(raw, str(path))
            form = {str(k): _json(v) for k, v in agent.frontmatter.items()}
            form["prompt"] = agent.body.strip()
        except ConfigError:
            form = {}
    problems = [str(p) for p in catalog.problems if path is not None and p.path == path]
    return {
        "namespace": mode,
        "name": name,
        "source": shown or "builtin",
        "path": str(path) if path is not None else None,
        "raw": raw,
        "form": form,
        "files": {scope: texts[scope] is not None for scope in scopes},
        "problems": problems,
        "effective": effective,
    }


def _json(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value if not isinstance(value, str) else str(value)
    return str(value)


def _skill_routes(app: FastAPI, repo_of: Any, need_home: Any) -> None:
    from protoagent.skills import settings_service as skills

    def home_or_none() -> Path | None:
        try:
            return need_home()  # type: ignore[no-any-return]
        except ConfigError:
            return None

    @app.get("/api/settings/skills")
    async def list_skills(repo: str | None = None, mode: Literal["work", "coding"] | None = None) -> dict[str, Any]:
        return skills.skill_listing(skills.skill_index([repo_of(repo)], home_or_none()), mode)

    @app.get("/api/settings/skills/{name}")
    async def get_skill(
        name: str, repo: str | None = None, mode: Literal["work", "coding"] | None = None, identity: str | None = None
    ) -> dict[str, Any]:
        index = skills.skill_index([repo_of(repo)], home_or_none())
        return skills.skill_detail(skills.target(index, name, mode, identity))

    @app.put("/api/settings/skills/{name}/preferences")
    async def put_preferences(name: str, body: PreferencesBody, repo: str | None = None) -> dict[str, Any]:
        repos = [repo_of(repo)]
        bundle = skills.target(skills.skill_index(repos, need_home()), name, body.mode, body.identity)
        changes = body.model_dump(include={"modes", "implicit", "manual"}, exclude_none=True)
        return skills.skill_entry(skills.set_preferences(need_home(), repos, bundle, changes))

    @app.post("/api/settings/skills/{name}/reset")
    async def reset(name: str, body: VariantBody, repo: str | None = None) -> dict[str, Any]:
        repos = [repo_of(repo)]
        bundle = skills.target(skills.skill_index(repos, need_home()), name, body.mode, body.identity)
        return skills.skill_entry(skills.reset_preferences(need_home(), repos, bundle))

    @app.put("/api/settings/skills/{name}/content")
    async def put_content(name: str, body: ContentBody, repo: str | None = None) -> dict[str, Any]:
        repos = [repo_of(repo)]
        bundle = skills.target(skills.skill_index(repos, home_or_none()), name, None, body.identity)
        skills.update_content(bundle, body.text)
        return skills.skill_detail(skills.fresh(repos, home_or_none(), bundle))

    @app.delete("/api/settings/skills/{name}")
    async def delete_skill(name: str, repo: str | None = None, identity: str | None = None) -> dict[str, Any]:
        bundle = skills.target(skills.skill_index([repo_of(repo)], home_or_none()), name, None, identity)
        skills.remove_bundle(bundle)
        return {"deleted": name, "identity": bundle.identity}


def _mcp_routes(app: FastAPI, repo_of: Any, need_home: Any) -> None:
    from protoagent.integrations.mcp_files import add_server, remove_server, set_disabled
    from protoagent.integrations.mcp_settings import mcp_file, server_entry
    from protoagent.integrations.mcp_status import server_statuses

    @app.get("/api/settings/mcp")
    async def list_servers(repo: str | None = None) -> dict[str, Any]:
        # Never started from here: a settings page lists what is declared, it runs nothing.
        return await server_statuses(repo_of(repo), need_home(), connect=False)

    @app.post("/api/settings/mcp")
    async def add(body: MCPBody, repo: str | None = None) -> dict[str, Any]:
        project = body.scope == "project"
        entry = server_entry(body.command, body.url, body.type, body.env, body.headers, body.trusted, project)
        path = mcp_file(project, repo_of(repo), need_home())
        await asyncio.to_thread(add_server, path, body.name, entry, replace=body.replace)
        return {"added": body.name, "path": str(path)}

    @app.delete("/api/settings/mcp/{name}")
    async def remove(name: str, repo: str | None = None, scope: Scope = "user") -> dict[str, Any]:
        path = mcp_file(scope == "project", repo_of(repo), need_home())
        remove_server(path, name)
        return {"removed": name, "path": str(path)}

    @app.post("/api/settings/mcp/{name}/{action}")
    async def switch(
        name: str, action: Literal["enable", "disable"], repo: str | None = None, scope: Scope = "user"
    ) -> dict[str, Any]:
        path = mcp_file(scope == "project", repo_of(repo), need_home())
        set_disabled(path, name, action == "disable")
        return {"name": name, "disabled": action == "disable", "path": str(path)}
