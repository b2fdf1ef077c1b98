"""When the Python API evaluates a schedule with native code instead of the interpreter.

What it does: :class:`NativeTier` (one per loaded module) counts the scalar evaluations of each
(algorithm, profile, mapping) and, from the :data:`JIT_AFTER`-th on, answers them with an
evaluator compiled by :mod:`tlop.backends.jit` for that profile and mapping (loaded from the
on-disk cache when it is there).  Compiling costs about a second the first time on this kind of
machine, so one-off evaluations stay in the interpreter; a loop of evaluations pays it once and
then costs a few microseconds a call instead of the interpreter's hundreds
(``bench/bench_schedules.py``).  Native and interpreted results agree to 1e-12 relative (the
property tests of ``tests/test_jit_schedules.py``); errors are the interpreter's (the evaluator
re-runs it on a failing point).

Only algorithms with a τ-Lop schedule are tiered (their interpreter path is the slow one; closed
forms keep the interpreter's exact numbers), only calls whose arguments are all plain ``int`` or
``float`` values, and only when the JIT can compile the algorithm at all: anything else — an
array, a string with a unit, ``invalid="nan"``, LogGP/pLogP schedules, a missing llvmlite —
stays with the interpreter, always.

A profile given as a name or path string is keyed by its file's *content* (sha256, re-read when
the file's stat signature changes), not by the string: an edited file is recompiled for.

What it does not do: decide anything for the command line (its ``--engine`` option does), or
keep evaluators for profiles and mappings that are no longer used (at most
:data:`MAX_ENTRIES` per module, then it starts over).
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any, Optional

from tlop import ir

__all__ = ["NativeTier", "JIT_AFTER", "MAX_ENTRIES"]

#: the scalar evaluation of one (algorithm, profile, mapping) from which native code is used
JIT_AFTER = 16
#: evaluators (and counters) kept per module
MAX_ENTRIES = 64
_SCALARS = (float, int)
_NEVER = False


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


class NativeTier:
    """Counters and compiled evaluators of one module's schedules."""

    def __init__(self, program: ir.Program):
        self.program = program
        self._entries: dict = {}
        self._lock = threading.Lock()

    @staticmethod
    def _key(name: str, profile, mapping) -> tuple:
        def part(v):
            return v if v is None or isinstance(v, str) else id(v)
        prof = _content_key(profile) if isinstance(profile, (str, os.PathLike)) else part(profile)
        return (name, prof, part(mapping))

    @staticmethod
    def _same(a, b) -> bool:
        return a is b or (isinstance(a, str) and a == b)

    def evaluator(self, alg: ir.Algorithm, profile, mapping, args: dict) -> Optional[Any]:
        """The native evaluator to answer this call with, or None (the interpreter answers)."""
        for v in args.values():
            if type(v) not in _SCALARS:
                return None
        key = self._key(alg.name, profile, mapping)
        entry = self._entries.get(key)
        if entry is not None and self._same(entry[0], profile) and self._same(entry[1], mapping):
            ev = entry[2]
            if ev is not None:
                return ev or None
            entry[3] += 1
            if entry[3] < JIT_AFTER:
                return None
        else:
            if not ir.has_schedule(alg.body) or self.program.model not in ("taulop", ""):
                ev = _NEVER
            else:
                ev = None
            with self._lock:
                if len(self._entries) >= MAX_ENTRIES:
                    self._entries.clear()
                self._entries[key] = [profile, mapping, ev, 1]
            return None
        return self._compile(key, alg, profile, mapping)

    def _compile(self, key, alg, profile, mapping):
        from tlop.runtime.diagnostics import TlopError

        try:
            from tlop.backends.jit import compile_algorithm
            from tlop.runtime.profile import as_profile

            ev = compile_algorithm(self.program, alg.name, as_profile(profile), mapping=mapping)
        except (ImportError, TlopError):
            ev = _NEVER
        entry = self._entries.get(key)
        if entry is not None:
            entry[2] = ev
        return ev or None
