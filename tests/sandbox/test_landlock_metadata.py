"""Metadata changes and host sockets outside the writable set, attacked through the real CLI.

Landlock has no rights for chmod, chown, utime or extended attributes, nor (before ABI 8) for
connecting to a pathname UNIX socket; the Landlock launcher's seccomp supervisor answers those
calls. A hostile command attacks a canary file outside the workspace by path, through an open
descriptor, through a directory descriptor, a workspace symlink, a ``/proc/self/cwd`` link
(resolved as the caller's, not the supervisor's), ``/dev/fd``, another thread and a child
process, and through the 32-bit x86 call table (``int 0x80``); it connects and sends to host
sockets and tries ``io_uring``. Under Landlock and
bubblewrap every attack fails and the host shows the canary unchanged, while the same calls on
the workspace's own files and sockets work; ``--sandbox off`` is the control.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from protoagent.testing import make_repo

from .support import cli, mode_env, skip_reason

PROBE = Path(__file__).with_name("metadata_probe.py")
MTIME = 1_000_000
OUTSIDE_ATTACKS = (
    "chmod",
    "utime",
    "setxattr",
    "chown",
    "fchmod",
    "futimens",
    "fsetxattr",
    "at_dirfd",
    "through_symlink",
    "proc_self_cwd",
    "dev_fd",
    "from_thread",
    "from_child",
    "connect",
    "sendto",
    "git_chmod",
)


@dataclass
class Host:
    mode: str
    env: dict[str, str]
    repo: Path
    outside: Path
    server: socket.socket
    dgram: socket.socket

    def plan(self) -> dict[str, str]:
        return {
            "outside": str(self.outside),
            "inside": str(self.repo / "inside.txt"),
            "git_file": str(self.repo / ".git" / "config"),
            "socket": self.env["SSH_AUTH_SOCK"],
            "dgram": str(Path(self.env["SSH_AUTH_SOCK"]).with_name("log.sock")),
            "workspace": str(self.repo),
        }

    def tampered(self) -> dict[str, bool]:
        """What the host shows after the run, whatever the probe said."""
        info = self.outside.stat()
        try:
            self.server.accept()[0].close()
            accepted = True
        except BlockingIOError:
            accepted = False
        try:
            self.dgram.recv(64)
            received = True
        except BlockingIOError:
            received = False
        return {
            "mode": stat.S_IMODE(info.st_mode) != 0o600,
            "mtime": int(info.st_mtime) != MTIME,
            "xattr": "user.planted" in os.listxattr(self.outside),
            "git_mode": stat.S_IMODE((self.repo / ".git" / "config").stat().st_mode) != 0o644,
            "accepted": accepted,
            "received": received,
        }


@pytest.fixture
def host(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Host]:
    mode = request.param
    if (reason := skip_reason(mode)) is not None:
        pytest.skip(reason)
    outside = tmp_path / "outside" / "notes.txt"
    outside.parent.mkdir()
    outside.write_text("canary\n")
    outside.chmod(0o600)
    os.utime(outside, (MTIME, MTIME))
    repo = make_repo(tmp_path / "repo", {"probe/metadata_probe.py": PROBE.read_text(), "inside.txt": "mine\n"})
    (repo / ".git" / "config").chmod(0o644)
    env = mode_env(tmp_path, mode)
    agent = tmp_path / "agent"
    agent.mkdir()
    env["SSH_AUTH_SOCK"] = str(agent / "agent.sock")  # its folder is where bubblewrap looks too
    server = socket.socket(socket.AF_UNIX)
    server.bind(env["SSH_AUTH_SOCK"])
    server.listen(8)
    server.setblocking(False)
    dgram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    dgram.bind(str(agent / "log.sock"))
    dgram.setblocking(False)
    try:
        yield Host(mode, env, repo, outside, server, dgram)
    finally:
        server.close()
        dgram.close()


def run_probe(host: Host, sandbox: str) -> dict[str, str]:
    line = f"!python3 probe/metadata_probe.py '{json.dumps(host.plan())}'"
    args = ["--repo", str(host.repo), "--approval", "auto", "--sandbox", sandbox, "--json", line]
    result = cli(host.env, "run", *args)
    assert result.returncode == 0, result.stderr
    summary = str(json.loads(result.stdout)["summary"])
    found = [line for line in summary.splitlines() if line.startswith("PROBE ")]
    assert found, f"the probe did not run: {summary}"
    return dict(json.loads(found[0].removeprefix("PROBE ")))


@pytest.mark.parametrize("host", ["landlock", "bwrap"], indirect=True)
def test_sandboxed_command_cannot_change_metadata_or_reach_sockets_outside(host: Host) -> None:
    probe = run_probe(host, "required")
    print(f"T7 metadata {host.mode}: {probe}")
    for name in OUTSIDE_ATTACKS:
        assert probe[name].startswith("refused"), (name, probe[name])
    if host.mode == "landlock":  # io_uring would bypass the filter; bubblewrap needs none
        assert probe["io_uring"].startswith("refused"), probe["io_uring"]
    if os.uname().machine == "x86_64":  # the 32-bit call table, reached with int 0x80
        assert probe["i386_chmod"].startswith("refused"), probe["i386_chmod"]
    assert probe["inside"] == "changed", "metadata of the workspace's own files still changes"
    assert probe["inside_socket"] == "connected", "the workspace's own sockets are still reached"
    assert not any(host.tampered().values()), host.tampered()


@pytest.mark.parametrize("host", ["off"], indirect=True)
def test_sandbox_off_is_the_control_where_metadata_attacks_succeed(host: Host) -> None:
    probe = run_probe(host, "off")
    print(f"T7 metadata --sandbox off: {probe}")
    for name in ("chmod", "utime", "setxattr", "fchmod", "proc_self_cwd", "dev_fd", "connect", "sendto"):
        assert not probe[name].startswith("refused"), (name, probe[name])
    if os.uname().machine == "x86_64":
        assert probe["i386_chmod"] == "changed", "int 0x80 reaches the 32-bit chmod here"
    tampered = host.tampered()
    assert tampered["mode"] and tampered["mtime"] and tampered["xattr"] and tampered["accepted"]


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_the_filter_assembles_for_both_machines_and_aarch64_has_no_legacy_calls(arch: str) -> None:
    from protoagent.processes import seccomp_filter

    code = seccomp_filter.program(arch)
    supervised = seccomp_filter.supervised(arch)
    numbers = seccomp_filter.NUMBERS[arch]
    assert len(code) % 8 == 0 and len(code) // 8 < 256
    assert numbers["connect"] in supervised and numbers["utimensat"] in supervised
    assert ("chmod" in numbers) == (arch == "x86_64"), "aarch64 has only the *at calls"


@pytest.mark.parametrize("host", ["landlock"], indirect=True)
def test_the_supervising_launcher_reports_the_commands_own_exit_status(host: Host) -> None:
    args = ["--repo", str(host.repo), "--approval", "auto", "--sandbox", "required", "--json"]
    result = cli(host.env, "run", *args, "!sh -c 'echo before; exit 7'")
    summary = str(json.loads(result.stdout)["summary"])
    print(f"T7 landlock exit status: {summary!r}")
    assert "exit code: 7" in summary and "before" in summary


DENY_PIDFD_GETFD = """
import ctypes, errno, os, sys
from protoagent.processes import seccomp_filter as f
bpf = f._Program()
bpf.load(f.OFFSET_NR)
bpf.jump_if(f.JEQ_K, 438, "deny")  # pidfd_getfd, as some container profiles refuse it
bpf.ret(f.RET_ALLOW)
bpf.label("deny")
bpf.ret(f.RET_ERRNO | errno.EPERM)
code = bpf.assemble()
buffer = ctypes.create_string_buffer(code, len(code))
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0
prog = f._Fprog(len(code) // 8, ctypes.addressof(buffer))
assert libc.syscall(f.NUMBERS[f.machine()]["seccomp"], 1, 0, ctypes.byref(prog)) == 0
os.execv(sys.executable, [sys.executable, "-m", "protoagent", *sys.argv[1:]])
"""


@pytest.mark.parametrize("host", ["landlock"], indirect=True)
def test_landlock_without_a_working_supervisor_counts_as_no_sandbox(host: Host) -> None:
    """Where the supervisor cannot take the listener (a container refusing ``pidfd_getfd``),
    commands must not all fail: Landlock is unavailable, and ``auto`` asks before each command."""
    args = ["run", "--repo", str(host.repo), "--approval", "auto", "--json", "!echo ran"]
    done = subprocess.run(
        [sys.executable, "-c", DENY_PIDFD_GETFD, *args], env=host.env, capture_output=True, text=True, timeout=120
    )
    print(f"T7 landlock without supervisor: exit {done.returncode}, {done.stderr.strip()[:160]!r}")
    assert "Traceback" not in done.stderr and "could not supervise" not in done.stdout + done.stderr
    assert "no sandbox is available" in done.stdout + done.stderr
    required = subprocess.run(
        [sys.executable, "-c", DENY_PIDFD_GETFD, *args[:-2], "--sandbox", "required", "!echo ran"],
        env=host.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert required.returncode == 2 and "seccomp user notification" in required.stderr
