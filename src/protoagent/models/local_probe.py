"""A tiny generation in the embedded model's worker before first use, cached per build and CPU.

A llama-cpp-python build made for another CPU dies of an illegal instruction the first time a
kernel runs. Before the embedded model is first used with a given build on a given CPU, its
worker process loads the model and generates a few constrained tokens; a crash becomes one
``ConfigError`` line (the signal, the cause, the fix) before a session is written. The result,
passed or failed, is cached in the data home under a key made of the llama-cpp-python version,
the installed native libraries (path, size and modification time of each ``.so`` file), the
model file and the CPU (model name and instruction-set flags), so a rebuilt package, another
model or another machine is probed again. ``PROTOAGENT_LOCAL_PROBE=off`` skips the probe.
Nothing here imports llama.cpp: the libraries are found with ``importlib.util.find_spec``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import platform
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from protoagent.atomic_files import replace_file
from protoagent.errors import ConfigError, LimitExceeded, ProviderError
from protoagent.models.local_client import LocalWorker
from protoagent.settings import environment

PROBE_ENV = "PROTOAGENT_LOCAL_PROBE"
PROBE_TOKENS = 12
PROBE_SCHEMA = json.dumps(
    {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"], "additionalProperties": False}
)
PROBE_CHAT = ({"role": "user", "content": 'Reply with {"ok": true}.'},)
CPU_KEYS = ("model name", "flags", "Features", "CPU implementer", "CPU part")
"""``/proc/cpuinfo`` fields that say which instructions this CPU runs (x86-64 and aarch64 names)."""


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """How the test generation went."""

    ok: bool
    seconds: float
    """From starting the worker to the end of the generation (load included)."""
    tokens_per_s: float | None
    """Decoding speed after the first generated token (the first waits for the prompt)."""
    error: str | None
    cached: bool = False
    """Read from the cache instead of run now."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def probe_enabled(environ: Mapping[str, str] | None = None) -> bool:
    return environment(environ).local_probe


def library_folder() -> Path | None:
    """llama-cpp-python's folder of native libraries, found without importing the package."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "lib"


def build_fingerprint(lib: Path | None) -> dict[str, Any]:
    """The llama-cpp-python version and every native library under ``lib``: path, size, mtime."""
    try:
        version = importlib.metadata.version("llama_cpp_python")
    except importlib.metadata.PackageNotFoundError:
        version = None
    files = []
    if lib is not None and lib.is_dir():
        for path in sorted(lib.rglob("*.so*")):
            stat = path.stat()
            files.append([str(path), stat.st_size, stat.st_mtime_ns])
    return {"version": version, "libraries": files}


def cpu_fingerprint(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """A hash of the first CPU's model name and instruction-set flags."""
    seen: dict[str, str] = {}
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key in CPU_KEYS and key not in seen:
            seen[key] = " ".join(sorted(value.split())) if key in ("flags", "Features") else value.strip()
    if not seen:
        seen = {"machine": platform.machine(), "processor": platform.processor()}
    return hashlib.sha256(json.dumps(seen, sort_keys=True).encode()).hexdigest()


def probe_key(model: Path, lib: Path | None = None) -> str:
    """The cache key: build, CPU and model file."""
    stat = model.stat()
    parts = {
        "build": build_fingerprint(lib if lib is not None else library_folder()),
        "cpu": cpu_fingerprint(),
        "model": [str(model), stat.st_size, stat.st_mtime_ns],
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def cache_folder(environ: Mapping[str, str] | None = None) -> Path:
    """``probes`` under the data home (``$PROTOAGENT_HOME``, else ``~/.protoagent``)."""
    return environment(environ).home / "probes"


def run_probe(worker: LocalWorker, stop: threading.Event | None = None) -> ProbeResult:
    """Start ``worker`` if needed and generate a few constrained tokens in it."""
    started = time.monotonic()
    message = {
        "op": "generate",
        "chat": list(PROBE_CHAT),
        "schema": PROBE_SCHEMA,
        "limit": PROBE_TOKENS,
        "close": False,
    }
    try:
        done = worker.request(message, stop=stop)
    except (ProviderError, LimitExceeded) as error:
        return ProbeResult(False, time.monotonic() - started, None, str(error))
    # Decoding speed after the first token (the first includes the prompt's evaluation).
    tokens, seconds = int(done["usage"]["output_tokens"]) - 1, float(done["decode_seconds"])
    rate = tokens / seconds if seconds > 0 and tokens > 0 else None
    return ProbeResult(True, time.monotonic() - started, rate, None)


def probe(worker: LocalWorker, folder: Path | None = None, stop: threading.Event | None = None) -> ProbeResult:
    """The cached result for this build, CPU and model, else a fresh probe (then cached; a probe
    that ``stop`` ended raises ``ProviderError`` and leaves no result)."""
    path = (folder or cache_folder()) / f"local-{probe_key(worker.path)}.json"
    try:
        data = json.loads(path.read_text())
        return ProbeResult(**{**data, "cached": True})
    except (OSError, ValueError, TypeError):
        pass
    result = run_probe(worker, stop)
    if stop is not None and stop.is_set():
        raise ProviderError("the probe of the local model was stopped", provider="local")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, json.dumps({**result.to_json(), "cached": False}))
    except OSError:
        pass  # an unwritable data home only means the next run probes again
    return result


def require_working(worker: LocalWorker, stop: threading.Event | None = None, data_home: Path | None = None) -> None:
    """Raise ``ConfigError`` (one line) when the embedded model cannot run here; probe at most once.
    Results are cached under ``data_home`` (a run's own), else the environment's data home."""
    if not probe_enabled():
        return
    folder = data_home / "probes" if data_home is not None else cache_folder()
    result = probe(worker, folder, stop)
    if not result.ok:
        where = folder / f"local-{probe_key(worker.path)}.json"
        again = f" (cached for this build and CPU in {where}; delete it to probe again)" if result.cached else ""
        raise ConfigError(f"the embedded model failed its test generation: {result.error}{again}")
