"""Model specs (``provider:model``) resolved to providers by name, importing vendor SDKs lazily."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from protoagent.errors import ConfigError
from protoagent.models.protocol import ModelProvider


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """Settings that apply to whichever provider a spec names."""

    context_window: int | None = None
    """Known context window in tokens; ``None`` means unknown (small profiles then cap at 8192)."""
    base_dir: Path | None = None
    """Folder that relative paths in a spec (``scripted:turns.jsonl``) resolve against."""
    max_output_tokens: int | None = None


# provider name -> "module:factory". Each factory is ``factory(rest: str, config: ModelConfig)``.
_FACTORIES: dict[str, str] = {
    "scripted": "protoagent.testing.scripted:from_spec",
    "local": "protoagent.models.llama_local:from_spec",
    "openai": "protoagent.models.openai_compat:from_openai_spec",
    "openai-compatible": "protoagent.models.openai_compat:from_compatible_spec",
    "anthropic": "protoagent.models.anthropic:from_spec",
}


def provider_names() -> list[str]:
    return sorted(_FACTORIES)


def split_spec(spec: str) -> tuple[str, str]:
    """``"openai:gpt-4.1"`` -> ``("openai", "gpt-4.1")``; a bare ``"local"`` -> ``("local", "")``."""
    name, _, rest = spec.strip().partition(":")
    return name, rest


def resolve_model(spec: str, config: ModelConfig | None = None) -> ModelProvider:
    """Build the provider a spec names, or raise ``ConfigError`` listing the valid names."""
    name, rest = split_spec(spec)
    target = _FACTORIES.get(name)
    if target is None:
        raise ConfigError(
            f"unknown model provider {name!r} in model spec {spec!r}; "
            f"use one of: {', '.join(provider_names())} (for example 'local' or 'scripted:turns.jsonl')"
        )
    module_name, _, factory_name = target.partition(":")
    module = importlib.import_module(module_name)
    factory = getattr(module, factory_name)
    provider: ModelProvider = factory(rest, config or ModelConfig())
    return provider
