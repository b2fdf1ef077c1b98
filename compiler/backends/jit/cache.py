"""The on-disk cache of compiled evaluators (relocatable object files).

What it does: stores and retrieves object files under a key (a sha256 hex digest computed by
:mod:`tlop.backends.jit.evaluator` from the IR, the profile's structure, the llvmlite/LLVM versions,
the target triple and the CPU).  The directory is ``$TLOP_CACHE_DIR`` or ``~/.cache/tlop/jit``.

* Writes are atomic: a unique temporary file in the same directory, then ``os.replace``.
  Several processes compiling the same key at once each write a complete file; the last
  rename wins and every reader sees one whole entry.  There is no ``fsync`` (it cost about
  as much as a cache hit): an entry torn by a crash fails its checksum and is rebuilt.
* Every entry carries a header (magic, payload length, payload sha256).  An entry that fails
  the check (truncated, corrupted, foreign) is ignored, deleted, and rebuilt by the caller.
* A cache directory that cannot be created or written is not an error: compilation just is
  not cached (the ``TLOP_CACHE_DIR=off`` value disables the cache on purpose).

What it does not do: evict old entries (entries are small, ~10 kB; delete the directory to
reclaim space) or know what an object file contains.
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
from pathlib import Path
from typing import Optional

from tlop.runtime.cachedir import user_cache_dir

__all__ = ["ObjectCache", "cache_dir", "default_cache"]

_MAGIC = b"TLOPJIT1"
_HEADER = struct.Struct("<8sQ32s")  # magic, payload length, sha256(payload)


def cache_dir() -> Optional[Path]:
    """The cache directory, or None when caching is disabled (``TLOP_CACHE_DIR=off``); see
    :func:`tlop.runtime.cachedir.user_cache_dir`."""
    return user_cache_dir()


class ObjectCache:
    """Object files by key in one directory."""

    def __init__(self, directory: Optional[Path]):
        self.directory = directory
        self.hits = 0
        self.misses = 0
        self.rejected = 0  # corrupted entries ignored

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.o"

    def get(self, key: str) -> Optional[bytes]:
        """The object file stored under ``key``, or None (missing or corrupted)."""
        if self.directory is None:
            return None
        path = self._path(key)
        try:
            data = path.read_bytes()
        except OSError:
            self.misses += 1
            return None
        payload = _unwrap(data)
        if payload is None:
            self.rejected += 1
            self.misses += 1
            try:
                path.unlink()
            except OSError:
                pass
            return None
        self.hits += 1
        return payload

    def put(self, key: str, payload: bytes) -> bool:
        """Store ``payload`` under ``key`` atomically; False when the cache is not writable."""
        if self.directory is None:
            return False
        path = self._path(key)
        tmp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:16]}.", suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(_HEADER.pack(_MAGIC, len(payload), hashlib.sha256(payload).digest()))
                f.write(payload)
            os.replace(tmp, path)
            tmp = None
            return True
        except OSError:
            return False
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    def invalidate(self, key: str) -> None:
        """Forget ``key`` (used when a stored object file turned out unloadable)."""
        if self.directory is None:
            return
        try:
            self._path(key).unlink()
        except OSError:
            pass


def _unwrap(data: bytes) -> Optional[bytes]:
    if len(data) < _HEADER.size:
        return None
    magic, length, digest = _HEADER.unpack_from(data)
    payload = data[_HEADER.size:]
    if magic != _MAGIC or length != len(payload) or hashlib.sha256(payload).digest() != digest:
        return None
    return payload


_DEFAULT: dict = {}


def default_cache() -> ObjectCache:
    """The cache for the current ``$TLOP_CACHE_DIR`` (re-read on every call, so tests and
    users can switch directories at run time)."""
    d = cache_dir()
    c = _DEFAULT.get(d)
    if c is None:
        c = _DEFAULT[d] = ObjectCache(d)
    return c
