"""What a sandboxed command may not see or change: hidden paths (the user's secrets and
ProtoAgent's data home), host UNIX socket files, and the workspace's protected entries.

Hidden by default: the credential folders and files listed in ``DEFAULT_HIDDEN_IN_HOME`` (under
the user's real home), browser profiles, ``/run/user`` (per-user runtime folders: D-Bus, keyring
and agent sockets), the data home (``$PROTOAGENT_HOME`` or ``~/.protoagent``: the session
store and every session's artifacts) and a SQLite store named by ``$PROTOAGENT_STORE``. The
user's own ``settings.json`` in the data home changes that list, never a repository file::

    {"sandbox": {"hidden": ["~/work/other-repo/.env"], "readable": ["~/.docker"]}}

``hidden`` adds paths; ``readable`` takes paths off the default list, and a readable path inside
a hidden folder stays readable there (the data home's ``skills`` folder is, by default, so a
skill's scripts can run). The workspace, the session's own folders and ``--writable`` grants are
never hidden (a hidden folder that holds one of them is hidden around it); a hidden path inside
the workspace stays hidden.

Protected (readable, never changed): every ``.git`` in the workspace (nested repositories and
submodules included, as found when the command starts) and ``.protoagent`` whether or not it
exists.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from protoagent.errors import ConfigError
from protoagent.events.stores import is_postgres_url
from protoagent.settings import environment

SETTINGS_FILE = "settings.json"
DEFAULT_HIDDEN_IN_HOME = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".netrc",
    ".git-credentials",
    ".docker",
    ".kube",
    ".password-store",
    ".pypirc",
    ".npmrc",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".local/share/keyrings",
    ".mozilla",
    ".thunderbird",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
)
"""Paths under the user's home a command never sees (credentials, keys, browser profiles)."""
DEFAULT_HIDDEN_SYSTEM = ("/run/user",)
SOCKET_FOLDERS = {"/run": 3, "/var/run": 3, "/tmp": 2, "/var/tmp": 2}
"""Where host UNIX sockets live, and how many levels down they are looked for; with
``$XDG_RUNTIME_DIR`` and ``$SSH_AUTH_SOCK``'s folder (``SOCKET_SCAN_DEPTH``). The temp folders are
searched only two levels down (``/tmp/.X11-unix/X0``, ``/tmp/ssh-*/agent.*``): deeper sockets there
are short-lived ones of programs' own temp folders. One removed between the search and the
command's start made bubblewrap fail to cover it; its launcher (``bwrap_exec``) now runs bwrap
again without that cover."""
SOCKET_SCAN_DEPTH = 3
SOCKET_SCAN_ENTRIES = 20_000
"""Entries looked at per command when searching for host sockets (past it the rest are not hidden)."""
PROTECT_SCAN_FOLDERS = 50_000
"""Workspace folders searched for nested ``.git`` entries."""
PROTECT_SCAN_TTL_S = 30.0
"""How long one search of a workspace serves later commands (a large tree takes a while)."""
_found_git: dict[Path, tuple[float, list[Path]]] = {}
_found_lock = threading.Lock()
PROTECTED_NAMES = (".git", ".protoagent")


