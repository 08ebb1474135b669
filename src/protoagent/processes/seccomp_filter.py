"""The seccomp filter of the Landlock sandbox: the calls Landlock does not govern go to a supervisor.

Landlock has no rights for changing a file's metadata (chmod, chown, utime, extended
attributes) nor, before ABI 8, for reaching a pathname UNIX socket. This filter sends those
calls to a supervising process through a seccomp user-notification listener
(``SECCOMP_FILTER_FLAG_NEW_LISTENER``); :mod:`protoagent.processes.seccomp_supervisor` reads
each call's path or socket address from the caller's memory and answers it. Refused outright,
without asking: ``io_uring`` (its operations bypass seccomp and include connect and setxattr),
calls of the x32 ABI, and calls of any other architecture than the native one (a 32-bit x86
call gets EPERM for the supervised calls and runs otherwise; an aarch64 kernel's 32-bit calls
get ENOSYS). Supported: x86-64 and aarch64 (which has no legacy calls such as ``chmod``).

Standard library only: the Landlock launcher imports this file as a script's sibling.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys

AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_I386 = 0x40000003
AUDIT_ARCH_AARCH64 = 0xC00000B7
X32_SYSCALL_BIT = 0x40000000
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_NEW_LISTENER = 1 << 3
RET_ALLOW = 0x7FFF0000
RET_USER_NOTIF = 0x7FC00000
RET_ERRNO = 0x00050000

LD_ABS_W, JEQ_K, JGE_K, RET_K = 0x20, 0x15, 0x35, 0x06
OFFSET_NR, OFFSET_ARCH = 0, 4


def arg_offset(index: int) -> int:
    """Where the low 32 bits of argument ``index`` lie in ``struct seccomp_data`` (little endian)."""
    return 16 + 8 * index


class Shape:
    """Where a supervised call names what it acts on.

    ``kind``: ``path`` (``path`` argument, relative to ``dirfd`` or the cwd), ``fd`` (the open
    file ``fd``), ``address`` (a socket address at ``path`` of length ``length``), ``message``
    (a ``msghdr`` at ``path``) or ``messages`` (``length`` ``mmsghdr`` at ``path``)."""

    __slots__ = ("dirfd", "fd", "flags", "follow", "kind", "length", "path")

    def __init__(
        self,
        kind: str,
        *,
        path: int = -1,
        dirfd: int = -1,
        fd: int = -1,
        flags: int = -1,
        length: int = -1,
        follow: bool = True,
    ) -> None:
        self.kind = kind
        self.path = path
        self.dirfd = dirfd
        self.fd = fd
        self.flags = flags
        self.length = length
        self.follow = follow
        """Whether a final symlink is followed (``AT_SYMLINK_NOFOLLOW`` in ``flags`` turns it off)."""


FOLLOW = Shape("path", path=0)
NO_FOLLOW = Shape("path", path=0, follow=False)
ON_FD = Shape("fd", fd=0)


def at(flags: int = -1) -> Shape:
    return Shape("path", dirfd=0, path=1, flags=flags)


SHAPES: dict[str, Shape] = {
    "chmod": FOLLOW,
    "fchmod": ON_FD,
    "fchmodat": at(),
    "fchmodat2": at(3),
    "chown": FOLLOW,
    "lchown": NO_FOLLOW,
    "fchown": ON_FD,
    "fchownat": at(4),
    "utime": FOLLOW,
    "utimes": FOLLOW,
    "futimesat": at(),
    "utimensat": at(3),
    "setxattr": FOLLOW,
    "lsetxattr": NO_FOLLOW,
    "fsetxattr": ON_FD,
    "removexattr": FOLLOW,
    "lremovexattr": NO_FOLLOW,
    "fremovexattr": ON_FD,
    "setxattrat": at(2),
    "removexattrat": at(2),
    "file_setattr": at(4),
    "connect": Shape("address", path=1, length=2),
    "sendto": Shape("address", path=4, length=5),
    "sendmsg": Shape("message", path=1),
    "sendmmsg": Shape("messages", path=1, length=2),
}
"""Every supervised call. A null path of an ``at`` call (``utimensat(fd, NULL, ...)``) means
the file ``dirfd`` names."""

_COMMON = {
    "fchmodat2": 452,
    "setxattrat": 463,
    "removexattrat": 466,
    "file_setattr": 469,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
}
NUMBERS: dict[str, dict[str, int]] = {
    "x86_64": {
        **_COMMON,
        "chmod": 90,
        "fchmod": 91,
        "chown": 92,
        "fchown": 93,
        "lchown": 94,
        "utime": 132,
        "setxattr": 188,
        "lsetxattr": 189,
        "fsetxattr": 190,
        "removexattr": 197,
        "lremovexattr": 198,
        "fremovexattr": 199,
        "utimes": 235,
        "fchownat": 260,
        "futimesat": 261,
        "fchmodat": 268,
        "utimensat": 280,
        "connect": 42,
        "sendto": 44,
        "sendmsg": 46,
        "sendmmsg": 307,
        "seccomp": 317,
    },
    "aarch64": {
        **_COMMON,
        "setxattr": 5,
        "lsetxattr": 6,
        "fsetxattr": 7,
        "removexattr": 14,
        "lremovexattr": 15,
        "fremovexattr": 16,
        "fchmod": 52,
        "fchmodat": 53,
        "fchownat": 54,
        "fchown": 55,
        "utimensat": 88,
        "connect": 203,
        "sendto": 206,
        "sendmsg": 211,
        "sendmmsg": 269,
        "seccomp": 277,
    },
}
"""Call numbers per machine; aarch64 has no legacy calls (``chmod``, ``utime`` ...)."""
I386_REFUSED = (
    *(15, 16, 30, 94, 95, 102, 182, 198, 207, 212, 226, 227, 228, 235, 236, 237, 271, 298, 299, 306, 320),
    *(345, 362, 369, 370, 412, 425, 426, 427, 452, 463, 466, 469),
)
"""32-bit x86 numbers of the supervised calls, ``socketcall`` (102) and ``io_uring``: refused."""
REFUSED = ("io_uring_setup", "io_uring_enter", "io_uring_register")
ARCHES = {"x86_64": AUDIT_ARCH_X86_64, "aarch64": AUDIT_ARCH_AARCH64}


def machine() -> str:
    return os.uname().machine


def available() -> bool:
    """Whether this kernel and machine can run the filter with a supervisor."""
    if machine() not in NUMBERS or sys.byteorder != "little":
        return False
    try:
        with open("/proc/sys/kernel/seccomp/actions_avail", encoding="ascii") as handle:
            return "user_notif" in handle.read().split()
    except OSError:
        return False


def supervised(arch: str) -> dict[int, Shape]:
    """Call number to shape for ``arch``."""
    numbers = NUMBERS[arch]
    return {numbers[name]: shape for name, shape in SHAPES.items() if name in numbers}


class _Program:
    """A classic BPF program with forward jumps to named labels."""

    def __init__(self) -> None:
        self.code: list[tuple[int, int | str, int, int]] = []
        self.labels: dict[str, int] = {}

    def load(self, offset: int) -> None:
        self.code.append((LD_ABS_W, 0, 0, offset))

    def jump_if(self, op: int, value: int, label: str) -> None:
        self.code.append((op, label, 0, value))

    def ret(self, value: int) -> None:
        self.code.append((RET_K, 0, 0, value))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def assemble(self) -> bytes:
        out = bytearray()
        for index, (op, target, false, value) in enumerate(self.code):
            true = self.labels[target] - index - 1 if isinstance(target, str) else target
            if not 0 <= true <= 255:
                raise ValueError(f"seccomp jump out of range at {index}")
            out += struct.pack("=HBBI", op, true, false, value & 0xFFFFFFFF)
        return bytes(out)


def program(arch: str) -> bytes:
    """The filter for ``arch`` (``x86_64`` or ``aarch64``)."""
    numbers = NUMBERS[arch]
    bpf = _Program()
    bpf.load(OFFSET_ARCH)
    bpf.jump_if(JEQ_K, ARCHES[arch], "native")
    if arch == "x86_64":
        bpf.jump_if(JEQ_K, AUDIT_ARCH_I386, "i386")
    bpf.ret(RET_ERRNO | errno.ENOSYS)
    bpf.label("native")
    bpf.load(OFFSET_NR)
    if arch == "x86_64":
        bpf.jump_if(JGE_K, X32_SYSCALL_BIT, "nosys")
    for name in REFUSED:
        bpf.jump_if(JEQ_K, numbers[name], "refuse")
    bpf.jump_if(JEQ_K, numbers["sendto"], "sendto")
    for name in SHAPES:
        if name in numbers and name != "sendto":
            bpf.jump_if(JEQ_K, numbers[name], "notify")
    bpf.ret(RET_ALLOW)
    bpf.label("sendto")  # sendto on a connected socket (no address) needs no answer
    bpf.load(arg_offset(4))
    bpf.jump_if(JEQ_K, 0, "sendto_high")
    bpf.ret(RET_USER_NOTIF)
    bpf.label("sendto_high")
    bpf.load(arg_offset(4) + 4)
    bpf.jump_if(JEQ_K, 0, "allow")
    bpf.label("notify")
    bpf.ret(RET_USER_NOTIF)
    bpf.label("allow")
    bpf.ret(RET_ALLOW)
    bpf.label("refuse")
    bpf.ret(RET_ERRNO | errno.EPERM)
    bpf.label("nosys")
    bpf.ret(RET_ERRNO | errno.ENOSYS)
    if arch == "x86_64":
        bpf.label("i386")
        bpf.load(OFFSET_NR)
        for number in I386_REFUSED:
            bpf.jump_if(JEQ_K, number, "refuse32")
        bpf.ret(RET_ALLOW)
        bpf.label("refuse32")
        bpf.ret(RET_ERRNO | errno.EPERM)
    return bpf.assemble()


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install() -> int:
    """Install the filter on this thread (``no_new_privs`` must be set) and return the
    listener's file descriptor; ``OSError`` when the kernel refuses."""
    arch = machine()
    code = program(arch)
    buffer = ctypes.create_string_buffer(code, len(code))
    fprog = _Fprog(len(code) // 8, ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    flags = SECCOMP_FILTER_FLAG_NEW_LISTENER
    listener = int(libc.syscall(NUMBERS[arch]["seccomp"], SECCOMP_SET_MODE_FILTER, flags, ctypes.byref(fprog)))
    if listener < 0:
        raise OSError(ctypes.get_errno(), "seccomp(SECCOMP_SET_MODE_FILTER) failed")
    return listener
