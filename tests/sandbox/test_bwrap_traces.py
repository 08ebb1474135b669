"""Bubblewrap leaves no trace in the workspace and starts even when a host socket vanishes.

An absent ``.protoagent`` is protected by an empty read-only tmpfs, whose mount point bwrap
makes on the host. The launcher removes it once the last command relying on it has ended, and
never while another still runs (removing a mount point detaches that command's protection).
A host socket removed between the harness's search and bwrap's mount made bwrap fail; the
launcher runs it again without that cover.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from protoagent.processes.sandbox import BwrapSandbox, SandboxScope, select_sandbox
from protoagent.testing import make_repo

from .support import cli, mode_env, skip_reason


@pytest.fixture(autouse=True)
def needs_bwrap() -> None:
    if (reason := skip_reason("bwrap")) is not None:
        pytest.skip(reason)


def bwrap_profile(tmp_path: Path) -> tuple[BwrapSandbox, SandboxScope]:
    repo = make_repo(tmp_path / "repo", {"README.md": "traces\n"})
    session = tmp_path / "session"
    for name in ("home", "tmp"):
        (session / name).mkdir(parents=True)
    sandbox = select_sandbox("required", hidden=(), data_home=tmp_path / "data")
    assert isinstance(sandbox, BwrapSandbox)
    return sandbox, SandboxScope(repo, session / "home", session / "tmp", repo)


def test_a_repository_without_protoagent_has_none_after_a_sandboxed_command(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "no protoagent here\n"})
    env = mode_env(tmp_path, "bwrap")
    line = "!ls -a; mkdir -p .protoagent/agents/coding; echo status $?"
    result = cli(env, "run", "--repo", str(repo), "--approval", "auto", "--sandbox", "required", "--json", line)
    summary = str(json.loads(result.stdout)["summary"])
    print(f"T8 trace: {summary!r}")
    assert ".protoagent" in summary, "inside the sandbox the protected folder exists"
    assert "status 1" in summary, "and cannot be written"
    assert not os.path.lexists(repo / ".protoagent"), "no empty .protoagent is left behind"


def test_an_empty_protoagent_stays_while_another_command_relies_on_it(tmp_path: Path) -> None:
    """The first command's end must not remove the mount point under a command still running:
    that would detach its protection, and it could then create ``.protoagent``."""
    sandbox, scope = bwrap_profile(tmp_path)
    agent = scope.root / ".protoagent" / "agents"
    late_write = f"sleep 2; mkdir {agent} && echo planted || echo refused"
    running = subprocess.Popen(sandbox.wrap(("/bin/sh", "-c", late_write), scope), stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 10
    while not (scope.root / ".protoagent").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    quick = subprocess.run(sandbox.wrap(("/bin/true",), scope), capture_output=True, text=True, timeout=30)
    assert quick.returncode == 0, quick.stderr
    assert (scope.root / ".protoagent").is_dir(), "kept while the first command runs"
    output, _ = running.communicate(timeout=30)
    print(f"T8 concurrent: {output!r}")
    assert output.strip() == "refused" and not agent.exists()
    assert not os.path.lexists(scope.root / ".protoagent"), "the last command out removed it"


def test_a_protoagent_the_user_made_is_kept(tmp_path: Path) -> None:
    sandbox, scope = bwrap_profile(tmp_path)
    (scope.root / ".protoagent").mkdir()
    done = subprocess.run(sandbox.wrap(("/bin/true",), scope), capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert (scope.root / ".protoagent").is_dir(), "an empty .protoagent that was there stays"


def test_a_host_socket_removed_after_the_search_does_not_stop_the_command(tmp_path: Path) -> None:
    """The search runs when the argv is built; the socket goes before bwrap mounts over it."""
    sandbox, scope = bwrap_profile(tmp_path)
    agent = tmp_path / "agent" / "agent.sock"
    agent.parent.mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(agent))
    server.listen(1)
    os.environ["SSH_AUTH_SOCK"] = str(agent)
    try:
        argv = sandbox.wrap(("/bin/sh", "-c", "echo started; exit 5"), scope)
    finally:
        del os.environ["SSH_AUTH_SOCK"]
        server.close()
        agent.unlink()
    assert str(agent) in argv, "the socket was found by the search"
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    print(f"T7 vanished socket: exit {done.returncode}, {done.stdout!r}, {done.stderr!r}")
    assert done.returncode == 5 and done.stdout == "started\n", "the command ran once, with its own status"


def test_a_hidden_file_removed_before_the_mount_does_not_stop_the_command(tmp_path: Path) -> None:
    _, scope = bwrap_profile(tmp_path)
    secret = tmp_path / "user" / ".netrc"
    secret.parent.mkdir()
    secret.write_text("machine example password canary\n")
    sandbox = select_sandbox("required", hidden=(secret,), data_home=tmp_path / "data")
    argv = sandbox.wrap(("/bin/sh", "-c", f"cat {secret} 2>/dev/null; echo started"), scope)
    secret.unlink()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    print(f"T7 vanished hidden file: exit {done.returncode}, {done.stdout!r}")
    assert done.returncode == 0 and done.stdout == "started\n"
