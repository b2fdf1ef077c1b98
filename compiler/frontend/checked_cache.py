"""A per-user cache of checked IR: what :func:`tlop.load` produced for a file, without parsing.

What it does: stores the lowered program of a ``.tlop`` file (``ir.Program`` and the names of
the file's own algorithms) after a successful load, and gives it back on the next load of the
same file, so a warm ``tlop eval`` imports neither ANTLR nor the front end.  An entry is used
only when all of these still hold, otherwise it is rebuilt:

* the key: the cache format, a fingerprint of the compiler's own sources (path, size and
  modification time of every module of the ``tlop`` package, its runtime and its generated
  parser, plus the version of tlop and of Python), the file's resolved path and the sha256 of
  its content;
* every imported file still has the content (sha256) it had, and every ``import "…"`` still
  resolves to the same file (a new file earlier on the search path changes the answer);
* every file is still reported under the same name (relative names depend on the working
  directory).

Entries are written by :func:`pickle.dumps` and read by :func:`pickle.loads`.

Integrity: entries are Python pickles, so they are never unpickled unless their HMAC-SHA256
verifies under a per-user secret key (32 random bytes in ``<cache>/ir/key``, created with mode
0600; a key file that is not the user's own or is readable by others disables the cache).  The
directory, key and entry rules are those of :mod:`tlop.runtime.cachedir`, shared with the JIT
cache (a directory not the user's own or writable by others is not used; entries are opened
without following links and read only when they are regular files).  A
truncated, damaged or forged entry fails the check, is deleted and rebuilt; a writer without
the key cannot make one that passes.  The MAC covers the entry's key as well as its payload, and
the record names the file (path and content digest) it was made for: an entry copied or moved
under another file's key fails the check.  Writes are atomic (a temporary file, then
``os.replace``).  A cache that cannot be created or written is not an error: loading just
is not cached (``TLOP_CACHE_DIR=off`` disables it).

What it does not do: cache ``loads`` of text, files that fail to check (their diagnostics are
recomputed every time), programs whose entry would exceed :data:`MAX_ENTRY_BYTES`, or the AST (a :class:`tlop.api.Module` loaded from the cache
elaborates again on demand when a caller asks for declarations).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import sys
from pathlib import Path
from typing import Optional

from tlop.runtime.cachedir import UntrustedEntry, read_entry, secret_key, trusted_directory, user_cache_dir

__all__ = ["CheckedEntry", "get", "put", "cache_directory", "compiler_fingerprint", "stats"]

_MAGIC = b"TLOPIR03"
_MAC = 32
#: the largest entry read or written (the whole stdlib's checked IR is well under 1 MB; a file of
#: 10⁵ declarations, about 75 MB); a larger program is not cached
MAX_ENTRY_BYTES = 512 << 20
_FINGERPRINT: Optional[str] = None
#: counters for tests and benchmarks: hits, misses, rejected (damaged/forged), stored
stats = {"hits": 0, "misses": 0, "rejected": 0, "stored": 0}


class CheckedEntry:
    """What a hit gives back: the program and the names of the file's own algorithms."""

    def __init__(self, program, root_algorithms: tuple, model_neutral: bool = False):
        self.program = program
        self.root_algorithms = root_algorithms
        self.model_neutral = model_neutral


def cache_directory() -> Optional[Path]:
    """``<user cache>/ir`` or None when caching is disabled."""
    base = user_cache_dir()
    return None if base is None else base / "ir"


