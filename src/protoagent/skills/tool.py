"""The ``skill`` tool: the model loads a catalog skill by exact name, or reads one task resource."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict
from pydantic.json_schema import SkipJsonSchema

from protoagent.errors import ToolRejected
from protoagent.skills.activation import SKILL_TOOL, is_control_plane, task_resources
from protoagent.skills.runtime import SkillRuntime
from protoagent.tools.base import Prepared, Tool, ToolContext, ToolMetadata, ToolOutput
from protoagent.workspace.confined import RefusedRead, read_confined

MAX_RESOURCE_BYTES = 64_000


class SkillInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    resource: SkipJsonSchema[str | None] = None
    """One task resource of a loaded skill. Valid, not declared: a loaded skill that has resources
    names this argument beside their paths, the only place a model learns of them."""


class SkillTool(Tool[SkillInput]):
    name: ClassVar[str] = SKILL_TOOL
    description: ClassVar[str] = "Load a skill by its exact catalog name."
    input_model: ClassVar[type[BaseModel]] = SkillInput
    metadata: ClassVar[ToolMetadata] = ToolMetadata(effect="read", observation="exact")

    def prepare(self, args: SkillInput, ctx: ToolContext) -> Prepared:
        runtime = _runtime(ctx)
        bundle = runtime.index.find(args.name, runtime.mode)
        if bundle is None or (not bundle.implicit and args.name not in runtime.loaded_for(ctx.agent_role)):
            names = [b.name for b in runtime.index.implicit(runtime.mode)]
            raise ToolRejected(
                f"no skill named {args.name!r} in the catalog; use an exact name from it",
                kind="unknown_skill",
                details={"available_skills": names},
            )
        if args.resource is None:
            return Prepared(preview=f"load skill {bundle.name}", effect="read", state=("load", bundle))
        return Prepared(
            preview=f"read {args.resource} of skill {bundle.name}",
            effect="read",
            state=("read", _resource_path(bundle.directory, args.resource, runtime, bundle.name, ctx.agent_role)),
        )

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        runtime = _runtime(ctx)
        kind, target = prepared.state
        if kind == "read":
            directory, relative = target
            text = _read_resource(directory, relative)
            return ToolOutput(text, data={"skill_resource": str(directory / relative)})
        if target.name in runtime.loaded_for(ctx.agent_role):
            return ToolOutput(
                f"skill {target.name!r} is already active above; follow its instructions",
                data={"already_active": target.name},
            )
        # Its tool dependencies join only this agent's offer, and only those its role may hold.
        activation = runtime.activate(target, "model", ctx.agent_role)
        runtime.mark_loaded(activation, ctx.agent_role)
        return ToolOutput(activation.render(), data={"activation": activation.to_json()})


def _runtime(ctx: ToolContext) -> SkillRuntime:
    runtime = ctx.services.skills
    if runtime is None:
        raise ToolRejected("skills are not available in this session", kind="unavailable")
    return runtime


def _resource_path(directory: Path, relative: str, runtime: SkillRuntime, name: str, agent: str) -> tuple[Path, str]:
    if name not in runtime.loaded_for(agent):
        raise ToolRejected(f"load skill {name!r} first (call skill with only its name)", kind="skill_not_loaded")
    clean = relative.strip().removeprefix("./")
    if is_control_plane(clean):
        raise ToolRejected(
            f"{relative!r} is control-plane metadata (agents/ or evals/), not a task resource; the runtime already "
            "applied it. Continue with the skill's instructions and its listed resources",
            kind="control_plane",
        )
    bundle = runtime.index.find(name, runtime.mode)
    listed = task_resources(bundle) if bundle is not None else ()
    if clean not in listed:
        raise ToolRejected(
            f"{relative!r} is not a resource of skill {name!r}; listed: {', '.join(listed) or 'none'}",
            kind="unknown_resource",
        )
    return directory, clean


def _read_resource(directory: Path, relative: str) -> str:
    """The resource's first bytes, opened strictly beneath its bundle folder, never through a link out."""
    try:
        data = read_confined(directory, relative, limit=MAX_RESOURCE_BYTES, cut=True)
    except RefusedRead as refused:
        raise ToolRejected(f"resource {relative!r} {refused.reason}", kind="resource_refused") from None
    except OSError as err:
        raise ToolRejected(
            f"resource {relative!r} cannot be read: {err.strerror}", kind="resource_unreadable"
        ) from None
    return data[:MAX_RESOURCE_BYTES].decode("utf-8", errors="replace")
