"""Metadata and socket attacks run as an untrusted command: each reports what it managed to do.

Usage: ``metadata_probe.py JSON`` with ``outside`` (a canary file outside the writable set),
``inside`` (a file of the workspace), ``git_file`` (a file in the workspace's ``.git``),
``socket`` (a listening UNIX socket outside the workspace), ``dgram`` (a datagram socket
outside) and ``workspace`` (the workspace). Prints ``PROBE {name: result}``; a result is
``changed``/``connected``/``sent`` or ``refused: ERROR``.
"""

from __future__ import annotations

import ctypes
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable


def chmod(plan: dict[str, str]) -> str:
    os.chmod(plan["outside"], 0o777)
    return "changed"


def utime(plan: dict[str, str]) -> str:
    os.utime(plan["outside"], (1, 1))
    return "changed"


def setxattr(plan: dict[str, str]) -> str:
    os.setxattr(plan["outside"], "user.planted", b"1")
    return "changed"


def chown(plan: dict[str, str]) -> str:
    os.chown(plan["outside"], os.getuid(), os.getgid())
    return "changed"


def on_fd(change: Callable[[int], None]) -> Callable[[dict[str, str]], str]:
    def run(plan: dict[str, str]) -> str:
        fd = os.open(plan["outside"], os.O_RDONLY)
        try:
            change(fd)
        finally:
            os.close(fd)
        return "changed"

    return run


def at_dirfd(plan: dict[str, str]) -> str:
    dirfd = os.open(os.path.dirname(plan["outside"]), os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.chmod(os.path.basename(plan["outside"]), 0o777, dir_fd=dirfd)
    finally:
        os.close(dirfd)
    return "changed"


def through_symlink(plan: dict[str, str]) -> str:
    link = os.path.join(plan["workspace"], "probe", "link")
    os.symlink(plan["outside"], link)
    os.chmod(link, 0o777)
    return "changed"


def proc_self_cwd(plan: dict[str, str]) -> str:
    """A link the supervisor would resolve against its own cwd if it took /proc/self as its."""
    link = os.path.join(plan["workspace"], "probe", "cwdlink")
    os.symlink(f"/proc/self/cwd/{os.path.basename(plan['outside'])}", link)
    os.chdir(os.path.dirname(plan["outside"]))
    try:
        os.chmod(link, 0o777)
    finally:
        os.chdir(plan["workspace"])
    return "changed"


def dev_fd(plan: dict[str, str]) -> str:
    fd = os.open(plan["outside"], os.O_RDONLY)
    try:
        os.chmod(f"/dev/fd/{fd}", 0o777)
    finally:
        os.close(fd)
    return "changed"


def from_thread(plan: dict[str, str]) -> str:
    result: list[str] = []

    def run() -> None:
        try:
            os.chmod(plan["outside"], 0o777)
            result.append("changed")
        except OSError as error:
            result.append(f"refused: {type(error).__name__}")

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return result[0]


def from_child(plan: dict[str, str]) -> str:
    done = subprocess.run(["/bin/chmod", "777", plan["outside"]], capture_output=True, check=False)
    return "changed" if done.returncode == 0 else f"refused: exit {done.returncode}"


def connect(plan: dict[str, str]) -> str:
    client = socket.socket(socket.AF_UNIX)
    client.settimeout(2)
    client.connect(plan["socket"])
    client.close()
    return "connected"


def sendto(plan: dict[str, str]) -> str:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    client.sendto(b"planted", plan["dgram"])
    client.close()
    return "sent"


def io_uring(plan: dict[str, str]) -> str:
    libc = ctypes.CDLL(None, use_errno=True)
    params = ctypes.create_string_buffer(120)
    fd = libc.syscall(425, 8, params)
    if fd < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    os.close(fd)
    return "changed"


I386_CHMOD = """
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
page = libc.mmap(None, 4096, 7, 0x22 | 0x40, -1, 0)  # read/write/exec, private, anonymous, 32-bit
path = sys.argv[1].encode() + b"\\0"
ctypes.memmove(page + 256, path, len(path))
word = lambda value: value.to_bytes(4, "little")
# push rbx; mov eax, 15 (i386 chmod); mov ebx, path; mov ecx, 0o777; int 0x80; pop rbx; ret
code = b"\\x53\\xb8" + word(15) + b"\\xbb" + word(page + 256) + b"\\xb9" + word(0o777) + b"\\xcd\\x80\\x5b\\xc3"
ctypes.memmove(page, code, len(code))
print(ctypes.CFUNCTYPE(ctypes.c_int)(page)())
"""


def i386_chmod(plan: dict[str, str]) -> str:
    """The 32-bit x86 ``chmod`` (``int 0x80``) from a 64-bit process: another call table."""
    if os.uname().machine != "x86_64":
        return "not x86-64"
    done = subprocess.run([sys.executable, "-c", I386_CHMOD, plan["outside"]], capture_output=True, text=True)
    if done.returncode != 0:
        return f"refused: exit {done.returncode}"
    result = int(done.stdout.strip())
    return "changed" if result == 0 else f"refused: {os.strerror(-result)}"


def git_chmod(plan: dict[str, str]) -> str:
    os.chmod(plan["git_file"], 0o777)
    return "changed"


def inside_all(plan: dict[str, str]) -> str:
    os.chmod(plan["inside"], 0o640)
    os.utime(plan["inside"], (2, 2))
    os.setxattr(plan["inside"], "user.ok", b"1")
    fd = os.open(plan["inside"], os.O_RDONLY)
    os.fchmod(fd, 0o600)
    os.close(fd)
    return "changed"


def inside_socket(plan: dict[str, str]) -> str:
    path = os.path.join(plan["workspace"], "probe", "own.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(1)
    client = socket.socket(socket.AF_UNIX)
    client.connect(path)
    client.close()
    server.close()
    return "connected"


ATTACKS: dict[str, Callable[[dict[str, str]], str]] = {
    "chmod": chmod,
    "utime": utime,
    "setxattr": setxattr,
    "chown": chown,
    "fchmod": on_fd(lambda fd: os.fchmod(fd, 0o777)),
    "futimens": on_fd(lambda fd: os.utime(fd, (1, 1))),
    "fsetxattr": on_fd(lambda fd: os.setxattr(fd, "user.planted", b"1")),
    "at_dirfd": at_dirfd,
    "through_symlink": through_symlink,
    "proc_self_cwd": proc_self_cwd,
    "dev_fd": dev_fd,
    "from_thread": from_thread,
    "from_child": from_child,
    "connect": connect,
    "sendto": sendto,
    "io_uring": io_uring,
    "i386_chmod": i386_chmod,
    "git_chmod": git_chmod,
    "inside": inside_all,
    "inside_socket": inside_socket,
}


def main() -> None:
    plan = json.loads(sys.argv[1])
    result: dict[str, str] = {}
    for name, attack in ATTACKS.items():
        try:
            result[name] = attack(plan)
        except Exception as error:  # every refusal is a result, not a crash
            result[name] = f"refused: {type(error).__name__}: {error}"
    print("PROBE " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