def compiler_fingerprint() -> str:
    """A digest of the compiler's sources as installed (see the module docstring), once per
    process."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        import importlib.util

        import tlop

        h = hashlib.sha256(f"{tlop.__version__}\0{sys.version}\0".encode())
        roots = [Path(tlop.__file__).parent]
        for name in ("tlop.runtime", "tlop._antlr"):
            spec = importlib.util.find_spec(name)
            if spec is not None and spec.submodule_search_locations:
                roots.extend(Path(p) for p in spec.submodule_search_locations)
        for root in dict.fromkeys(roots):
            for f in sorted(root.rglob("*")):
                if f.suffix not in (".py", ".interp", ".tokens") or "__pycache__" in f.parts:
                    continue
                try:
                    st = f.stat()
                except OSError:
                    continue
                h.update(f"{f}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
        _FINGERPRINT = h.hexdigest()
    return _FINGERPRINT


# ---------------------------------------------------------------------------------- key
def _secret(directory: Path, create: bool) -> Optional[bytes]:
    """The per-user HMAC key (:func:`tlop.runtime.cachedir.secret_key`, the JIT cache's
    mechanism) when the cache directory is trusted; None otherwise."""
    if not trusted_directory(directory.parent, create) or not trusted_directory(directory, create):
        return None
    return secret_key(directory, create)


# ---------------------------------------------------------------------------------- entries
def _entry_path(directory: Path, path: Path, content: bytes, model: Optional[str] = None) -> Path:
    h = hashlib.sha256()
    for part in (_MAGIC.decode(), compiler_fingerprint(), str(path), hashlib.sha256(content).hexdigest(),
                 model or ""):
        h.update(part.encode())
        h.update(b"\0")
    key = h.hexdigest()
    return directory / key[:2] / f"{key}.ir"


def get(path: Path, model: Optional[str] = None):
    """The cached program of ``path`` loaded for ``model`` (a :class:`CheckedEntry`), or None."""
    directory = cache_directory()
    if directory is None:
        return None
    try:
        content = path.read_bytes()
    except OSError:
        return None
    secret = _secret(directory, create=False)
    if secret is None:
        stats["misses"] += 1
        return None
    entry = _entry_path(directory, path, content, model)
    try:
        data = read_entry(entry, MAX_ENTRY_BYTES)
    except UntrustedEntry:
        data = b""  # rejected below
    if data is None:
        stats["misses"] += 1
        return None
    payload = _verified(data, secret, entry.stem)
    if payload is None:
        stats["rejected"] += 1
        stats["misses"] += 1
        _remove(entry)
        return None
    record = pickle.loads(payload)  # noqa: S301 - authenticated with the user's own key above
    if record.get("root") != (str(path), hashlib.sha256(content).hexdigest(), model or "") \
            or not _still_valid(record, path, content, model):
        stats["misses"] += 1
        return None
    stats["hits"] += 1
    return CheckedEntry(record["program"], tuple(record["root_algorithms"]), record.get("model_neutral", False))


def put(path: Path, modules: list, elaborated, model: Optional[str] = None) -> bool:
    """Remember the result of loading ``path`` (``modules``: the loader's list of
    :class:`~tlop.frontend.loader.LoadedModule`, ``elaborated``: the elaborator's result).
    False when the cache is disabled or not writable."""
    directory = cache_directory()
    if directory is None:
        return False
    import tempfile

    from tlop.frontend import ast as A
    from tlop.frontend.loader import _display_name, _find_import, is_model_neutral

    try:
        secret = _secret(directory, create=True)
        if secret is None:
            return False
        files, imports = [], []
        for lm in modules:
            files.append((str(lm.path), _display_name(lm.path), hashlib.sha256(lm.source.text.encode("utf-8")).hexdigest()))
            for d in lm.module.decls:
                if isinstance(d, A.ImportDecl):
                    target = _find_import(lm.path, d.path, model)
                    imports.append((str(lm.path), d.path, None if target is None else str(target)))
        content = path.read_bytes()
        record = {"program": elaborated.program, "root_algorithms": tuple(elaborated.root_algorithms),
                  "files": files, "imports": imports, "model_neutral": is_model_neutral(modules),
                  "root": (str(path), hashlib.sha256(content).hexdigest(), model or "")}
        payload = dumps(record)
        if len(_MAGIC) + _MAC + len(payload) > MAX_ENTRY_BYTES:
            return False  # :func:`get` would refuse it (and delete it) unread
        entry = _entry_path(directory, path, content, model)
        entry.parent.mkdir(mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=f".{entry.name[:16]}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:  # two writes: no copy of a payload of tens of MB
                f.write(_MAGIC + _mac(secret, entry.stem, payload))
                f.write(payload)
            os.replace(tmp, entry)
            tmp = None
        finally:
            if tmp is not None:
                _remove(Path(tmp))
    except (OSError, pickle.PicklingError, RecursionError):
        return False
    stats["stored"] += 1
    return True


# ---------------------------------------------------------------------------------- writing
def dumps(record) -> bytes:
    """A pickle of ``record`` for :func:`pickle.loads`."""
    return pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)


def _mac(secret: bytes, key: str, payload: bytes) -> bytes:
    """The entry's MAC: over its key (the file's path and content digest, hashed into the entry's
    name) and its payload, so that an entry moved under another file's key fails the check."""
    h = hmac.new(secret, key.encode("ascii") + b"\0", hashlib.sha256)
    h.update(payload)
    return h.digest()


def _verified(data: bytes, secret: bytes, key: str) -> Optional[bytes]:
    if len(data) < len(_MAGIC) + _MAC or not data.startswith(_MAGIC):
        return None
    mac = data[len(_MAGIC):len(_MAGIC) + _MAC]
    payload = data[len(_MAGIC) + _MAC:]
    if not hmac.compare_digest(mac, _mac(secret, key, payload)):
        return None
    return payload


def _still_valid(record: dict, path: Path, content: bytes, model: Optional[str] = None) -> bool:
    """Every file has its recorded content and name, every import resolves as it did."""
    from tlop.frontend.loader import _display_name, _find_import

    try:
        for fpath, shown, digest in record["files"]:
            p = Path(fpath)
            data = content if p == path else p.read_bytes()
            if hashlib.sha256(data).hexdigest() != digest or _display_name(p) != shown:
                return False
        for importer, rel, target in record["imports"]:
            now = _find_import(Path(importer), rel, model)
            if (None if now is None else str(now)) != target:
                return False
    except (OSError, KeyError, TypeError, ValueError):
        return False
    return True


def _remove(p: Path) -> None:
    try:
        p.unlink()
    except OSError:
        pass
