"""The names of the files opened while the kernel tracer runs, from fanotify.

The kernel's tracepoints give a read's device and inode but no path, and looking at
``/proc/TID/fd/N`` after an ``open`` is a race: a short-lived program (a compiler pass, a test
binary) may open, read and close a file before the reader looks. fanotify closes that gap: the
kernel queues an event for every open on a marked filesystem while the opening system call runs,
and the event holds its own reference to the opened file, so the listener can still ask for the
file's device, inode and path after the program has closed it and exited (fanotify(7)).

Needs CAP_SYS_ADMIN (the kernel tracer runs as root anyway). Where fanotify is missing or a
filesystem cannot be marked, :class:`OpenedFiles` simply knows fewer names and the tracer falls back
on its ``/proc`` looks.
"""

from __future__ import annotations

import ctypes
import os
import stat as stat_mod
import struct

from bufsim.fd_thread import DrainThread
from bufsim.syscalls import fd_link_path

_FAN_CLOEXEC = 0x1
_FAN_NONBLOCK = 0x2
_FAN_UNLIMITED_QUEUE = 0x10
_FAN_MARK_ADD = 0x1
_FAN_MARK_MOUNT = 0x10
_FAN_MARK_FILESYSTEM = 0x100
_FAN_OPEN = 0x20
_AT_FDCWD = -100
_METADATA = struct.Struct("IBBHQii")  # event_len, vers, reserved, metadata_len, mask, fd, pid

#: Filesystems without a page cache of their own data: not marked.
_PSEUDO = frozenset(
    "proc sysfs cgroup cgroup2 tracefs debugfs devpts mqueue bpf securityfs pstore configfs fusectl "
    "autofs binfmt_misc rpc_pipefs nsfs efivarfs selinuxfs hugetlbfs".split()
)

#: Events read at once: each one is an open descriptor in this process until it is looked at.
_BATCH = 256


def _mount_points() -> list[str]:
    points = []
    try:
        with open("/proc/self/mountinfo", "rb") as f:
            for line in f:
                left, _, right = line.partition(b" - ")
                fields = left.split()
                fstype = right.split()[0].decode() if right else ""
                if len(fields) > 4 and fstype not in _PSEUDO:
                    points.append(fields[4].decode("utf-8", "surrogateescape").replace("\\040", " "))
    except OSError:
        pass
    return points


class OpenedFiles(DrainThread):
    """Listens to every open on this machine's filesystems from :meth:`start` to :meth:`finish`;
    ``names`` maps (device, inode) of each regular file to its path and size when first opened."""

    def __init__(self) -> None:
        super().__init__()
        self.names: dict[tuple[int, int], tuple[bytes, int]] = {}
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            init, mark = libc.fanotify_init, libc.fanotify_mark
        except (OSError, AttributeError):
            return
        mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int, ctypes.c_char_p]
        fd = init(_FAN_CLOEXEC | _FAN_NONBLOCK | _FAN_UNLIMITED_QUEUE, os.O_RDONLY | os.O_LARGEFILE | os.O_CLOEXEC)
        if fd < 0:
            return
        marked: set[int] = set()
        for point in _mount_points():
            try:
                dev = os.stat(point).st_dev
            except OSError:
                continue
            if dev in marked:
                continue
            path = os.fsencode(point)
            # A whole filesystem where the kernel allows it; otherwise the mount.
            if (
                mark(fd, _FAN_MARK_ADD | _FAN_MARK_FILESYSTEM, _FAN_OPEN, _AT_FDCWD, path) == 0
                or mark(fd, _FAN_MARK_ADD | _FAN_MARK_MOUNT, _FAN_OPEN, _AT_FDCWD, path) == 0
            ):
                marked.add(dev)
        if not marked:
            os.close(fd)
            return
        self.fd = fd

    def start(self) -> None:
        if self.fd >= 0:
            super().start()

    def drain(self) -> None:
        while True:
            try:
                data = os.read(self.fd, _METADATA.size * _BATCH)
            except OSError:  # would block (drained), or interrupted
                return
            if not data:
                return
            off = 0
            while off + _METADATA.size <= len(data):
                length, _, _, _, _, efd, _ = _METADATA.unpack_from(data, off)
                off += max(length, _METADATA.size)
                if efd < 0:
                    continue  # the queue cannot overflow (unlimited), so no event lacks its file
                try:
                    s = os.fstat(efd)
                    if stat_mod.S_ISREG(s.st_mode) and (s.st_dev, s.st_ino) not in self.names:
                        link = os.readlink(b"/proc/self/fd/%d" % efd)
                        self.names[(s.st_dev, s.st_ino)] = (fd_link_path(link, s.st_nlink), s.st_size)
                except OSError:
                    pass
                finally:
                    os.close(efd)
