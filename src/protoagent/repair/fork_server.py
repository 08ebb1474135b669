"""The fork server of a guided repair's pytest checks: its source runs as ``<python> -c SOURCE``.

Run by ``repair.fork_checks`` through the session's process registry, inside the run's sandbox,
with the check's interpreter, cwd and environment. It imports pytest and runs one warm-up
session over an empty folder (no workspace conftest), so its plugins and what they import are
loaded once, then reads one
JSON request per line from the requests FIFO: ``{"id": n, "args": [...], "output": path}``.
For each it forks a child that drops every module loaded from the workspace (so the candidate's
files are imported fresh from disk), points stdout and stderr at ``output`` and runs
``pytest.main(args)`` as ``python -m pytest`` would; the child's exit status (negative: the
signal that ended it) is written back as ``{"id": n, "status": code}``. The children stay in the
server's process group, so stopping the server's group stops them. End of the requests FIFO
ends the server. Only the standard library and pytest are used: the interpreter is the
project's, which need not have ProtoAgent installed.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def preload(args: list[str], empty: str) -> Any:
    """Import pytest and whatever one session imports (its plugins, built-in and installed, and what
    they import as late as the end of a session): one warm-up session over the empty folder
    ``empty``, without the workspace's conftest files and with the check's own ``-p`` options."""
    import pytest

    plugins = [a for i, a in enumerate(args) if a.startswith("-p") or (i > 0 and args[i - 1] == "-p")]
    ini = os.path.join(empty, "pytest.ini")
    with open(ini, "w", encoding="utf-8") as handle:
        handle.write("[pytest]\n")
    path = list(sys.path)
    warm_up = [*plugins, "-q", "--noconftest", "-c", ini, "--rootdir", empty, empty]
    try:
        pytest.main(warm_up)
    except Exception:  # a plugin the warm-up could not load: each child loads it again and reports it
        pass
    finally:
        sys.path[:] = path
        sys.stdout.flush()  # a child must not inherit the warm-up's buffered output
        sys.stderr.flush()
    return pytest


def silence_preloaded_rewrite_warning() -> None:
    """Plugin modules imported by ``preload`` are not rewritten again in the child; pytest would warn
    about that in every run (a warning the mechanism causes, not the project), so it stays quiet."""
    try:
        from _pytest.assertion.rewrite import AssertionRewritingHook
    except ImportError:
        return
    if hasattr(AssertionRewritingHook, "_warn_already_imported"):
        AssertionRewritingHook._warn_already_imported = lambda self, name: None  # type: ignore[method-assign]


def drop_workspace_modules(root: str) -> None:
    """Forget every module loaded from a file of the workspace copy ``root``, so the next import
    reads the file again. A folder the copy links rather than copies (``.venv``, an environment's
    site-packages with pytest itself) is not the workspace: its modules stay."""
    prefix = root.rstrip(os.sep) + os.sep
    linked: dict[str, bool] = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if not path.startswith(prefix):
            continue
        top = path[len(prefix) :].split(os.sep, 1)[0]
        if top not in linked:
            linked[top] = os.path.islink(os.path.join(prefix, top))
        if not linked[top]:
            del sys.modules[name]


def child(pytest: Any, args: list[str], output: str, root: str) -> None:
    """The forked child: never returns."""
    code = 3
    try:
        fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        drop_workspace_modules(root)
        silence_preloaded_rewrite_warning()
        sys.argv = [os.path.join(os.path.dirname(pytest.__file__), "__main__.py"), *args]
        code = int(pytest.main(args))
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:  # the child must end with a status, whatever happened
        import traceback

        traceback.print_exc()
    finally:
        try:
            import atexit

            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def status_of(wait_status: int) -> int:
    if os.WIFSIGNALED(wait_status):
        return -os.WTERMSIG(wait_status)
    return os.WEXITSTATUS(wait_status)


def serve(requests: str, replies: str, root: str, check_args: list[str]) -> None:
    sys.path[0] = os.getcwd()  # as ``python -m`` sets it (``-c`` leaves '')
    pytest = preload(check_args, os.path.dirname(requests))
    with open(requests, encoding="utf-8") as incoming, open(replies, "w", encoding="utf-8") as outgoing:
        outgoing.write(json.dumps({"ready": True}) + "\n")
        outgoing.flush()
        for line in incoming:
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                child(pytest, [str(a) for a in request["args"]], str(request["output"]), root)
            _, wait_status = os.waitpid(pid, 0)
            outgoing.write(json.dumps({"id": request["id"], "status": status_of(wait_status)}) + "\n")
            outgoing.flush()


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
