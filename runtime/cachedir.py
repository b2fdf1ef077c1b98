"""Where tlop keeps its per-user caches (compiled code, checked IR), and what makes them trusted.

The directory: ``$TLOP_CACHE_DIR`` if set (``off``/``none``/``0``/empty: no cache at all), else
``~/.cache/tlop/jit`` (the historical name: the JIT's object files live at its top level, other
caches in sub-folders).

The trust model, shared by every cache (see docs/jit.rst, "The cache is a trust boundary"):

* A cache directory is used only when it is a directory owned by the user and writable by
  nobody else (no group or other write bit, after following a symbolic link to it).  Anything
  else — another user's directory, a world-writable one, a file — disables caching with a
  note on standard error, once per process; it is never an error.
* ``$TLOP_CACHE_DIR`` must be an absolute path after ``~`` expansion: a relative path (or a
  ``~user`` that does not expand) would put the cache wherever the current directory happens
  to be, so it disables caching with a note.  A directory that already holds other files and
  no ``CACHEDIR.TAG`` is not taken over (``TLOP_CACHE_DIR=~`` must not fill ``$HOME`` with
  shard folders): it disables caching with a note.
* A missing cache directory is created (mode 0700, each missing level) only when the nearest
  existing ancestor is the user's own directory or a sticky one such as ``/tmp``; creating a
  ``$TLOP_CACHE_DIR`` says so on standard error.  Every directory tlop creates gets a
  ``CACHEDIR.TAG`` (https://bford.info/cachedir/) so backup tools skip it.
* Entries are authenticated, not merely checksummed: :func:`secret_key` gives a per-user
  32-byte secret (a 0600 file in the cache, refused when it is not the user's own or is
  readable by others) that the caches use as an HMAC-SHA256 key.  Whoever can write the cache
  but cannot read the key cannot make an entry that verifies.
* :func:`read_entry` opens an entry without following a symbolic link, without blocking (a
  FIFO), and reads it only when it is a regular file of the user's own, no larger than the
  caller's limit.

What it does not do: know what an entry contains or how it is keyed (each cache does), or
protect against the user's own account (whoever runs as the user can read the key).
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Optional

__all__ = ["user_cache_dir", "trusted_directory", "secret_key", "read_entry", "UntrustedEntry",
           "CACHEDIR_TAG"]

#: the signature line of a cache directory tag (https://bford.info/cachedir/)
CACHEDIR_TAG = b"Signature: 8a477f597d28d172789f06886806bc55\n"
_TAG_TEXT = CACHEDIR_TAG + b"# This file marks a cache directory of tlop (https://bford.info/cachedir/).\n"
_NOTED: set = set()
#: directories already checked in this process: (path, device, inode, mode, owner) -> verdict
_CHECKED: dict = {}


class UntrustedEntry(Exception):
    """An entry that exists but must not be read (a link, a FIFO, a device, another user's file,
    too large)."""


def _note(message: str) -> None:
    """Say ``message`` on standard error, once per process."""
    if message in _NOTED:
        return
    _NOTED.add(message)
    try:
        sys.stderr.write(f"tlop: note: {message}\n")
    except (OSError, ValueError):
        pass


def _shown(path) -> str:
    from tlop.runtime.text import printable
    return printable(str(path))


def _uid() -> Optional[int]:
    return os.getuid() if hasattr(os, "getuid") else None


def user_cache_dir() -> Optional[Path]:
    """The cache directory, or None when caching is disabled (``TLOP_CACHE_DIR=off``, or a
    value that is not an absolute path).  Nothing here creates the directory."""
    env = os.environ.get("TLOP_CACHE_DIR")
    if env is not None:
        if env.strip().lower() in ("", "off", "none", "0"):
            return None
        try:
            path = Path(env).expanduser()
        except RuntimeError:  # '~user' of no user, or no home directory
            path = Path(env)
        if not path.is_absolute():
            _note(f"TLOP_CACHE_DIR={_shown(env)} is not an absolute path; nothing is cached")
            return None
        return path
    try:
        return Path.home() / ".cache" / "tlop" / "jit"
    except (RuntimeError, KeyError):  # no home directory to speak of
        return None


def _from_env(directory: Path) -> bool:
    env = os.environ.get("TLOP_CACHE_DIR")
    try:
        return env is not None and Path(env).expanduser() == directory
    except RuntimeError:
        return False


def _own_safe_dir(st: os.stat_result) -> Optional[str]:
    """Why a directory with this stat may not hold a cache (None: it may)."""
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    uid = _uid()
    if uid is not None and st.st_uid != uid:
        return "it belongs to another user"
    if st.st_mode & 0o022:
        return "others can write to it (chmod go-w fixes that)"
    return None


def _tag(directory: Path) -> None:
    try:
        fd = os.open(directory / "CACHEDIR.TAG", os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o644)
    except OSError:
        return
    try:
        os.write(fd, _TAG_TEXT)
    finally:
        os.close(fd)


def _create(directory: Path) -> Optional[str]:
    """Create ``directory`` and its missing parents (mode 0700); why not, or None when done."""
    missing = []
    p = directory
    while True:
        try:
            st = os.stat(p)
            break
        except FileNotFoundError:
            missing.append(p)
            if p.parent == p:
                return "no part of its path exists"
            p = p.parent
        except OSError as err:
            return f"{_shown(p)} cannot be examined ({err.strerror or err})"
    uid = _uid()
    if not stat.S_ISDIR(st.st_mode):
        return f"{_shown(p)} is not a directory"
    if uid is not None and st.st_uid != uid and not st.st_mode & stat.S_ISVTX:
        return f"it would be created in {_shown(p)}, which is not the user's own directory"
    for q in reversed(missing):
        try:
            os.mkdir(q, 0o700)
        except FileExistsError:
            pass
        except OSError as err:
            return f"it cannot be created ({err.strerror or err})"
    _tag(directory)
    if _from_env(directory):
        _note(f"created the cache directory {_shown(directory)} (TLOP_CACHE_DIR)")
    return None


def trusted_directory(directory: Path, create: bool) -> bool:
    """Whether ``directory`` may hold a cache (see the module docstring), creating it when
    ``create`` and it is missing.  One ``stat`` per call; the rest of the verdict is
    remembered per directory identity; a refusal is noted on standard error once."""
    why = None
    try:
        st = os.stat(directory)
    except FileNotFoundError:
        if not create:
            return False  # nothing to read yet; asked again when writing
        why = _create(directory)
        st = None if why else os.stat(directory)
    except OSError as err:
        why = f"it cannot be examined ({err.strerror or err})"
        st = None
    if st is not None:
        ident = (directory, st.st_dev, st.st_ino, st.st_mode, st.st_uid)
        verdict = _CHECKED.get(ident)
        if verdict is not None:
            return verdict
        why = _own_safe_dir(st)
        if why is None and not _is_tagged(directory) and _from_env(directory) and _holds_foreign_files(directory):
            why = "it already holds other files and no CACHEDIR.TAG (choose an empty or new directory)"
        if why is None and not _is_tagged(directory):
            _tag(directory)
        _CHECKED[ident] = why is None
    if why is not None:
        _note(f"not using the cache directory {_shown(directory)}: {why}; nothing is cached")
    return why is None


def _is_tagged(directory: Path) -> bool:
    try:
        with open(directory / "CACHEDIR.TAG", "rb") as f:
            return f.read(len(CACHEDIR_TAG)) == CACHEDIR_TAG
    except OSError:
        return False


def _holds_foreign_files(directory: Path) -> bool:
    """Whether ``directory`` holds anything a tlop cache would not have made (a cache written
    before tags existed holds only 2-hex-digit shards, ``ir`` and ``key``)."""
    try:
        with os.scandir(directory) as it:
            for entry in it:
                name = entry.name
                if name in ("ir", "key", "CACHEDIR.TAG") or (len(name) == 2 and all(c in "0123456789abcdef" for c in name)):
                    continue
                if name.startswith(".key."):
                    continue
                return True
    except OSError:
        return True
    return False


# ---------------------------------------------------------------------------------- the key
def secret_key(directory: Path, create: bool) -> Optional[bytes]:
    """The per-user HMAC key kept in ``directory/key``; None when it does not exist (and
    ``create`` is false) or cannot be trusted (not the user's own, readable by others, not a
    regular file of 32 bytes)."""
    path = directory / "key"
    for _ in range(2):
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:
            if not create:
                return None
            _make_secret(directory, path)
            continue
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o077 or st.st_size != 32:
                return None
            uid = _uid()
            if uid is not None and st.st_uid != uid:
                return None
            data = os.read(fd, 64)
            return data if len(data) == 32 else None
        finally:
            os.close(fd)
    return None


def _make_secret(directory: Path, path: Path) -> None:
    """Create the key file atomically with mode 0600 (a concurrent creator may win: then its
    key is the one used)."""
    import secrets
    import tempfile

    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".key.")  # mkstemp: mode 0600
    try:
        os.fchmod(fd, 0o600) if hasattr(os, "fchmod") else None
        os.write(fd, secrets.token_bytes(32))
        os.close(fd)
        fd = -1
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
    finally:
        if fd >= 0:
            os.close(fd)
        os.unlink(tmp)


# ---------------------------------------------------------------------------------- entries
def read_entry(path: Path, max_bytes: int) -> Optional[bytes]:
    """The bytes of the cache entry ``path``; None when it does not exist.  Raises
    :class:`UntrustedEntry` when it exists but is a symbolic link, not a regular file (a FIFO
    or a device is never waited on or read), not the user's own, or larger than
    ``max_bytes``."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as err:  # ELOOP: a symbolic link; EACCES, ENXIO …
        raise UntrustedEntry(f"cannot open: {err.strerror or err}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UntrustedEntry("not a regular file")
        uid = _uid()
        if uid is not None and st.st_uid != uid:
            raise UntrustedEntry("belongs to another user")
        if st.st_size > max_bytes:
            raise UntrustedEntry(f"larger than {max_bytes} bytes")
        chunks, left = [], st.st_size + 1  # one byte more: a file that grew is noticed
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > max_bytes:
            raise UntrustedEntry(f"larger than {max_bytes} bytes")
        return data
    except OSError as err:
        raise UntrustedEntry(f"cannot read: {err.strerror or err}") from None
    finally:
        os.close(fd)
