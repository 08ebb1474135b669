"""What a sandboxed command can read, reach and tamper with, through the real CLI.

A hostile command tries to read the user's keys (``~/.ssh``, ``~/.aws``, ``~/.netrc``) and
another session's artifacts in the data home (whose ``skills`` stay readable); to connect to the user's SSH
agent and a Docker-like socket in the runtime folder; to plant a hook in a nested repository's
``.git`` and an agent file in an absent ``.protoagent``; and to chmod a file outside the
workspace. Under bubblewrap and Landlock every attempt fails (under Landlock, the launcher's
seccomp supervisor refuses the sockets and the chmod), while the workspace stays readable and
writable.
``--sandbox off`` is the control showing each probe can succeed.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from protoagent.testing import make_repo, tool_turn, write_script

from .support import cli, mode_env, skip_reason

PROBE = Path(__file__).with_name("secrets_probe.py")
SECRET = "canary-secret-7f3a"
GITDIR = "gitdir: ../../.git/modules/module"


@dataclass
class Machine:
    """A user's machine in miniature: a real home with keys, a data home, another repository,
    host sockets, and the workspace under test."""

    mode: str
    env: dict[str, str]
    repo: Path
    user: Path
    data: Path
    outside: Path


def plant(path: Path, text: str = SECRET) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n", encoding="utf-8")
    return path


@contextmanager
def listening(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(8)
    try:
        yield
    finally:
        server.close()


@pytest.fixture
def machine(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Machine]:
    mode = request.param
    if (reason := skip_reason(mode)) is not None:
        pytest.skip(reason)
    user, data = tmp_path / "user", tmp_path / "home"
    for rel in (".ssh/id_ed25519", ".aws/credentials", ".netrc"):
        plant(user / rel)
    plant(data / "artifacts" / "s_other" / "processes" / "p_1.log")
    plant(data / "skills" / "pdf" / "scripts" / "extract.py", "skill script")
    plant(tmp_path / "other-repo" / ".env")
    outside = plant(tmp_path / "outside" / "notes.txt", "outside")
    outside.chmod(0o600)
    repo = make_repo(tmp_path / "repo", {"probe/secrets_probe.py": PROBE.read_text(), "README.md": "probe\n"})
    make_repo(repo / "vendor" / "lib", {"lib.py": "VALUE = 1\n"})
    plant(repo / "vendor" / "module" / ".git", GITDIR)  # a submodule's .git file
    env = {**mode_env(tmp_path, mode), "HOME": str(user)}
    env["SSH_AUTH_SOCK"] = str(tmp_path / "agent" / "agent.sock")
    env["XDG_RUNTIME_DIR"] = str(tmp_path / "run")
    with ExitStack() as stack:
        stack.enter_context(listening(Path(env["SSH_AUTH_SOCK"])))
        stack.enter_context(listening(tmp_path / "run" / "docker.sock"))
        yield Machine(mode, env, repo, user, data, outside)


def plan(m: Machine) -> dict[str, dict[str, str]]:
    return {
        "read": {
            "ssh_key": str(m.user / ".ssh" / "id_ed25519"),
            "aws": str(m.user / ".aws" / "credentials"),
            "netrc": str(m.user / ".netrc"),
            "other_session": str(m.data / "artifacts" / "s_other" / "processes" / "p_1.log"),
            "workspace": str(m.repo / "README.md"),
            "user_skill": str(m.data / "skills" / "pdf" / "scripts" / "extract.py"),
        },
        "connect": {
            "ssh_agent": m.env["SSH_AUTH_SOCK"],
            "docker": str(Path(m.env["XDG_RUNTIME_DIR"]) / "docker.sock"),
        },
        "write": {
            "nested_hook": str(m.repo / "vendor" / "lib" / ".git" / "hooks" / "pre-commit"),
            "gitdir_file": str(m.repo / "vendor" / "module" / ".git"),
            "agent_file": str(m.repo / ".protoagent" / "agents" / "coding" / "architect.md"),
            "workspace_write": str(m.repo / "probe" / "out.txt"),
        },
        "chmod": {"outside_chmod": str(m.outside)},
    }


def run_probe(m: Machine, probes: dict[str, dict[str, str]], sandbox: str = "required") -> dict[str, str]:
    line = f"!python3 probe/secrets_probe.py '{json.dumps(probes)}'"
    result = cli(m.env, "run", "--repo", str(m.repo), "--approval", "auto", "--sandbox", sandbox, "--json", line)
    assert result.returncode == 0, result.stderr
    summary = str(json.loads(result.stdout)["summary"])
    assert "Traceback" not in result.stderr
    found = [line for line in summary.splitlines() if line.startswith("PROBE ")]
    assert found, f"the probe did not run: {summary}"
    return dict(json.loads(found[0].removeprefix("PROBE ")))


def tampered(m: Machine) -> dict[str, bool]:
    """What the host shows after the run, whatever the probe said."""
    return {
        "nested_hook": (m.repo / "vendor" / "lib" / ".git" / "hooks" / "pre-commit").exists(),
        "gitdir_file": (m.repo / "vendor" / "module" / ".git").read_text().strip() != GITDIR,
        "agent_file": (m.repo / ".protoagent" / "agents").exists(),
        "outside_chmod": stat.S_IMODE(m.outside.stat().st_mode) != 0o600,
    }


@pytest.mark.parametrize("machine", ["bwrap", "landlock"], indirect=True)
def test_sandboxed_command_cannot_read_secrets_or_tamper_with_git_and_protoagent(machine: Machine) -> None:
    probe = run_probe(machine, plan(machine))
    print(f"T7/T8 {machine.mode}: {probe}")
    for name in ("ssh_key", "aws", "netrc", "other_session"):
        assert probe[name].startswith("refused"), (name, probe[name])
    for name in ("nested_hook", "gitdir_file", "agent_file"):
        assert probe[name].startswith("refused"), (name, probe[name])
    assert probe["workspace"] == "probe" and probe["workspace_write"] == "wrote"
    assert probe["user_skill"] == "skill script", "the user's skills stay readable inside the hidden data home"
    host = tampered(machine)
    assert not host["nested_hook"] and not host["gitdir_file"] and not host["agent_file"]
    # Under Landlock, the launcher's seccomp supervisor refuses pathname sockets and chmod outside.
    assert probe["ssh_agent"].startswith("refused") and probe["docker"].startswith("refused")
    assert probe["outside_chmod"].startswith("refused") and not host["outside_chmod"]


@pytest.mark.parametrize("machine", ["off"], indirect=True)
def test_sandbox_off_is_the_control_where_every_probe_succeeds(machine: Machine) -> None:
    probe = run_probe(machine, plan(machine), sandbox="off")
    print(f"T7/T8 --sandbox off: {probe}")
    assert probe["ssh_key"] == SECRET and probe["other_session"] == SECRET
    assert probe["ssh_agent"] == "connected" and probe["docker"] == "connected"
    assert probe["nested_hook"] == probe["gitdir_file"] == probe["agent_file"] == "wrote"
    assert all(tampered(machine).values())


@pytest.mark.parametrize("machine", ["bwrap"], indirect=True)
def test_user_settings_hide_more_and_make_defaults_readable(machine: Machine, tmp_path: Path) -> None:
    settings = {"sandbox": {"hidden": [str(tmp_path / "other-repo" / ".env")], "readable": ["~/.aws"]}}
    plant(machine.data / "settings.json", json.dumps(settings))
    reads = {"other_env": str(tmp_path / "other-repo" / ".env"), "aws": str(machine.user / ".aws" / "credentials")}
    probe = run_probe(machine, {"read": reads})
    print(f"T7 settings: {probe}")
    assert probe["other_env"].startswith("refused") and probe["aws"] == SECRET


@pytest.mark.parametrize("machine", ["bwrap"], indirect=True)
def test_malformed_sandbox_settings_are_one_line_errors(machine: Machine) -> None:
    plant(machine.data / "settings.json", json.dumps({"sandbox": {"hidden": ["relative/path"]}}))
    result = cli(machine.env, "run", "--repo", str(machine.repo), "--approval", "auto", "!true")
    print(f"T7 malformed settings: exit {result.returncode}, {result.stderr.strip()!r}")
    assert result.returncode == 2 and "sandbox.hidden" in result.stderr and "is not absolute" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("machine", ["bwrap", "landlock"], indirect=True)
def test_model_command_cannot_create_an_absent_protoagent_agent_file(machine: Machine, tmp_path: Path) -> None:
    agent = ".protoagent/agents/coding/architect.md"
    argv = ["python3", "-c", f"import os; os.makedirs(os.path.dirname({agent!r})); open({agent!r}, 'w').write('x')"]
    script = write_script(tmp_path / "turns.jsonl", [tool_turn("execute_command", role="architect", argv=argv)])
    args = ["--model", f"scripted:{script}", "--repo", str(machine.repo), "--approval", "auto", "--json"]
    result = cli(machine.env, "run", *args, "--sandbox", "required", "--surface", "editing", "plant an agent")
    print(f"T8 model-created .protoagent: exit {result.returncode}, exists {(machine.repo / agent).exists()}")
    assert result.returncode in (0, 1, 3), result.stderr
    assert not (machine.repo / ".protoagent" / "agents").exists()


def test_an_absent_protoagent_in_a_read_only_checkout_does_not_stop_commands(tmp_path: Path) -> None:
    """No mount point can be made in a read-only checkout, and none is needed there."""
    if (reason := skip_reason("bwrap")) is not None:
        pytest.skip(reason)
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    source = make_repo(tmp_path / "source", {"README.md": "read only\n"})
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    if subprocess.run(["mount", "--bind", "-o", "ro", str(source), str(checkout)], capture_output=True).returncode:
        pytest.skip("cannot bind-mount here")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(checkout)], check=True, capture_output=True)
        env = mode_env(tmp_path, "bwrap")
        args = ["--repo", str(checkout), "--approval", "auto", "--sandbox", "required", "--json"]
        result = cli(env, "run", *args, "!cat README.md")
        summary = str(json.loads(result.stdout)["summary"])
        print(f"T8 read-only checkout: {summary!r}")
        assert "exit code: 0" in summary and "read only" in summary
        assert not (source / ".protoagent").exists()
    finally:
        subprocess.run(["umount", "-l", str(checkout)], check=False)


def test_landlock_without_git_keeps_top_level_files_creatable_but_not_protoagent(tmp_path: Path) -> None:
    """Landlock cannot leave out an absent name, so the root keeps every right but making folders
    and symlinks: new top-level files still work, ``.protoagent`` (a folder or a link) cannot appear."""
    if (reason := skip_reason("landlock")) is not None:
        pytest.skip(reason)
    repo = make_repo(tmp_path / "work", {"notes/a.txt": "a\n"}, git=False)
    line = (
        "!echo made > top.txt; echo made > notes/b.txt; mkdir -p .protoagent/agents; "
        "ln -s notes .protoagent; mkdir notes/sub && echo ok; ls"
    )
    env = mode_env(tmp_path, "landlock")
    result = cli(env, "run", "--repo", str(repo), "--approval", "auto", "--sandbox", "required", "--json", line)
    summary = str(json.loads(result.stdout)["summary"])
    print(f"T8 landlock without git: {summary!r}")
    assert (repo / "top.txt").read_text() == "made\n" and (repo / "notes" / "b.txt").exists()
    assert (repo / "notes" / "sub").is_dir() and "ok" in summary
    assert not os.path.lexists(repo / ".protoagent")


def test_the_runs_own_data_home_is_hidden_when_it_is_not_the_environments(tmp_path: Path) -> None:
    """A library caller (``protoagent batch``) names the data home in ``RunOptions``."""
    if (reason := skip_reason("bwrap")) is not None:
        pytest.skip(reason)
    import asyncio

    from protoagent.events import MemoryStore
    from protoagent.workflow.run import RunOptions, run_task

    data = tmp_path / "batch-home"
    secret = plant(data / "artifacts" / "s_other" / "processes" / "p_1.log")
    repo = make_repo(tmp_path / "repo", {"README.md": "probe\n"})
    options = RunOptions(
        repo=repo,
        model="scripted:inline",
        store=MemoryStore(),
        approval="auto",
        sandbox="required",
        data_home=data,
        artifacts_root=data / "artifacts",
    )
    report = asyncio.run(run_task(f"!cat {secret}; echo status $?", options))
    print(f"T7 run's own data home: {report.summary!r}")
    assert SECRET not in report.summary and "status 1" in report.summary


@pytest.mark.parametrize("machine", ["bwrap", "landlock"], indirect=True)
def test_a_session_store_named_by_protoagent_store_is_hidden_too(machine: Machine, tmp_path: Path) -> None:
    store = tmp_path / "stores" / "sessions.sqlite"
    store.parent.mkdir()
    machine.env["PROTOAGENT_STORE"] = str(store)
    probe = run_probe(machine, {"read": {"store": str(store)}})
    print(f"T7 {machine.mode} PROTOAGENT_STORE: {probe}")
    assert store.exists() and probe["store"].startswith("refused")
