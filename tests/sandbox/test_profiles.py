"""Sandbox selection and profiles: fail closed, say why, confine an unprivileged user too."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from protoagent.errors import ConfigError
from protoagent.processes.sandbox import (
    BACKENDS_ENV,
    BwrapSandbox,
    SandboxScope,
    Unconfined,
    asks_each_command,
    sandbox_notice,
    select_sandbox,
)
from protoagent.tools.approvals import ApprovalRequest, ApprovalService


def test_required_sandbox_refuses_when_no_backend_is_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BACKENDS_ENV, "")
    with pytest.raises(ConfigError, match="--sandbox required, but no sandbox is available"):
        select_sandbox("required")


def test_auto_without_a_backend_asks_each_command_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BACKENDS_ENV, "")
    sandbox = select_sandbox("auto")
    assert isinstance(sandbox, Unconfined) and asks_each_command(sandbox)
    assert "every command asks for approval" in str(sandbox_notice(sandbox))
    off = select_sandbox("off")
    assert not asks_each_command(off) and "unconfined" in str(sandbox_notice(off))


def test_unknown_mode_and_missing_grant_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown sandbox mode 'sometimes'"):
        select_sandbox("sometimes")
    with pytest.raises(ConfigError, match="is not an existing folder"):
        select_sandbox("auto", writable=[tmp_path / "missing"])


def test_auto_approval_never_runs_an_unconfined_command_alone() -> None:
    service = ApprovalService("auto")
    request = ApprovalRequest("c1", "shell", "execute", "run: touch /tmp/x", inside_workspace=False)
    decision = asyncio.run(service.decide(request))
    print(f"auto policy, no sandbox: allow={decision.allow} ({decision.reason})")
    assert not decision.allow and "only inside a sandbox" in decision.reason


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder an unprivileged user can reach (pytest's tmp_path is private to root), outside
    ``/tmp`` so the sandbox sees it read-only rather than not at all."""
    folder = Path(tempfile.mkdtemp(prefix="protoagent-sandbox-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None))
    folder.chmod(0o777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_bwrap_confines_an_unprivileged_user(shared_dir: Path) -> None:
    bwrap, setpriv = shutil.which("bwrap"), shutil.which("setpriv")
    if bwrap is None or setpriv is None or os.geteuid() != 0:
        pytest.skip("needs bwrap, setpriv and root to switch to an unprivileged user")
    for name in ("root", "home", "tmp", "outside"):
        (shared_dir / name).mkdir(mode=0o777)
        (shared_dir / name).chmod(0o777)
    scope = SandboxScope(shared_dir / "root", shared_dir / "home", shared_dir / "tmp", shared_dir / "root")
    line = f"touch {shared_dir}/root/inside; touch {shared_dir}/outside/escape; echo $?"
    argv = BwrapSandbox(bwrap).wrap(("/bin/sh", "-c", line), scope)
    user = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    result = subprocess.run([*user, *argv], capture_output=True, text=True, timeout=30, check=False)
    print(f"bwrap as uid 65534: exit {result.returncode}, {result.stdout.strip()!r} {result.stderr.strip()!r}")
    assert result.stdout.strip() == "1" and "Read-only file system" in result.stderr, result.stderr
    assert (shared_dir / "root" / "inside").exists() and not (shared_dir / "outside" / "escape").exists()
