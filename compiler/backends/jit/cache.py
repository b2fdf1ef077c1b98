"""The on-disk cache of compiled evaluators (relocatable object files): a trust boundary.

What it does: stores and retrieves object files under a key (a sha256 hex digest computed by
:mod:`tlop.backends.jit.evaluator` from the IR, the profile's structure, the llvmlite/LLVM versions,
the target triple and the CPU).  The directory is ``$TLOP_CACHE_DIR`` or ``~/.cache/tlop/jit``.

An entry is native code the process will run, so it is authenticated, not merely checksummed
(the trust model of :mod:`tlop.runtime.cachedir`, the same as the checked-IR cache's):

* an entry is ``magic · key · HMAC-SHA256(secret, magic · key · payload) · payload``; the
  secret is the per-user 0600 key file ``<cache>/key``.  An entry is used only when its MAC
  verifies and the key written in it is the key asked for, so a forged entry (a valid sha256,
  mutated code, another algorithm's code copied under this key) is rejected, deleted and
  rebuilt by the caller;
* the directory is used only when it is the user's own and nobody else can write to it;
* an entry is opened without following a symbolic link and without blocking, and read only
  when it is a regular file of the user's own of at most :data:`MAX_ENTRY_BYTES`.

* Writes are atomic: a unique temporary file in the same directory, then ``os.replace``.
  Several processes compiling the same key at once each write a complete file; the last
  rename wins and every reader sees one whole entry.  There is no ``fsync`` (it cost about
  as much as a cache hit): an entry torn by a crash fails its MAC and is rebuilt.
* A cache directory that cannot be created, written or trusted is not an error: compilation
  just is not cached (the ``TLOP_CACHE_DIR=off`` value disables the cache on purpose).

What it does not do: evict old entries (entries are small, ~10 kB; delete the directory to
reclaim space), know what an object file contains, or protect against the user's own account
(which can read the key).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import tempfile
from pathlib import Path
from typing import Optional

from tlop.runtime.cachedir import UntrustedEntry, read_entry, secret_key, trusted_directory, user_cache_dir

__all__ = ["ObjectCache", "cache_dir", "default_cache", "MAX_ENTRY_BYTES"]

_MAGIC = b"TLOPJIT2"
_KEY_LEN = 64  # a sha256 hex digest
_MAC = 32
#: the largest entry read (compiled evaluators are ~10 kB; the largest stdlib one is < 1 MB)
MAX_ENTRY_BYTES = 64 << 20


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
        self.rejected = 0  # damaged, forged or untrusted entries ignored

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.o"

    def _key_ok(self, key: str) -> bool:
        return len(key) == _KEY_LEN and all(c in "0123456789abcdef" for c in key)

    def _trusted_secret(self, create: bool) -> Optional[bytes]:
        if self.directory is None or not trusted_directory(self.directory, create):
            return None
        return secret_key(self.directory, create)

    def get(self, key: str) -> Optional[bytes]:
        """The object file stored under ``key``, or None (missing, damaged, forged, untrusted)."""
        if self.directory is None or not self._key_ok(key):
            return None
        secret = self._trusted_secret(create=False)
        if secret is None:
            self.misses += 1
            return None
        path = self._path(key)
        try:
            data = read_entry(path, MAX_ENTRY_BYTES)
        except UntrustedEntry:
            data = b""  # rejected below, and removed so that the rebuilt entry can take its place
        if data is None:
            self.misses += 1
            return None
        payload = _unwrap(data, key, secret)
        if payload is None:
            self.rejected += 1
            self.misses += 1
            self.invalidate(key)
            return None
        self.hits += 1
        return payload

    def has(self, key: str) -> bool:
        """Whether an entry is stored under ``key`` (not checked: :meth:`get` checks it)."""
        if self.directory is None or not self._key_ok(key):
            return False
        return self._path(key).is_file()

    def put(self, key: str, payload: bytes) -> bool:
        """Store ``payload`` under ``key`` atomically; False when the cache is not writable or
        not trusted."""
        if self.directory is None or not self._key_ok(key):
            return False
        secret = self._trusted_secret(create=True)
        if secret is None:
            return False
        path = self._path(key)
        tmp = None
        try:
            try:
                os.mkdir(path.parent, 0o700)
            except FileExistsError:
                pass
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:16]}.", suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(_wrap(key, payload, secret))
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
        """Forget ``key`` (a rejected entry, or a stored object file that turned out
        unloadable).  Removes the directory entry itself, whatever it is (a link is removed,
        not followed)."""
        if self.directory is None or not self._key_ok(key):
            return
        try:
            self._path(key).unlink()
        except OSError:
            pass


def _mac(secret: bytes, key: bytes, payload: bytes) -> bytes:
    h = hmac.new(secret, _MAGIC, hashlib.sha256)
    h.update(key)
    h.update(payload)
    return h.digest()


def _wrap(key: str, payload: bytes, secret: bytes) -> bytes:
    k = key.encode("ascii")
    return _MAGIC + k + _mac(secret, k, payload) + payload


def _unwrap(data: bytes, key: str, secret: bytes) -> Optional[bytes]:
    """The payload of entry ``data`` when it is an entry for ``key`` made with ``secret``."""
    head = len(_MAGIC) + _KEY_LEN + _MAC
    if len(data) < head or not data.startswith(_MAGIC):
        return None
    stored = data[len(_MAGIC):len(_MAGIC) + _KEY_LEN]
    mac = data[len(_MAGIC) + _KEY_LEN:head]
    payload = data[head:]
    if not hmac.compare_digest(stored, key.encode("ascii")):
        return None
    if not hmac.compare_digest(mac, _mac(secret, stored, payload)):
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