def within(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or lies beneath it (both absolute and normalised)."""
    return path == folder or folder in path.parents


def data_home(environ: Mapping[str, str] | None = None) -> Path:
    """ProtoAgent's data home: ``$PROTOAGENT_HOME`` or ``~/.protoagent``."""
    return environment(environ).home


def default_hidden(home: Path, data: Path, environ: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The built-in deny list for a user whose real home is ``home`` and data home ``data``; a
    SQLite session store named by ``$PROTOAGENT_STORE`` outside the data home is hidden too."""
    store = environment(environ).store or ""
    files = []
    if store and not is_postgres_url(store):
        base = Path(store).expanduser()
        files = [base, base.with_name(f"{base.name}-wal"), base.with_name(f"{base.name}-shm")]
    return (*(home / rel for rel in DEFAULT_HIDDEN_IN_HOME), *map(Path, DEFAULT_HIDDEN_SYSTEM), data, *files)


def configured_hiding(data: Path | None = None) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """``(hidden, readable)`` in force: the default deny list less the user's ``sandbox.readable``
    plus their ``sandbox.hidden``, and the readable paths that lie inside a hidden folder (the data
    home's ``skills`` and the user's own). ``ConfigError`` names a malformed entry. Paths are
    absolute and resolved."""
    from protoagent.settings import load_settings

    data = data_home() if data is None else data
    section = load_settings(data).get("sandbox", {})
    if not isinstance(section, dict):
        raise ConfigError(f"{data / SETTINGS_FILE}: 'sandbox' must be an object; fix or remove it")
    readable = _setting_paths(section, "readable", data)
    chosen = [p for p in map(_resolved, default_hidden(Path.home(), data)) if p not in readable]
    hidden = tuple(dict.fromkeys([*chosen, *_setting_paths(section, "hidden", data)]))
    inside = [p for p in (_resolved(data / "skills"), *readable) if any(p != h and within(p, h) for h in hidden)]
    return hidden, tuple(dict.fromkeys(inside))


def _setting_paths(section: dict[str, Any], key: str, data: Path) -> list[Path]:
    raw = section.get(key, [])
    where = f"{data / SETTINGS_FILE}: sandbox.{key}"
    if not isinstance(raw, list) or not all(isinstance(item, str) and item.strip() for item in raw):
        raise ConfigError(f"{where} must be a list of paths; fix or remove it")
    paths = []
    for item in raw:
        path = Path(item).expanduser()
        if not path.is_absolute():
            raise ConfigError(f"{where}: {item!r} is not absolute; write it as '/…' or '~/…'")
        paths.append(_resolved(path))
    return paths


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))


def to_hide(hidden: Iterable[Path], kept: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """Existing hidden paths as (those holding a kept path, the rest); a kept path itself is
    never hidden."""
    around: list[Path] = []
    rest: list[Path] = []
    for path in dict.fromkeys(hidden):
        if path in kept or not os.path.lexists(path):
            continue
        (around if any(within(k, path) for k in kept) else rest).append(path)
    return around, rest


def host_sockets(kept: Sequence[Path], environ: Mapping[str, str] | None = None) -> list[Path]:
    """UNIX socket files in the usual host folders (``SOCKET_FOLDERS``), outside ``kept`` paths,
    at most ``SOCKET_SCAN_ENTRIES`` entries looked at in all."""
    env = os.environ if environ is None else environ
    folders = dict(SOCKET_FOLDERS)
    for extra in (env.get("XDG_RUNTIME_DIR", ""), os.path.dirname(env.get("SSH_AUTH_SOCK", ""))):
        if extra and os.path.isabs(extra):
            folders[extra] = SOCKET_SCAN_DEPTH
    found: list[Path] = []
    budget = [SOCKET_SCAN_ENTRIES]
    scanned: set[str] = set()
    for folder, depth in folders.items():
        real = os.path.realpath(folder)
        if real not in scanned:
            scanned.add(real)
            _scan_sockets(Path(real), depth, kept, found, budget)
    return list(dict.fromkeys(found))


def _scan_sockets(folder: Path, depth: int, kept: Sequence[Path], found: list[Path], budget: list[int]) -> None:
    if any(within(folder, k) for k in kept):
        return
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        budget[0] -= 1
        if budget[0] < 0:
            return
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        if stat.S_ISSOCK(mode):
            found.append(Path(entry.path))
        elif stat.S_ISDIR(mode) and depth > 1:
            _scan_sockets(Path(entry.path), depth - 1, kept, found, budget)


def protected_paths(root: Path) -> list[Path]:
    """``root/.protoagent`` (present or not) and every ``.git`` beneath ``root``; a protected
    entry that is a symlink is given with its resolved target too (unless that holds the root).
    A ``.git`` made after the search (at most ``PROTECT_SCAN_TTL_S`` old) is not listed: one a
    command made is its own, not the user's."""
    now = time.monotonic()
    with _found_lock:
        cached = _found_git.get(root)
    if cached is None or now - cached[0] > PROTECT_SCAN_TTL_S:
        cached = (now, _find_git(root))
        with _found_lock:
            _found_git[root] = cached
    found = [root / ".protoagent", *(path for path in cached[1] if os.path.lexists(path))]
    targets = [_resolved(p) for p in found if os.path.islink(p)]
    return list(dict.fromkeys([*found, *(t for t in targets if not within(root, t))]))


def _find_git(root: Path) -> list[Path]:
    """Every ``.git`` beneath ``root``. Installed packages are not searched: ``node_modules`` and a
    virtual environment, whose only repositories are pip's editable checkouts in ``src/``."""
    found: list[Path] = []
    pending, folders = [root], 0
    while pending and folders < PROTECT_SCAN_FOLDERS:
        folder = pending.pop()
        folders += 1
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        if folder != root and any(entry.name == "pyvenv.cfg" for entry in entries):
            pending.extend(Path(entry.path) for entry in _subfolders(folder / "src"))
            continue
        for entry in entries:
            if entry.name == ".git":
                found.append(Path(entry.path))
            elif entry.name != "node_modules" and entry.is_dir(follow_symlinks=False):
                pending.append(Path(entry.path))
    return found


def _subfolders(folder: Path) -> list[os.DirEntry[str]]:
    try:
        return [entry for entry in os.scandir(folder) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return []
