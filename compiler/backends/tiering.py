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

What it does not do: decide anything for the command line (its ``--engine`` option does), or
keep evaluators for profiles and mappings that are no longer used (at most
:data:`MAX_ENTRIES` per module, then it starts over).
"""

from __future__ import annotations

import threading
from typing import Any, Optional

from tlop import ir

__all__ = ["NativeTier", "JIT_AFTER", "MAX_ENTRIES"]

#: the scalar evaluation of one (algorithm, profile, mapping) from which native code is used
JIT_AFTER = 16
#: evaluators (and counters) kept per module
MAX_ENTRIES = 64
_SCALARS = (float, int)
_NEVER = False


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
        return (name, part(profile), part(mapping))

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
