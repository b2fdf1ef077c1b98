"""When the Python API evaluates a schedule with native code instead of the interpreter.

What it does: :class:`NativeTier` (one per loaded module) keeps, per (algorithm, profile,
mapping) — keyed by *value*: a profile object by its content digest
(:meth:`tlop.runtime.profile.Profile.fingerprint`, computed once per object), a frozen mapping
by itself (``tlop.sequential(8)`` built afresh in a loop is the same key), a name or text as
given — an :class:`Entry`: the compiled evaluator once there is one, and what the interpreter
has cost so far.  The choice is :mod:`tlop.backends.engine_policy`'s:

* the first scalar call of an entry asks :func:`~tlop.backends.engine_policy.choose` with the
  bound point: an evaluation predicted to cost more than compiling (or loading from the on-disk
  cache) compiles at once and answers natively;
* a cheap call is interpreted and its measured time added to the entry's tally
  (:class:`~tlop.backends.engine_policy.Tally`); once the interpreted time spent reaches a
  share (:data:`~tlop.backends.engine_policy.RENT_SHARE`) of what loading the cached code (when
  it is on disk) or compiling it costs, the evaluator is compiled and answers every later call.

Native and interpreted results agree to 1e-12 relative (the property tests of
``tests/test_jit_schedules.py`` and ``tests/test_jit_dataflow.py``); errors are the
interpreter's (the evaluator re-runs it on a failing point).  Only algorithms with a schedule
(τ-Lop stages, or a LogGP/pLogP/LogGPH dataflow program) are tiered (their interpreter path is
the slow one; closed forms keep the interpreter's exact numbers), only calls whose arguments are
all plain ``int`` or ``float`` values, and only when the JIT compiles the algorithm: anything
else — an array, a string with a unit, ``invalid="nan"``, a missing llvmlite — stays with the
interpreter.

A profile given as a name or path string is keyed by its file's *content* (sha256, re-read when
the file's stat signature changes), not by the string: an edited file is recompiled for.

What it does not do: decide anything for the command line (:func:`tlop.cli.common._engine`
asks the same policy), or keep entries for profiles and mappings no longer used (at most
:data:`MAX_ENTRIES` per module, then it starts over).
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any, Optional

from tlop import ir
from tlop.backends import engine_policy

__all__ = ["NativeTier", "Entry", "MAX_ENTRIES"]

#: entries kept per module
MAX_ENTRIES = 64
_SCALARS = (float, int)


#: resolved profile file -> (stat signature, sha256 of its content)
_DIGESTS: dict = {}


def _profile_file(spec: str) -> Optional[Path]:
    """The file a profile given by name or path is read from (as
    :func:`tlop.runtime.profile.load_profile` resolves it), or None."""
    from tlop.runtime.profile import _bundled_dir, bundled_profiles

    path = Path(spec)
    if path.is_file():
        return path
    bundled = bundled_profiles()
    if spec in bundled:
        return Path(bundled[spec])
    example = _bundled_dir() / "examples" / f"{spec[len('examples/'):]}.json"
    return example if spec.startswith("examples/") and example.is_file() else None


def _content_key(profile) -> tuple:
    """The key of a profile given as a name or path: the sha256 of the file's content (re-hashed
    whenever the file's inode, size, modification or change time differs), so that a changed
    file is never answered with code compiled for its old tables."""
    spec = os.fspath(profile)
    path = _profile_file(spec) if isinstance(spec, str) else None
    if path is None:
        return ("unresolved", spec)  # the interpreter reports the error
    try:
        st = path.stat()
        sig = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        got = _DIGESTS.get(str(path))
        if got is None or got[0] != sig:
            got = (sig, hashlib.sha256(path.read_bytes()).hexdigest())
            if len(_DIGESTS) > 256:
                _DIGESTS.clear()
            _DIGESTS[str(path)] = got
    except OSError:
        return ("unresolved", spec)
    return ("content", got[1])


class Entry:
    """One (algorithm, profile, mapping): its evaluator (None: not compiled yet), whether it
    can be tiered at all, and the interpreted time spent on it."""
    __slots__ = ("ev", "tierable", "fresh", "tally", "probed", "alg", "profile", "mapping")

    def __init__(self, alg, profile, mapping, tierable: bool):
        self.ev = None
        self.tierable = tierable
        self.fresh = True
        self.tally = engine_policy.Tally()
        self.probed = False
        self.alg, self.profile, self.mapping = alg, profile, mapping  # strong: the fast path compares identities


class NativeTier:
    """The entries of one module's algorithms."""

    def __init__(self, program: ir.Program):
        self.program = program
        self._entries: dict = {}
        self._digests: dict = {}   # id(profile object) -> (profile, digest)
        self._last: Optional[Entry] = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ keys
    def _profile_key(self, profile):
        if profile is None:
            return profile
        if isinstance(profile, (str, os.PathLike)):
            return _content_key(profile)  # a name or path: the file's content, not the string
        got = self._digests.get(id(profile))
        if got is None or got[0] is not profile:
            fp = getattr(profile, "fingerprint", None)
            digest = ("profile", fp()) if callable(fp) else ("object", id(profile))
            if len(self._digests) >= MAX_ENTRIES:
                self._digests.clear()
            got = self._digests[id(profile)] = (profile, digest)
        return got[1]

    @staticmethod
    def _mapping_key(mapping):
        if mapping is None or isinstance(mapping, str):
            return mapping
        try:
            hash(mapping)
        except TypeError:
            return ("object", id(mapping))
        return mapping

    def entry(self, alg: ir.Algorithm, profile, mapping) -> Entry:
        """The entry of this call (the last one when the same objects come again)."""
        last = self._last
        if last is not None and last.alg is alg and last.profile is profile and last.mapping is mapping \
                and not isinstance(profile, (str, os.PathLike)):
            return last
        key = (alg.name, self._profile_key(profile), self._mapping_key(mapping))
        e = self._entries.get(key)
        if e is None or e.alg is not alg:
            tierable = ir.has_schedule(alg.body) and (self.program.model in ("taulop", "")
                                                      or engine_policy.is_dataflow(self.program))
            e = Entry(alg, profile, mapping, tierable)
            with self._lock:
                if len(self._entries) >= MAX_ENTRIES:
                    self._entries.clear()
                self._entries[key] = e
        else:  # the same values in new objects: keep the newest for the identity fast path
            e.profile, e.mapping = profile, mapping
        self._last = e
        return e

    # ------------------------------------------------------------------ decisions
    @staticmethod
    def scalar(args: dict) -> bool:
        for v in args.values():
            if type(v) not in _SCALARS:
                return False
        return True

    def first_call(self, e: Entry, env: dict, profile, mapping) -> Optional[Any]:
        """Called with the bound point of an entry's first scalar call: the evaluator when the
        policy says an evaluation like this one costs more than getting native code."""
        e.fresh = False
        if not e.tierable:
            return None
        choice = engine_policy.choose(self.program, e.alg, env, 1, profile=profile, mapping=mapping,
                                      cached=lambda: self._cached(e, profile, mapping), schedule_only=False)
        if choice.engine != "jit":
            return None
        return self._compile(e, profile, mapping)

    def interpreted(self, e: Entry, seconds: float, profile, mapping) -> None:
        """Count ``seconds`` of interpreting for ``e``; compile once that has paid for it."""
        if not e.tierable or e.ev is not None:
            return
        if e.tally.add(seconds, cached=True) and not e.probed:
            e.probed = True
            if self._cached(e, profile, mapping):
                self._compile(e, profile, mapping)
                return
        if e.tally.add(0.0, cached=False):
            self._compile(e, profile, mapping)

    def _cached(self, e: Entry, profile, mapping) -> bool:
        try:
            from tlop.backends.jit.evaluator import is_cached
            from tlop.runtime.profile import as_profile
        except ImportError:
            return False
        from tlop.runtime.diagnostics import TlopError

        try:
            return is_cached(self.program, e.alg.name, as_profile(profile), mapping)
        except TlopError:
            return False

    def _compile(self, e: Entry, profile, mapping):
        from tlop.runtime.diagnostics import TlopError

        try:
            from tlop.backends.jit import compile_algorithm
            from tlop.runtime.profile import as_profile

            ev = compile_algorithm(self.program, e.alg.name, as_profile(profile), mapping=mapping)
        except (ImportError, TlopError):
            e.tierable = False
            return None
        ev.warn_per_call = True  # each API call is one evaluation: it warns about its out-of-grid lookups
        e.ev = ev
        return ev
