"""``protoagent skills list|show|validate|enable|disable|set|reset``: the skills management surface.
``list``, ``show`` and ``validate`` are read routes: they create or change no file."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from protoagent.interfaces.cli.agents_cmd import ModeChoice
from protoagent.interfaces.cli.usage import EXIT_USAGE, fail

if TYPE_CHECKING:
    from protoagent.skills.index import SkillIndex
    from protoagent.skills.model import SkillBundle

skills_app = typer.Typer(help="List, show, validate and configure skills.", no_args_is_help=True, rich_markup_mode=None)


class Switch(StrEnum):
    on = "on"
    off = "off"


RepoOption = Annotated[Path, typer.Option("--repo", help="Repository whose skill folders are searched.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _index(repo: Path) -> SkillIndex:
    from protoagent.api import data_home
    from protoagent.skills.discovery import load_skills

    if not repo.is_dir():
        fail(f"{str(repo)!r} is not a directory; pass an existing repository with --repo")
    return load_skills([repo.resolve()], data_home())


def _entry(bundle: SkillBundle) -> dict[str, Any]:
    from protoagent.skills.settings_service import skill_entry

    return skill_entry(bundle)


@skills_app.command("list")
def list_skills(
    repo: RepoOption = Path("."),
    mode: Annotated[ModeChoice | None, typer.Option(help="Show the skills this mode would use.")] = None,
    as_json: JsonOption = False,
) -> None:
    """List skills (the precedence winner per name) and discovery diagnostics."""
    index = _index(repo)
    bundles = index.management(mode.value if mode else None)
    diagnostics = [d.to_json() for d in index.diagnostics]
    if as_json:
        typer.echo(json.dumps({"skills": [_entry(b) for b in bundles], "diagnostics": diagnostics}, indent=2))
        return
    for b in bundles:
        modes = ",".join(m for m in ("work", "coding") if b.available_in(m)) or "off"
        typer.echo(f"{b.name:<28} {b.source:<8} {modes:<12}{_flags(b)}  {b.description[:70]}")
    for d in diagnostics:
        typer.echo(f"{d['severity']}: {d['path']}: {d['problem']}", err=True)


def _flags(bundle: SkillBundle) -> str:
    """What keeps a skill from ordinary use: invalid, policy manual-only, preferences turned off."""
    flags = [] if bundle.valid else ["INVALID"]
    if not bundle.policy.allow_implicit_invocation:
        flags.append("manual-only")
    if not bundle.preferences.implicit:
        flags.append("implicit:off")
    if not bundle.preferences.manual:
        flags.append("manual:off")
    return "".join(f" {flag}" for flag in flags)


def _on(value: bool) -> str:
    return "on" if value else "off"


def _winner(index: SkillIndex, name: str, mode: ModeChoice | None = None) -> SkillBundle:
    """The variant a command about ``name`` concerns: the one ``mode``'s runtime uses, else the
    management projection's winner (see ``SkillIndex.preference_target``)."""
    bundle = index.preference_target(name, mode.value if mode else None)
    if bundle is None:
        known = ", ".join(b.name for b in index.management()) or "none"
        fail(f"no skill named {name!r}; known skills: {known}")
    return bundle


def _which(bundle: SkillBundle, mode: ModeChoice | None) -> str:
    """Which variant a preference command changed, and why that one."""
    why = f"the variant {mode.value} uses" if mode else "the precedence winner"
    state = "" if bundle.valid else ", invalid"
    return f"variant {bundle.identity}: {bundle.source} {bundle.skill_file}{state}; {why}"


@skills_app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="Skill name.")],
    mode: Annotated[ModeChoice | None, typer.Option(help="Show the variant this mode runs.")] = None,
    repo: RepoOption = Path("."),
    as_json: JsonOption = False,
) -> None:
    """Show one skill: body, resource paths, interface and policy."""
    from protoagent.skills.settings_service import skill_detail

    bundle = _winner(_index(repo), name, mode)
    data = skill_detail(bundle)
    if as_json:
        typer.echo(json.dumps(data, indent=2, default=str))
        return
    typer.echo(f"{bundle.name} ({bundle.source}) {bundle.skill_file}\n{bundle.description}\n")
    typer.echo(bundle.body.strip())
    typer.echo("\nresources: " + (", ".join(data["resources"]) or "none"))
    typer.echo(f"interface: {json.dumps(bundle.interface, default=str)}")
    typer.echo(f"policy: {json.dumps(data['policy'])}")
    prefs = bundle.preferences
    modes = ",".join(sorted(prefs.modes)) or "none"
    typer.echo(f"preferences: implicit {_on(prefs.implicit)}, manual {_on(prefs.manual)}, modes {modes}")


