"""T2: sandbox escape probes through the real CLI, under each ``--sandbox`` value.

One untrusted command (a person's ``!command``, and a model's ``execute_command``) tries to
write outside the workspace and into ``.git``, read the harness's environment (a canary),
connect to a server on loopback, signal the harness, and leave a ``setsid`` double-forked
process behind. With a sandbox every attempt fails; ``required`` refuses to run without one;
``auto`` without one asks (and, with nobody to ask, runs nothing); ``off`` is the control that
shows each probe can succeed.
"""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path
from typing import Any

import pytest

from protoagent.testing import make_repo, tool_turn, write_script

from .support import (
    CANARY_NAME,
    cli,
    counting_server,
    kill_marked,
    marked_processes,
    mode_env,
    skip_reason,
)

PROBE = Path(__file__).with_name("probe.py")


def probe_repo(tmp_path: Path) -> tuple[Path, Path]:
    repo = make_repo(tmp_path / "repo", {"probe/probe.py": PROBE.read_text(), "README.md": "probe\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    return repo, outside


def escapes(repo: Path, outside: Path, report: dict[str, object], accepted: list[int], marker: str) -> dict[str, int]:
    """Each probe's escape, judged on the host where it can be, else from the probe's report."""
    time.sleep(2)  # a detached process must be gone 2 s after the run
    return {
        "write_outside": int((outside / "escape").exists()),
        "write_git": int((repo / ".git" / "escape").exists()),
        "read_environ": int(int(str(report.get("read_environ", 0))) > 0),
        "network": len(accepted),
        "signal_harness": int(int(str(report.get("signal_harness", 0))) > 0),
        "detach": len(marked_processes(marker)),
    }


def probe_report(output: str) -> dict[str, object]:
    for line in output.splitlines():
        if line.startswith("PROBE "):
            return dict(json.loads(line.removeprefix("PROBE ")))
    return {}


def run_probes(tmp_path: Path, mode: str, sandbox: str) -> tuple[dict[str, int], dict[str, object], str]:
    reason = skip_reason(mode)
    if reason is not None:
        pytest.skip(reason)
    repo, outside = probe_repo(tmp_path)
    marker = f"escape-marker-{secrets.token_hex(6)}"
    env = {**mode_env(tmp_path, mode), CANARY_NAME: secrets.token_hex(8)}
    with counting_server() as (port, accepted):
        try:
            command = f"!python3 probe/probe.py {outside} {port} {marker}"
            result = cli(env, "run", "--repo", str(repo), "--approval", "auto", "--sandbox", sandbox, "--json", command)
            report = json.loads(result.stdout)
            found = escapes(repo, outside, probe_report(report["summary"]), accepted, marker)
        finally:
            kill_marked(marker)
    assert env[CANARY_NAME] not in result.stdout + result.stderr
    return found, report, result.stderr


@pytest.mark.parametrize(("mode", "sandbox"), [("bwrap", "required"), ("bwrap", "auto"), ("landlock", "auto")])
def test_sandbox_confines_every_escape_probe(tmp_path: Path, mode: str, sandbox: str) -> None:
    found, report, _ = run_probes(tmp_path, mode, sandbox)
    print(f"T2 {mode} --sandbox {sandbox}: {sum(found.values())} escapes {found}")
    probe = probe_report(str(report["summary"]))
    assert probe.get("detach") == "started", f"the probe did not run: {report['summary']}"
    assert found == dict.fromkeys(found, 0)


def test_auto_without_a_sandbox_asks_and_nothing_runs_unapproved(tmp_path: Path) -> None:
    found, report, stderr = run_probes(tmp_path, "none", "auto")
    print(f"T2 no sandbox --sandbox auto: {sum(found.values())} escapes {found}")
    assert found == dict.fromkeys(found, 0)
    assert "sandbox" in str(report["summary"]) and "did not run" in str(report["summary"])
    assert stderr.count("no sandbox is available") == 1  # said once


def test_required_refuses_to_run_without_a_sandbox(tmp_path: Path) -> None:
    repo, outside = probe_repo(tmp_path)
    env = mode_env(tmp_path, "none")
    result = cli(env, "run", "--repo", str(repo), "--approval", "auto", "--sandbox", "required", "!touch ../outside/x")
    print(f"T2 no sandbox --sandbox required: exit {result.returncode}, {result.stderr.strip()!r}")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "bubblewrap" in result.stderr
    assert "Traceback" not in result.stderr and not list(outside.iterdir())


def test_sandbox_off_is_unconfined_but_detached_processes_still_end(tmp_path: Path) -> None:
    """The control: with the sandbox off the probes can succeed, so the checks above can fail."""
    found, _, stderr = run_probes(tmp_path, "off", "off")
    print(f"T2 --sandbox off: {sum(found.values())} escapes {found}")
    assert found["write_outside"] == 1 and found["network"] == 1 and found["read_environ"] == 1
    assert found["detach"] == 0  # the harness adopted it (subreaper) and stopped it at the end
    assert "unconfined" in stderr


def test_model_commands_run_in_the_same_sandbox(tmp_path: Path) -> None:
    if (reason := skip_reason("bwrap")) is not None:
        pytest.skip(reason)
    repo, outside = probe_repo(tmp_path)
    marker = f"escape-marker-{secrets.token_hex(6)}"
    with counting_server() as (port, accepted):
        argv = ["python3", "probe/probe.py", str(outside), str(port), marker]
        script = write_script(tmp_path / "turns.jsonl", [tool_turn("execute_command", role="architect", argv=argv)])
        env = {**mode_env(tmp_path, "bwrap"), CANARY_NAME: secrets.token_hex(8)}
        try:
            args = ["--model", f"scripted:{script}", "--repo", str(repo), "--approval", "auto", "--json"]
            result = cli(env, "run", *args, "--sandbox", "required", "--surface", "editing", "run the probe")
            events = sessions_events(env)
            output = next(str(e["payload"]["output"]) for e in events if e["type"] == "tool.ended")
            found = escapes(repo, outside, probe_report(output), accepted, marker)
        finally:
            kill_marked(marker)
    print(f"T2 bwrap execute_command: {sum(found.values())} escapes {found}")
    assert result.returncode in (0, 1, 3), result.stderr
    assert "PROBE" in output and found == dict.fromkeys(found, 0)


def sessions_events(env: dict[str, str]) -> list[dict[str, Any]]:
    listed = json.loads(cli(env, "sessions", "list", "--json").stdout)
    shown = json.loads(cli(env, "sessions", "show", listed[-1]["session_id"], "--json").stdout)
    return list(shown["events"])


def test_network_flag_and_writable_grant_open_exactly_what_they_name(tmp_path: Path) -> None:
    if (reason := skip_reason("bwrap")) is not None:
        pytest.skip(reason)
    repo, outside = probe_repo(tmp_path)
    granted = tmp_path / "granted"
    granted.mkdir()
    env = mode_env(tmp_path, "bwrap")
    with counting_server() as (port, accepted):
        connect = f"import socket; socket.create_connection(('127.0.0.1', {port}))"
        line = f'!touch {granted}/ok {outside}/no; python3 -c "{connect}"'
        args = ["--approval", "auto", "--sandbox", "required", "--network", "--writable", str(granted), "--json"]
        result = cli(env, "run", "--repo", str(repo), *args, line)
        time.sleep(0.2)
    print(f"T2 bwrap --network --writable: {len(accepted)} connections, granted file {(granted / 'ok').exists()}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(accepted) == 1 and (granted / "ok").exists() and not (outside / "no").exists()
