"""The probe's cache key and the worker's cancellation: a rebuilt library, another CPU or another
model file is probed again; a cancelled request ends quickly and the same worker keeps serving."""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from pathlib import Path

import pytest

from protoagent.models import installed
from protoagent.models.local_client import CANCEL_GRACE_S, LocalWorker, crash_message
from protoagent.models.local_probe import build_fingerprint, cpu_fingerprint, probe, probe_enabled, probe_key


def test_the_probe_key_changes_when_a_native_library_or_the_model_file_changes(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "libggml-cpu.so").write_bytes(b"native build")
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    first = probe_key(model, lib)
    assert probe_key(model, lib) == first
    (lib / "libggml-cpu.so").write_bytes(b"portable build, other size")
    rebuilt = probe_key(model, lib)
    assert rebuilt != first
    os.utime(lib / "libggml-cpu.so", ns=(1, 1))
    assert probe_key(model, lib) != rebuilt
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF")
    assert probe_key(other, lib) != probe_key(model, lib)
    assert [entry[0] for entry in build_fingerprint(lib)["libraries"]] == [str(lib / "libggml-cpu.so")]


def test_the_cpu_fingerprint_reads_the_model_name_and_flags_and_nothing_else(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: CPU A\nflags\t\t: sse avx2\ncpu MHz\t: 1000\n")
    same = tmp_path / "cpuinfo2"
    same.write_text("processor\t: 0\nmodel name\t: CPU A\nflags\t\t: avx2 sse\ncpu MHz\t: 3000\n")
    amx = tmp_path / "cpuinfo3"
    amx.write_text("processor\t: 0\nmodel name\t: CPU A\nflags\t\t: sse avx2 amx_tile\n")
    assert cpu_fingerprint(info) == cpu_fingerprint(same)
    assert cpu_fingerprint(info) != cpu_fingerprint(amx)


def test_the_probe_can_be_turned_off_by_environment() -> None:
    assert probe_enabled({})
    assert not probe_enabled({"PROTOAGENT_LOCAL_PROBE": "off"})
    assert not probe_enabled({"PROTOAGENT_LOCAL_PROBE": "0"})


def test_a_crash_message_names_the_signal_the_cause_and_the_fix() -> None:
    line = crash_message(-4)
    assert "SIGILL" in line and "does not allow" in line and "PROTOAGENT_LLAMA_BUILD=portable" in line
    assert "\n" not in line
    assert "status 1: cannot load" in crash_message(1, "cannot load")
    killed = crash_message(-9)
    assert "SIGKILL" in killed and "fresh one" in killed and "scripts/bootstrap" not in killed


needs_model = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or not installed.embedded_status(installed.default_embedded()).installed,
    reason="needs llama-cpp-python and the embedded model",
)


@needs_model
@pytest.mark.local_model
@pytest.mark.slow
def test_a_cancelled_generation_ends_within_the_grace_and_the_same_worker_keeps_serving(tmp_path: Path) -> None:
    worker = LocalWorker(installed.embedded_gguf_path(installed.default_embedded()), 2048)
    try:
        result = probe(worker, tmp_path)
        assert result.ok and not result.cached, result
        assert probe(worker, tmp_path).cached
        pid = worker.pid
        stop = threading.Event()
        asked: list[float] = []

        def first_piece(_: str) -> None:
            if not asked:
                asked.append(time.monotonic())
                stop.set()

        schema = '{"type": "array", "items": {"type": "integer"}, "minItems": 200, "maxItems": 200}'
        chat = [{"role": "user", "content": "Count from 1 to 200 as a JSON array."}]
        message = {"op": "generate", "chat": chat, "schema": schema, "limit": 1500}
        done = worker.request(message, on_text=first_piece, stop=stop)
        took = time.monotonic() - asked[0]
        assert took < CANCEL_GRACE_S + 0.5
        assert done["usage"]["output_tokens"] < 200
        assert worker.pid == pid  # cancelled by message, not killed
        assert worker.request({"op": "count", "text": "hello world"})["tokens"] > 0
    finally:
        worker.close()
    assert worker.pid is None


@needs_model
@pytest.mark.local_model
@pytest.mark.slow
def test_a_worker_killed_between_requests_is_replaced_and_one_killed_during_a_request_fails_it() -> None:
    import signal

    from protoagent.errors import ProviderError

    worker = LocalWorker(installed.embedded_gguf_path(installed.default_embedded()), 2048)
    try:
        assert worker.request({"op": "count", "text": "hello"})["tokens"] > 0
        first = worker.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        time.sleep(0.2)
        assert worker.request({"op": "count", "text": "hello"})["tokens"] > 0  # a fresh worker
        second = worker.pid
        assert second is not None and second != first

        def kill_on_first_piece(_: str) -> None:
            os.kill(second, signal.SIGKILL)

        schema = '{"type": "array", "items": {"type": "integer"}, "minItems": 100, "maxItems": 100}'
        chat = [{"role": "user", "content": "Count from 1 to 100 as a JSON array."}]
        message = {"op": "generate", "chat": chat, "schema": schema, "limit": 800}
        with pytest.raises(ProviderError, match="SIGKILL") as failed:
            worker.request(message, on_text=kill_on_first_piece)
        assert "\n" not in str(failed.value)
        assert worker.pid is None
    finally:
        worker.close()