@skills_app.command("validate")
def validate(
    paths: Annotated[list[Path] | None, typer.Argument(help="Bundles or folders of bundles.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Validate bundles (default: every skill the current folder sees). Exit 2 when any is invalid."""
    from protoagent.skills.validation import validate_paths

    if paths:
        bundles, problems = validate_paths(paths)
    else:
        index = _index(Path("."))
        bundles, problems = list(index.variants), list(index.diagnostics_found)
    diagnostics = [*problems, *(d for b in bundles for d in b.diagnostics)]
    invalid = bool(problems) or any(not b.valid for b in bundles)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "valid": not invalid,
                    "skills": [{"name": b.name, "path": str(b.skill_file), "valid": b.valid} for b in bundles],
                    "diagnostics": [d.to_json() for d in diagnostics],
                },
                indent=2,
            )
        )
    else:
        for b in bundles:
            typer.echo(f"{'ok' if b.valid else 'INVALID':<8} {b.name:<28} {b.skill_file}")
        for d in diagnostics:
            typer.echo(f"{d.severity}: {d.path}: {d.problem}")
    if invalid:
        raise typer.Exit(EXIT_USAGE)


def _set_modes(name: str, mode: ModeChoice | None, repo: Path, enabled: bool) -> None:
    from protoagent.api import data_home
    from protoagent.errors import ConfigError
    from protoagent.skills.settings_service import set_availability

    bundle = _winner(_index(repo), name, mode)
    try:
        modes = [mode.value] if mode else ["work", "coding"]
        set_availability(data_home(), [repo], bundle, modes, enabled)  # type: ignore[arg-type]
    except ConfigError as exc:
        fail(str(exc))
    state = "enabled" if enabled else "disabled"
    typer.echo(f"{name}: {state} in {mode.value if mode else 'work and coding'} ({_which(bundle, mode)})")


def _variant(index: SkillIndex, bundle: SkillBundle) -> SkillBundle:
    """The same variant as discovered afresh (its preferences as stored now)."""
    return next((b for b in index.variants if b.identity == bundle.identity), bundle)


ModeOption = Annotated[
    ModeChoice | None,
    typer.Option("--mode", help="Only this mode, on the variant it runs (default: both, on the precedence winner)."),
]
TargetOption = Annotated[
    ModeChoice | None,
    typer.Option("--mode", help="Change the variant this mode runs (default: the precedence winner)."),
]


@skills_app.command("enable")
def enable(
    name: Annotated[str, typer.Argument(help="Skill name.")], mode: ModeOption = None, repo: RepoOption = Path(".")
) -> None:
    """Make a skill available in a mode (or both); only the settings overlay changes."""
    _set_modes(name, mode, repo, True)


@skills_app.command("disable")
def disable(
    name: Annotated[str, typer.Argument(help="Skill name.")], mode: ModeOption = None, repo: RepoOption = Path(".")
) -> None:
    """Make a skill unavailable in a mode (or both); the bundle's files are never changed."""
    _set_modes(name, mode, repo, False)


@skills_app.command("set")
def set_preferences(
    name: Annotated[str, typer.Argument(help="Skill name.")],
    implicit: Annotated[
        Switch | None, typer.Option("--implicit", help="Offer it in the catalog and to the implicit resolver.")
    ] = None,
    manual: Annotated[Switch | None, typer.Option("--manual", help="Let $NAME and /skill:NAME activate it.")] = None,
    mode: TargetOption = None,
    repo: RepoOption = Path("."),
) -> None:
    """Turn implicit use or manual invocation of a skill on or off; only the settings overlay changes."""
    from protoagent.api import data_home
    from protoagent.errors import ConfigError
    from protoagent.skills.settings_store import set_flags

    flags = {key: value == Switch.on for key, value in (("implicit", implicit), ("manual", manual)) if value}
    if not flags:
        fail(f"say what to change, e.g. protoagent skills set {name} --implicit off --manual on")
    bundle = _winner(_index(repo), name, mode)
    try:
        set_flags(data_home(), bundle.identity, bundle.name, flags)
    except ConfigError as exc:
        fail(str(exc))
    prefs = _variant(_index(repo), bundle).preferences
    typer.echo(f"{name}: implicit {_on(prefs.implicit)}, manual {_on(prefs.manual)} ({_which(bundle, mode)})")
    if prefs.implicit and not bundle.policy.allow_implicit_invocation:
        typer.echo(f"note: {name}'s own policy (allow_implicit_invocation: false) still keeps it out of implicit use")


@skills_app.command("reset")
def reset(
    name: Annotated[str, typer.Argument(help="Skill name.")], mode: TargetOption = None, repo: RepoOption = Path(".")
) -> None:
    """Forget this variant's preferences so the bundle defaults apply again."""
    from protoagent.api import data_home
    from protoagent.errors import ConfigError
    from protoagent.skills.settings_store import reset as reset_record

    bundle = _winner(_index(repo), name, mode)
    try:
        reset_record(data_home(), bundle.identity)
    except ConfigError as exc:
        fail(str(exc))
    typer.echo(f"{name}: preferences reset to the bundle defaults ({_which(bundle, mode)})")
