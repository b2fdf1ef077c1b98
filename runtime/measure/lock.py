"""One writer per output: the lock file beside a profile that ``tlop measure`` writes.

What it does: :class:`OutputLock` holds an exclusive ``flock`` on ``<profile>.lock`` (``p.json``
→ ``p.json.lock``) for as long as one ``tlop measure`` run writes that profile and its samples
file; a second run on the same output — a ``--resume`` started while the first still runs, or
a plain run — is refused with a message naming the process that holds it.  The kernel drops a
``flock`` when its holder dies, however it dies (SIGKILL, a power cut of a network client), so a
lock file left behind by a dead run is simply taken over: there is no stale lock to clean up by
hand.  The file holds the holder's PID and host, for the message only.  On release the file is
removed; a run that opened the file just before it was removed notices (its inode is no longer
the one at the path) and opens it again, so two runs can never both hold "the" lock.

:func:`writer_busy` tells whether some process holds the samples file itself (the rank that
appends to it takes a ``flock`` on it, :class:`.store.SampleStore`): a launcher checks it
before launching, so that ranks of an earlier launcher that were not yet gone are never joined
by a second set writing the same keys.

What it does not do: lock anything on file systems without ``flock`` (there, and where
``fcntl`` does not exist, the lock is a no-op and says so in its ``held`` attribute), or wait —
a busy output is refused at once.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Optional

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.text import printable

try:
    import fcntl
except ImportError:                     # not POSIX: no locking
    fcntl = None

__all__ = ["OutputLock", "lock_path", "writer_busy", "try_flock"]


def lock_path(profile_path) -> Path:
    """``x.json`` → ``x.json.lock``."""
    p = Path(profile_path)
    return p.with_name(p.name + ".lock")


def try_flock(fd: int) -> Optional[bool]:
    """Take an exclusive flock on ``fd`` without waiting: True if taken, False if another open
    file holds it, None if this system or file system cannot lock."""
    if fcntl is None:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    except OSError:                      # e.g. ENOLCK on a file system without locks
        return None


class OutputLock:
    """Exclusive ownership of one profile output (see the module docstring).  Use as a context
    manager or call :meth:`acquire` / :meth:`release`."""

    def __init__(self, profile_path):
        self.path = lock_path(profile_path)
        self._fd: Optional[int] = None
        self.held = False

    def acquire(self) -> "OutputLock":
        shown = printable(self.path)
        for _ in range(20):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError as err:
                raise TlopError(f"{shown}: cannot create the lock file of this output: "
                                f"{err.strerror or err}") from None
            got = try_flock(fd)
            if got is False:
                holder = _read_holder(fd)
                os.close(fd)
                raise TlopError(f"another tlop measure{holder} is writing this output (it holds {shown}); "
                                f"wait for it to finish or stop it, then run again with --resume")
            if got is None or _same_file(fd, self.path):
                self._fd = fd
                self.held = bool(got)
                _write_holder(fd)
                return self
            os.close(fd)                 # the holder removed the file as we opened it: again
        raise TlopError(f"{shown}: the lock file keeps changing; is another tlop measure starting?")

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            if self.held:
                try:
                    os.unlink(self.path)  # while still holding it (see the module docstring)
                except OSError:
                    pass
        finally:
            os.close(self._fd)
            self._fd = None
            self.held = False

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()


def writer_busy(path) -> bool:
    """Whether another process holds the flock of an existing file (the samples file's writer)."""
    try:    # read-write where possible: locks emulated with fcntl (NFS) need it for LOCK_EX
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return False
    try:
        return try_flock(fd) is False
    finally:
        os.close(fd)                     # closing drops the probe's own lock at once


def _same_file(fd: int, path: Path) -> bool:
    try:
        a, b = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _write_holder(fd: int) -> None:
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {socket.gethostname()}\n".encode(), 0)
    except OSError:
        pass


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 200, 0).decode("utf-8", "replace").split()
    except OSError:
        return ""
    if len(text) >= 1 and text[0].isdigit():
        host = f" on {printable(text[1])}" if len(text) > 1 else ""
        return f" (process {text[0]}{host})"
    return ""
