"""``${VAR}`` and ``${VAR:-default}`` in MCP configuration values, from the environment."""

from __future__ import annotations

import re
from collections.abc import Mapping

PATTERN = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class ExpansionError(ValueError):
    """A ``${VAR}`` without a default names a variable the environment does not have."""


def expand(value: str, environ: Mapping[str, str], *, strict: bool = True) -> str:
    """``value`` with every reference replaced; an unset variable without a default raises
    (or, not ``strict``, stays as written: a disabled server is not an error)."""

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in environ and (environ[name] or default is None):
            return environ[name]
        if default is not None:
            return default
        if not strict:
            return match.group(0)
        raise ExpansionError(f"${{{name}}} is not set in the environment; export it or write ${{{name}:-default}}")

    return PATTERN.sub(one, value)
