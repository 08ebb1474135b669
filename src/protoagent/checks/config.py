"""The owner's check configuration, ``.protoagent/project.json``, read once into a frozen snapshot.

Its ``checks`` take precedence over discovery; ``"checks": []`` disables discovery and the
bootstrap runner. Every refusal is a :class:`ProjectConfigError` naming the file, the field and the fix.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protoagent.checks.executables import beneath_root, is_executable_file
from protoagent.checks.types import CheckSpec
from protoagent.errors import ConfigError
from protoagent.workspace.confined import RefusedRead, read_confined

PROJECT_CONFIG_PATH = ".protoagent/project.json"
"""Where the project configuration lives, relative to the workspace root."""

MAX_CONFIG_BYTES = 1 << 20
_CHECK_FIELDS = ("id", "argv", "cwd", "env", "paths")
_CHECK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_EXAMPLE = '{"id": "tests", "argv": [".venv/bin/python", "-m", "pytest", "-q"]}'


class ProjectConfigError(ConfigError):
    """``.protoagent/project.json`` is malformed; ``file``, ``field`` and ``fix`` say where and how."""

    def __init__(self, file: str, field: str, problem: str, fix: str) -> None:
        super().__init__(f"{file}: {field}: {problem}. Fix: {fix}")
        self.file = file
        self.field = field
        self.problem = problem
        self.fix = fix


@dataclass(frozen=True, slots=True)
class ProjectConfig:
    """A snapshot of the project configuration taken before inference."""

    path: str
    """Workspace-relative path of the file (``.protoagent/project.json``)."""
    checks: tuple[CheckSpec, ...] | None
    """The configured checks; ``()`` disables discovery and bootstrap; ``None`` when not set."""


def load_project_config(root: str | os.PathLike[str]) -> ProjectConfig | None:
    """Read ``.protoagent/project.json`` once; ``None`` when the file does not exist."""
    workspace = Path(os.path.abspath(root))
    file = os.path.join(workspace, PROJECT_CONFIG_PATH)
    try:
        # Confined like read_file: never through a link out of the repository, never blocking.
        raw = read_confined(workspace, PROJECT_CONFIG_PATH, limit=MAX_CONFIG_BYTES, cut=True)
    except FileNotFoundError:
        return None
    except RefusedRead as refused:
        raise ProjectConfigError(file, "(file)", refused.reason, "replace it with a JSON file") from None
    except OSError as error:
        raise ProjectConfigError(file, "(file)", f"cannot be read ({error.strerror})", "make it readable") from error
    document = _parse(file, raw)
    if "checks" not in document:
        return ProjectConfig(PROJECT_CONFIG_PATH, None)
    entries = document["checks"]
    if not isinstance(entries, list):
        raise ProjectConfigError(
            file, "checks", f"must be a list, got {_kind(entries)}", f"write a list such as [{_EXAMPLE}]"
        )
    checks = tuple(_check(workspace, file, index, entry) for index, entry in enumerate(entries))
    _refuse_duplicates(file, checks)
    return ProjectConfig(PROJECT_CONFIG_PATH, checks)


def _parse(file: str, raw: bytes) -> dict[str, Any]:
    if len(raw) > MAX_CONFIG_BYTES:
        raise ProjectConfigError(file, "(file)", "is larger than 1 MiB", "keep only the check configuration in it")
    try:
        document = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ProjectConfigError(file, "(file)", "is not UTF-8 text", "save it as UTF-8 JSON") from error
    except RecursionError:
        raise ProjectConfigError(file, "(file)", "is nested too deeply", "keep the check configuration flat") from None
    except json.JSONDecodeError as error:
        where = f"line {error.lineno} column {error.colno}"
        raise ProjectConfigError(
            file, "(file)", f"is not valid JSON ({error.msg} at {where})", f"correct the JSON syntax at {where}"
        ) from error
    if not isinstance(document, dict):
        raise ProjectConfigError(
            file, "(top level)", f"must be a JSON object, got {_kind(document)}", f'write {{"checks": [{_EXAMPLE}]}}'
        )
    return document


def _check(root: Path, file: str, index: int, entry: object) -> CheckSpec:
    field = f"checks[{index}]"
    if not isinstance(entry, dict):
        raise ProjectConfigError(file, field, f"must be an object, got {_kind(entry)}", f"write {_EXAMPLE}")
    unknown = sorted(set(entry) - set(_CHECK_FIELDS))
    if unknown:
        raise ProjectConfigError(
            file,
            f"{field}.{unknown[0]}",
            "is not a check field",
            f"remove it; the fields are {', '.join(_CHECK_FIELDS)}",
        )
    check_id = _check_id(file, field, entry.get("id"))
    argv = _argv(file, field, entry.get("argv"))
    env = _env(file, field, entry.get("env", {}))
    cwd = _cwd(root, file, field, entry.get("cwd", "."))
    paths = _paths(root, file, field, entry.get("paths", []))
    unavailable = _executable(root, file, field, argv[0], env, cwd)
    return CheckSpec(
        id=check_id,
        argv=argv,
        cwd=cwd,
        env=env,
        paths=paths,
        reason=f"configured in {PROJECT_CONFIG_PATH}",
        source="config",
        runner_unavailable=unavailable,
    )


def _check_id(file: str, field: str, value: object) -> str:
    if not isinstance(value, str) or not _CHECK_ID.match(value):
        raise ProjectConfigError(
            file,
            f"{field}.id",
            f"must be a short name, got {value!r}",
            "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit",
        )
    return value


def _argv(file: str, field: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(item, str) and item for item in value):
        raise ProjectConfigError(
            file,
            f"{field}.argv",
            f"must be a non-empty list of non-empty strings, got {value!r}",
            'write the command as a JSON array, e.g. [".venv/bin/python", "-m", "pytest", "-q"]',
        )
    return tuple(value)


def _env(file: str, field: str, value: object) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(key, str) and key and isinstance(item, str) for key, item in value.items()
    ):
        raise ProjectConfigError(
            file, f"{field}.env", f"must map names to strings, got {value!r}", 'write e.g. {"PYTHONPATH": "src"}'
        )
    return dict(value)


def _inside(root: Path, file: str, where: str, value: object, hint: str) -> str:
    """``value`` as a normalized workspace-relative path, or the error naming ``where`` it stands."""
    normal = beneath_root(root, value) if isinstance(value, str) else None
    if normal is None:
        raise ProjectConfigError(file, where, f"must be a path inside the workspace, got {value!r}", hint)
    return normal


def _cwd(root: Path, file: str, field: str, value: object) -> str:
    normal = _inside(root, file, f"{field}.cwd", value, 'use a relative path such as "."')
    if not os.path.isdir(os.path.join(root, normal)):
        raise ProjectConfigError(
            file, f"{field}.cwd", f"directory {normal!r} does not exist", "create it or correct the path"
        )
    real_root = os.path.realpath(root)
    if os.path.commonpath([real_root, os.path.realpath(os.path.join(root, normal))]) != real_root:
        raise ProjectConfigError(
            file, f"{field}.cwd", f"{normal!r} leads outside the workspace (a symlink)", "use a real folder inside it"
        )
    return normal


def _paths(root: Path, file: str, field: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ProjectConfigError(
            file, f"{field}.paths", f"must be a list, got {_kind(value)}", 'write e.g. ["tests", "src"]'
        )
    hint = 'use a workspace-relative path such as "tests"'
    return tuple(_inside(root, file, f"{field}.paths[{position}]", item, hint) for position, item in enumerate(value))


def _executable(root: Path, file: str, field: str, program: str, env: Mapping[str, str], cwd: str) -> str | None:
    """Check ``argv[0]``'s form; return a runner-unavailable note when it is well formed but missing."""
    if os.path.isabs(program):
        return None if is_executable_file(program) else f"{program} is not an executable file"
    if "/" in program or os.sep in program:
        normal = beneath_root(root, program)
        if normal is None:
            raise ProjectConfigError(
                file,
                f"{field}.argv[0]",
                f"{program!r} resolves outside the workspace",
                "use an absolute path or a path beneath the workspace root",
            )
        return None if is_executable_file(os.path.join(root, normal)) else f"{normal} is not an executable file"
    if "PATH" not in env:
        raise ProjectConfigError(
            file,
            f"{field}.argv[0]",
            f"bare program {program!r} needs an explicit env.PATH (the environment is not inherited)",
            f'use an absolute or workspace-relative path (e.g. ".venv/bin/{program}"), or set env.PATH',
        )
    search = os.pathsep.join(
        entry if os.path.isabs(entry) else os.path.join(root, cwd, entry) for entry in env["PATH"].split(os.pathsep)
    )
    if shutil.which(program, path=search) is None:
        return f"{program!r} was not found on the configured env.PATH {env['PATH']}"
    return None


def _refuse_duplicates(file: str, checks: tuple[CheckSpec, ...]) -> None:
    seen: dict[str, int] = {}
    for index, check in enumerate(checks):
        if check.id in seen:
            raise ProjectConfigError(
                file,
                f"checks[{index}].id",
                f"duplicates the id {check.id!r} of checks[{seen[check.id]}]",
                "give every check a unique id",
            )
        seen[check.id] = index


def _kind(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else type(value).__name__
    )
