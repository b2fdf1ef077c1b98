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

Entries are written by :func:`dumps`: the C writer of ``grammar/native/cpython/irencode.c`` when
it is built (with the native parser), else :func:`pickle.dumps`; both are read by
:func:`pickle.loads`.

Integrity: entries are Python pickles, so they are never unpickled unless their HMAC-SHA256
verifies under a per-user secret key (32 random bytes in ``<cache>/ir/key``, created with mode
0600; a key file that is not the user's own or is readable by others disables the cache).  The
directory, key and entry rules are those of :mod:`tlop.runtime.cachedir`, shared with the JIT
cache (a directory not the user's own or writable by others is not used; entries are opened
without following links and read only when they are regular files).  A
truncated, damaged or forged entry fails the check, is deleted and rebuilt; a writer without
the key cannot make one that passes.  Writes are atomic (a temporary file, then
``os.replace``).  A cache that cannot be created or written is not an error: loading just
is not cached (``TLOP_CACHE_DIR=off`` disables it).

What it does not do: cache ``loads`` of text, files that fail to check (their diagnostics are
recomputed every time), programs whose entry would exceed :data:`MAX_ENTRY_BYTES`, or the AST (a :class:`tlop.api.Module` loaded from the cache
elaborates again on demand when a caller asks for declarations).
"""

from __future__ import annotations

import hashlib
import hmac
import inspect
import os
import pickle
import sys
import types
from pathlib import Path
from typing import Optional

from tlop.runtime.cachedir import UntrustedEntry, read_entry, secret_key, trusted_directory, user_cache_dir
from tlop.runtime.diagnostics import Span

__all__ = ["CheckedEntry", "get", "put", "cache_directory", "compiler_fingerprint", "stats"]

_MAGIC = b"TLOPIR02"
_MAC = 32
#: the largest entry read or written (the whole stdlib's checked IR is well under 1 MB; a file of
#: 10⁵ declarations, about 75 MB); a larger program is not cached
MAX_ENTRY_BYTES = 512 << 20
_FINGERPRINT: Optional[str] = None
#: counters for tests and benchmarks: hits, misses, rejected (damaged/forged), stored
stats = {"hits": 0, "misses": 0, "rejected": 0, "stored": 0}


class CheckedEntry:
    """What a hit gives back: the program and the names of the file's own algorithms."""

    def __init__(self, program, root_algorithms: tuple):
        self.program = program
        self.root_algorithms = root_algorithms


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
def _entry_path(directory: Path, path: Path, content: bytes) -> Path:
    h = hashlib.sha256()
    for part in (_MAGIC.decode(), compiler_fingerprint(), str(path), hashlib.sha256(content).hexdigest()):
        h.update(part.encode())
        h.update(b"\0")
    key = h.hexdigest()
    return directory / key[:2] / f"{key}.ir"


def get(path: Path):
    """The cached program of ``path`` (a :class:`CheckedEntry`), or None."""
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
    entry = _entry_path(directory, path, content)
    try:
        data = read_entry(entry, MAX_ENTRY_BYTES)
    except UntrustedEntry:
        data = b""  # rejected below
    if data is None:
        stats["misses"] += 1
        return None
    payload = _verified(data, secret)
    if payload is None:
        stats["rejected"] += 1
        stats["misses"] += 1
        _remove(entry)
        return None
    record = pickle.loads(payload)  # noqa: S301 - authenticated with the user's own key above
    if not _still_valid(record, path, content):
        stats["misses"] += 1
        return None
    stats["hits"] += 1
    return CheckedEntry(record["program"], tuple(record["root_algorithms"]))


def put(path: Path, modules: list, elaborated) -> bool:
    """Remember the result of loading ``path`` (``modules``: the loader's list of
    :class:`~tlop.frontend.loader.LoadedModule`, ``elaborated``: the elaborator's result).
    False when the cache is disabled or not writable."""
    directory = cache_directory()
    if directory is None:
        return False
    import tempfile

    from tlop.frontend import ast as A
    from tlop.frontend.loader import _display_name, _find_import

    try:
        secret = _secret(directory, create=True)
        if secret is None:
            return False
        files, imports = [], []
        for lm in modules:
            files.append((str(lm.path), _display_name(lm.path), hashlib.sha256(lm.source.text.encode("utf-8")).hexdigest()))
            for d in lm.module.decls:
                if isinstance(d, A.ImportDecl):
                    target = _find_import(lm.path, d.path)
                    imports.append((str(lm.path), d.path, None if target is None else str(target)))
        content = path.read_bytes()
        record = {"program": elaborated.program, "root_algorithms": tuple(elaborated.root_algorithms),
                  "files": files, "imports": imports}
        payload = dumps(record)
        if len(_MAGIC) + _MAC + len(payload) > MAX_ENTRY_BYTES:
            return False  # :func:`get` would refuse it (and delete it) unread
        entry = _entry_path(directory, path, content)
        entry.parent.mkdir(mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=f".{entry.name[:16]}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:  # two writes: no copy of a payload of tens of MB
                f.write(_MAGIC + hmac.new(secret, payload, hashlib.sha256).digest())
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
#: types the C writer writes directly, learnt the first time one is met: type ->
#: (module, qualname) for NEWOBJ then BUILD of the instance's __dict__, or
#: (module, qualname, slot names) for NEWOBJ then BUILD of (None, {slot: value}), with True
#: after them for a class of :data:`_VALUE_CLASSES`
_PLAIN: dict = {}
#: classes of values (equal by their fields, never compared by identity) that the C writer
#: writes each time it meets one instead of keeping one copy through the memo: a span is
#: shared by an AST node and its IR node but hardly ever met twice in the IR, and the memo of
#: the million spans of 10⁵ declarations would take hundreds of MB
_VALUE_CLASSES = (Span,)


def _plain(cls):
    """How pickle writes an instance of ``cls``, when that is NEWOBJ of the class and a BUILD
    that :func:`pickle.loads` applies without calling the class's code: ``(module, qualname)``
    when the state is the instance's ``__dict__``; ``(module, qualname, slot names)`` when
    ``cls`` has slots and no ``__dict__`` (the state ``(None, {slot: value})``, restored with
    ``object.__setattr__``), each slot a plain member; None otherwise — a reduce, getstate,
    setstate or getnewargs of its own, a ``__new__``, ``__setattr__``, ``__getattr__`` or
    ``__getattribute__`` of its own with slots, or a class not reachable under its module and
    qualname."""
    import copyreg

    if cls in copyreg.dispatch_table or cls.__new__ is not object.__new__:
        return None
    for name, default in (("__reduce_ex__", object.__reduce_ex__), ("__reduce__", object.__reduce__),
                          ("__getstate__", object.__getstate__)):
        if getattr(cls, name, None) is not default:
            return None
    if any(hasattr(cls, n) for n in ("__setstate__", "__getnewargs_ex__", "__getnewargs__")):
        return None
    target = sys.modules.get(cls.__module__)
    for part in cls.__qualname__.split("."):
        target = getattr(target, part, None)
    if target is not cls:
        return None
    names = (cls.__module__, cls.__qualname__)
    slotted = ["__slots__" in vars(k) for k in cls.__mro__[:-1]]
    if not any(slotted):
        return names
    if cls.__setattr__ is not object.__setattr__ or not all(slotted):
        return None  # a frozen class; a base without slots gives instances a __dict__
    if cls.__dictoffset__ or cls.__getattribute__ is not object.__getattribute__ or hasattr(cls, "__getattr__"):
        return None  # a __dict__ among the slots; reads that may make new objects
    slots = copyreg._slotnames(cls)
    # each slot a plain member (the value it holds is the value read: no descriptor of a
    # subclass or property in the way, so what the C writer memoises stays alive)
    if not all(isinstance(inspect.getattr_static(cls, n, None), types.MemberDescriptorType) for n in slots):
        return None
    entry = names + (tuple(slots),)
    return entry + (True,) if cls in _VALUE_CLASSES else entry


def _reduce(obj):
    """The C writer's way out for a type it does not write itself: learns plain types, gives
    the reduce value of others (what pickle would write)."""
    cls = type(obj)
    if cls not in _PLAIN:
        names = _plain(cls)
        if names is not None:
            _PLAIN[cls] = names
    return obj.__reduce_ex__(4)


def dumps(record) -> bytes:
    """A pickle of ``record`` for :func:`pickle.loads`: written by the C writer of
    ``grammar/native/cpython/irencode.c`` when it is built (about three times faster on the IR),
    else by :func:`pickle.dumps`, the reference — also when the C writer refuses something."""
    from tlop.frontend.native import ir_encoder

    encode = ir_encoder()
    if encode is not None:
        import copyreg

        try:
            return encode(record, _PLAIN, _reduce, copyreg.__newobj__)
        except ValueError:  # something it does not write: the reference does
            pass
    return pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)


def _verified(data: bytes, secret: bytes) -> Optional[bytes]:
    if len(data) < len(_MAGIC) + _MAC or not data.startswith(_MAGIC):
        return None
    mac = data[len(_MAGIC):len(_MAGIC) + _MAC]
    payload = data[len(_MAGIC) + _MAC:]
    if not hmac.compare_digest(mac, hmac.new(secret, payload, hashlib.sha256).digest()):
        return None
    return payload


def _still_valid(record: dict, path: Path, content: bytes) -> bool:
    """Every file has its recorded content and name, every import resolves as it did."""
    from tlop.frontend.loader import _display_name, _find_import

    try:
        for fpath, shown, digest in record["files"]:
            p = Path(fpath)
            data = content if p == path else p.read_bytes()
            if hashlib.sha256(data).hexdigest() != digest or _display_name(p) != shown:
                return False
        for importer, rel, target in record["imports"]:
            now = _find_import(Path(importer), rel)
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
