"""``${VAR}`` and ``${VAR:-default}`` in MCP configuration values, from the environment.

A repository's MCP file is untrusted: it may name only the variables the person allowed for
that server (``allowed``); any other reference takes its default or is refused, so a cloned
repository cannot send ``${ANTHROPIC_API_KEY}`` to a server of its choosing.
"""

from __future__ import annotations

import re
from collections.abc import Container, Mapping

PATTERN = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class ExpansionError(ValueError):
    """A ``${VAR}`` without a default names a variable the environment does not have (or that
    a repository's file may not read)."""


def expand(
    value: str, environ: Mapping[str, str], *, strict: bool = True, allowed: Container[str] | None = None
) -> str:
    """``value`` with every reference replaced; an unset variable without a default raises
    (or, not ``strict``, stays as written: a disabled server is not an error). With ``allowed``,
    variables outside it count as unset and, without a default, raise naming how to allow one."""

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        readable = allowed is None or name in allowed
        if readable and name in environ and (environ[name] or default is None):
            return environ[name]
        if default is not None:
            return default
        if not strict:
            return match.group(0)
        if not readable:
            raise ExpansionError(
                f"${{{name}}} reads your environment, which a repository's file may do only for variables "
                f"you allow: 'protoagent mcp allow-env SERVER {name}'"
            )
        raise ExpansionError(f"${{{name}}} is not set in the environment; export it or write ${{{name}:-default}}")

    return PATTERN.sub(one, value)


def references(value: str) -> list[str]:
    """The variable names ``value`` refers to."""
    return [match.group(1) for match in PATTERN.finditer(value)]
