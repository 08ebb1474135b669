"""The prompt profile follows the model's context window, read from the server where it says it:
llama.cpp's GET /props, Ollama's POST /api/show (once GET /api/version says it is Ollama).
Servers here are real HTTP servers on loopback that answer as those servers document."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from protoagent.models.profile import choose_profile, probe_context_window
from protoagent.models.registry import ModelConfig, resolve_model
from protoagent.testing import make_repo, write_script

PROPS = {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1}
OLLAMA_SHOW = {"parameters": 'num_ctx                        32768\nstop "<|im_end|>"', "model_info": {}}


def serve(routes: dict[tuple[str, str], Any]) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            body = routes.get((self.command, self.path))
            if body is None:
                self.send_response(404)
                self.end_headers()
                return
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = _answer
        do_POST = _answer

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


@pytest.fixture
def llama_cpp_like() -> Iterator[str]:
    server, url = serve({("GET", "/props"): PROPS})
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture
def ollama_like() -> Iterator[str]:
    server, url = serve({("GET", "/api/version"): {"version": "0.6.2"}, ("POST", "/api/show"): OLLAMA_SHOW})
    yield url
    server.shutdown()
    server.server_close()


def test_llama_cpp_props_window_picks_the_small_profile(llama_cpp_like: str) -> None:
    assert probe_context_window(llama_cpp_like, "any") == 8192
    provider = resolve_model(f"openai-compatible:{llama_cpp_like}#qwen", ModelConfig())
    choice = choose_profile(provider)
    assert (choice.profile, choice.action_mode, choice.window) == ("small", "json", 8192)


def test_ollama_num_ctx_over_16k_keeps_the_standard_profile(ollama_like: str) -> None:
    provider = resolve_model(f"openai-compatible:{ollama_like}#llama3", ModelConfig())
    choice = choose_profile(provider)
    assert (choice.profile, choice.window) == ("standard", 32768)


def test_a_server_that_says_nothing_keeps_the_window_unknown_and_the_standard_profile() -> None:
    server, url = serve({})
    try:
        provider = resolve_model(f"openai-compatible:{url}#m", ModelConfig())
        assert choose_profile(provider).to_json() == {
            "profile": "standard",
            "action_mode": "native",
            "window": None,
            "reason": "no small context window detected",
        }
    finally:
        server.shutdown()
        server.server_close()
    server.server_close()


def test_small_profile_selection_is_not_tied_to_the_provider_name(llama_cpp_like: str) -> None:
    provider = resolve_model(f"openai-compatible:{llama_cpp_like}#m", ModelConfig())
    assert choose_profile(provider, "standard").profile == "standard"
    assert choose_profile(provider, "auto", configured=100_000).profile == "standard"
    assert choose_profile(object(), "small").profile == "small"


def test_run_with_an_explicit_small_profile_sends_json_actions(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    script = write_script(tmp_path / "turns.jsonl", [{"role": "architect", "text": "It sets x."}])
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home")}
    env.pop("PROTOAGENT_STORE", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "protoagent",
            "run",
            "--repo",
            str(repo),
            "--model",
            f"scripted:{script}",
            "--profile",
            "small",
            "--surface",
            "question",
            "--json",
            "what does a.py do?",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    session = json.loads(done.stdout)["session_id"]
    shown = subprocess.run(
        [sys.executable, "-m", "protoagent", "sessions", "show", session, "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    requested = [e for e in json.loads(shown.stdout)["events"] if e["type"] == "model.requested"]
    assert requested, "the model was never asked"


def test_models_command_shows_what_was_detected(llama_cpp_like: str, tmp_path: Path) -> None:
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "protoagent", "models", "--json", "--model", f"openai-compatible:{llama_cpp_like}#m"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    detected = json.loads(done.stdout)["detected"]
    assert detected["window"] == 8192 and detected["profile"] == "small"
    text = subprocess.run(
        [sys.executable, "-m", "protoagent", "models", "--model", f"openai-compatible:{llama_cpp_like}#m"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "context window 8192, profile small" in text.stdout
