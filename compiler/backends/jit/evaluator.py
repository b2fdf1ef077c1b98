"""Compiled evaluators: what ``compile_algorithm`` returns, and how code is found or built.

What it does: :func:`compile_algorithm` binds an algorithm to a profile
(:class:`tlop.backends.jit.tables.ProfileLayout`); the native code of each specialisation comes
from :mod:`tlop.backends.jit.codestore` (the cache key — IR, profile structure, llvmlite/LLVM
versions, triple, CPU, the JIT's own source — and, in order, the process, the on-disk cache or
the code generator).  The resulting :class:`Evaluator`:

* ``ev(P=16, m=1024)`` — a scalar call.  The evaluator is a ``functools.partial`` of the
  native CPython wrapper of :mod:`tlop.backends.jit.pywrap`; anything that wrapper does not handle
  goes to :meth:`Evaluator._call_slow`, which binds arguments exactly like the interpreter
  path (:func:`tlop.backends.binding.bind_arguments`) and raises the same errors.
* ``ev.batch(P=array, m=array)`` — numpy broadcasting in Python, then one native loop over the
  points (split over ``ev.threads`` threads, GIL released).  When the broadcast leaves some
  arguments scalar and the batch is large (``scalar_variant_min``), the loop used is one
  compiled for those scalars (on first use), so work depending only on them is done once.
  Argument checks (NaN, integrality, constraints) run natively per point; the loop reports
  where the first failure can be found and the exact message is recovered from
  :func:`bind_arguments` / the interpreter.

Channel parameters are specialised: each combination of channel arguments gets its own code
(compiled on first use); the scalar fast path serves the defaults.  Error messages for
evaluation errors come from re-running the reference interpreter on the failing point, so
JIT and interpreter report the same words.

What it does not do: simplify the IR (pass a simplified program) or parse ``.tlop`` files.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional

import numpy as np

from tlop import ir as tir
from tlop.backends.binding import bind_arguments, binder_for, broadcast_shape
from tlop.runtime.codes import code_of
from tlop.runtime.diagnostics import Diagnostic, TlopError
from tlop.backends.interp import Interpreter
from tlop.backends.nonfinite import nonfinite_error

from tlop.backends.jit.codegen import ERR_EVAL, ERR_NAN, check_compilable, param_infos
from tlop.backends.jit.codestore import (_LOADED, CompileStats, _closed_kind, _Code, _obtain,  # noqa: F401
                                         _program_repr, closed_variant, is_cached)  # (old home of some: re-exported)
from tlop.backends.jit.pywrap import NativeCall
from tlop.backends.jit.oogwarn import warn_from_address, warn_from_status
from tlop.backends.jit.tables import ProfileLayout, status_words
from tlop.lower.schedules import lower_schedule

__all__ = ["compile_algorithm", "Evaluator", "CompileStats", "is_cached"]

_POOL: Optional[ThreadPoolExecutor] = None
_MIN_CHUNK = 20000  # points per thread below which threads do not pay


def compile_algorithm(program: tir.Program, name: str, profile, *, specialize: bool = False,
                      mapping=None, closed_forms: bool = True) -> "Evaluator":
    """Native code for algorithm ``name`` of ``program`` priced on ``profile``.

    ``specialize=True`` bakes the profile's numbers into the code (faster lookups, one object
    per profile); by default tables are passed as data, so the compiled code is shared by
    every profile with the same table structure.  An algorithm declared ``over`` a process
    mapping needs ``mapping`` (``tlop.sequential(8)`` or its text): the code is compiled for
    the mapping's kind, its numbers (Q, a layout's table) are data of the evaluator.  With
    ``closed_forms`` (the default) a schedule whose closed form is derived for a sequential or
    round-robin mapping is compiled as ``if conditions then closed form else schedule``
    (:func:`closed_variant`); ``closed_forms=False`` always enumerates its stages natively."""
    alg = program.algorithms.get(name)
    if alg is None:
        known = ", ".join(program.algorithms) or "(none)"
        raise TlopError(f"no algorithm '{name}' to compile; algorithms: {known}")
    check_compilable(alg, program)
    if profile is None or isinstance(profile, (str, os.PathLike)):
        from tlop.runtime.profile import as_profile
        profile = as_profile(profile)
    if alg.over is not None:
        from tlop.backends.binding import as_mapping, bind_mapping

        mapping = as_mapping(mapping)
        if mapping is None:
            bind_mapping(alg, {}, None)  # raises the standard message
    else:
        mapping = None
    return Evaluator(program, alg, profile, specialize, mapping, closed_forms)


def _mapping_data(mapping, layout: ProfileLayout, config_fields: tuple = ()):
    """``(tabs, scal, keep)``: the profile's table-pointer and scalar arrays extended with the
    mapping's words (:data:`tlop.backends.jit.schedgen.MAP_WORDS`), a layout's rank → node
    table, and the configuration fields the code reads (:func:`tlop.backends.jit.configdata.config_data`:
    their words after the mapping's, their arrays after the node table); ``keep`` holds the
    arrays alive."""
    from tlop.backends.jit.configdata import config_data
    from tlop.backends.jit.schedgen import MAP_WORDS

    words = np.full(MAP_WORDS, np.nan)
    nodes = np.zeros(1)
    if mapping.kind in ("sequential", "round_robin"):
        words[0] = np.nan if mapping.Q is None else float(mapping.Q)
        words[1] = np.nan if mapping.M is None else float(mapping.M)
        words[4] = np.nan if mapping.rack is None else float(mapping.rack)
    else:
        nodes = np.ascontiguousarray(np.asarray(mapping.node, dtype=np.float64))
        words[2] = float(len(mapping.node))
        words[3] = float(max(mapping.node) + 1)
    cwords, carrays = config_data(mapping, config_fields)
    scal = np.ascontiguousarray(np.concatenate([layout.scalars, words, cwords]))
    tabs = np.array([t.block.ctypes.data for t in layout.tables] + [nodes.ctypes.data]
                    + [a.ctypes.data for a in carrays] + [0], dtype=np.uintp)
    return tabs.ctypes.data, scal.ctypes.data, (tabs, scal, nodes, carrays)


class Evaluator(functools.partial):
    """A compiled algorithm: ``ev(**args) -> float`` and ``ev.batch(**arrays) -> ndarray``.

    An evaluator is a ``functools.partial`` of its native scalar wrapper (:attr:`func`, see
    :mod:`tlop.backends.jit.pywrap`) with no bound arguments: calling ``ev(...)`` is CPython's
    own call of a partial object (vectorcall where the interpreter supports it for subclasses),
    straight into native code, with no Python frame and no patched type slot.  Calls the
    wrapper cannot answer go to :meth:`_call_slow`."""

    #: threads :meth:`batch` may use (large batches only); set per evaluator
    threads: int = 1
    #: batches of at least this many points whose broadcast leaves some arguments scalar get
    #: a batch loop specialised for those scalars (compiled on first use, then cached);
    #: ``None`` never specialises
    scalar_variant_min: Optional[int] = 20000
    #: each scalar call is one evaluation (the API's meaning, :mod:`tlop.backends.tiering`): its
    #: out-of-grid lookups warn even when an earlier call warned about the same table; False:
    #: once per table until the profile's ``new_evaluation()`` (batches never start one)
    warn_per_call: bool = False

    def __new__(cls, program: tir.Program, alg: tir.Algorithm, profile, specialize: bool = False, mapping=None,
                closed_forms: bool = True):
        from tlop.backends.jit import interrupt

        infos = param_infos(alg)
        layout = ProfileLayout(program, profile, specialize)
        tabs, scal = layout.pointers()
        keep = (layout,)
        from tlop.backends.jit.configdata import config_fields

        fields = config_fields(alg) if mapping is not None else ()
        if mapping is not None:
            tabs, scal, arrays = _mapping_data(mapping, layout, fields)
            keep = (layout, arrays)
        interrupt.install()
        native = NativeCall(f"tlop:{alg.name}", tabs, scal, [i.name for i in infos],
                            [i.default for i in infos], [i.channel for i in infos], list(program.channels),
                            status_words(len(layout.tables)), keep)
        self = super().__new__(cls, native.function)
        self.program = program
        self.alg = alg
        self.profile = profile
        self.specialize = specialize
        #: the process mapping of a schedule (None for an algorithm without ``over``)
        self.mapping = mapping
        self._mapping_kind = mapping.kind if mapping is not None else None
        #: the algorithm the code is generated from: ``alg``, or its closed form over the mapping
        #: the lowering (:mod:`tlop.lower.schedules`): why there is no closed form, when there is none
        self.lowering = lower_schedule(program, alg, _closed_kind(program, self._mapping_kind) if closed_forms else None)
        self._code_alg, self._closed_q = self.lowering.algorithm, self.lowering.q
        self.name = alg.name
        self.params = alg.params
        self._infos = infos
        self._names = [p.name for p in alg.params]
        self._channel_params = [i.name for i in infos if i.channel]
        self._binder = binder_for(program, alg)
        self.layout = layout
        self._tabs, self._scal = tabs, scal
        #: the configuration fields the code reads, passed as data (:mod:`tlop.backends.jit.configdata`)
        self._config_fields = fields
        self._codes: dict = {}
        self._lock = threading.Lock()
        self._native = native
        combo = {i.name: int(i.default) if i.default is not None else 0 for i in infos if i.channel}
        self._primary = self._code(combo)
        self.compile_stats = self._primary.stats
        native.set_fallback(self._call_slow)
        native.set_warner(self._warn_native)
        return self

    def __init__(self, *args, **kwargs):  # everything happens in __new__ (a partial is immutable)
        pass

    def __reduce__(self):
        raise TypeError("a compiled evaluator cannot be pickled or copied; compile the algorithm again")

    # ------------------------------------------------------------------ code
    def _code(self, combo: dict) -> _Code:
        k = tuple(sorted(combo.items()))
        code = self._codes.get(k)
        if code is None:
            with self._lock:
                code = self._codes.get(k)
                if code is None:
                    code = _obtain(self.program, self._code_alg, self.layout, combo, mapping_kind=self._mapping_kind,
                                   closed_q=self._closed_q, config_fields=self._config_fields)
                    self._codes[k] = code
                    self._native.set_code([combo[c] for c in self._channel_params],
                                          code.addrs[f"{code.sym}_batch"])
        return code

    def _variant(self, code: _Code, combo: dict, mask: int) -> _Code:
        """The batch loop of ``code`` specialised for the arguments of ``mask`` being scalars."""
        var = code.variants.get(mask)
        if var is None:
            with self._lock:
                var = code.variants.get(mask)
                if var is None:
                    var = _obtain(self.program, self._code_alg, self.layout, combo, mask, self._mapping_kind,
                                  self._closed_q, self._config_fields)
                    code.variants[mask] = var
        return var

    @property
    def llvm_ir(self) -> Optional[str]:
        """The LLVM IR of the default specialisation (None when it was loaded from a cache)."""
        return self._primary.llvm_ir

    def __repr__(self) -> str:
        sig = ", ".join(f"{p.name}: {p.type}" for p in self.params)
        return f"<tlop compiled {self.name}({sig}) on {getattr(self.profile, 'name', '?')}>"

    # ------------------------------------------------------------------ scalar
    def _named(self, args, kwargs) -> dict:
        if len(args) > len(self._names):
            raise TlopError(f"'{self.name}' takes {len(self._names)} arguments, got {len(args)} positional")
        kw = dict(kwargs)
        for name, v in zip(self._names, args):
            if name in kw:
                raise TlopError(f"'{self.name}': argument {name} given twice")
            kw[name] = v
        return kw

    def _call_slow(self, *args, **kwargs):
        """The complete scalar call: binding, checks, specialisation choice, error reports."""
        from tlop.backends.jit.interrupt import raise_if_hit

        raise_if_hit()
        kw = self._named(args, kwargs)
        env = self._binder.bind(kw)
        self._check_mapping(env)
        if any(type(v) is not float for v in env.values()):
            return self.batch(**kw)
        code = self._code({c: int(env[c]) for c in self._channel_params})
        buf = np.array([float(env[n]) for n in self._names] + [0.0], dtype=np.float64)
        ptrs = np.array([buf.ctypes.data + 8 * k for k in range(len(buf))], dtype=np.uintp)
        zeros = np.zeros(len(buf), dtype=np.int64)
        out = np.full(1, np.nan)
        st = np.zeros(status_words(len(self.layout.tables)), dtype=np.int64)
        code.batch(0, 1, ptrs.ctypes.data, zeros.ctypes.data, self._tabs, self._scal, out.ctypes.data,
                   st.ctypes.data)
        r = float(out[0])
        raise_if_hit()
        if st[0] == ERR_EVAL:
            self._raise_eval(env, "")
        warn_from_status(self.layout, st, self.profile, self.warn_per_call)
        if r - r != 0:  # ±inf or NaN
            if self._closed_q is not None:
                self._schedule_error(env)
            raise nonfinite_error(self.name, r, self.program, self.profile, self.alg.body, self._ranked(env),
                                  at=self._describe(env), mapping=self.mapping)
        return r

    def _describe(self, env: dict) -> str:
        parts = []
        for info in self._infos:
            v = float(env[info.name])
            if info.channel:
                parts.append(f"{info.name}={self.program.channels[int(v)]}")
            else:
                parts.append(f"{info.name}={v:g}")
        return ", ".join(parts)

    def _check_mapping(self, env: dict) -> None:
        if self.mapping is not None:
            from tlop.backends.binding import bind_mapping

            bind_mapping(self.alg, env, self.mapping)  # raises the mapping's message

    def _schedule_error(self, env: dict) -> None:
        """Raise the interpreter's error at ``env``, if it has one.  A closed form does not
        check what the schedule's enumeration checks (an infinite weight makes it infinite,
        where the schedule says the weight must be a positive number): a non-finite result of
        code built from a closed form is explained by the schedule."""
        try:
            self._interp(env)
        except TlopError:
            raise

    def _ranked(self, env: dict) -> dict:
        """``env`` with the process count under :data:`tlop.ir.RANKS` for a schedule."""
        if self.mapping is None:
            return env
        env = dict(env)
        env[tir.RANKS] = env["P"]
        return env

    def _interp(self, env: dict):
        with np.errstate(all="ignore"):
            return Interpreter(self.program, self.profile, self.mapping).eval(self.alg.body, self._ranked(env))

    def _raise_eval(self, env: dict, where: str):
        try:
            self._interp(env)
        except TlopError:
            raise
        raise TlopError(f"'{self.name}': evaluation error at {self._describe(env)}{where}")

    def _warn_native(self, address: int) -> None:
        """The native scalar path's warner: the out-of-grid warnings of the status words at
        ``address`` (:mod:`tlop.backends.jit.oogwarn`)."""
        warn_from_address(self.layout, address, self.profile, self.warn_per_call)

    # ------------------------------------------------------------------ batch
    def batch(self, **arrays: Any) -> np.ndarray:
        """The cost at every point of the broadcast of ``arrays`` (numpy rules); parameters
        left out take their defaults.  Channel parameters take one channel (index or name)."""
        unknown = [k for k in arrays if k not in self._names]
        if unknown:
            from tlop.backends.renamed import renamed_arguments

            arrays = renamed_arguments(arrays, self._names, self.name)   # S, s: now seg (warned)
            if any(k not in self._names for k in arrays):
                bind_arguments(self.program, self.alg, arrays)  # raises the standard message
        combo = {}
        values = []
        for info in self._infos:
            if arrays.get(info.name, 0) is None:  # an explicit None is not "left out"
                bind_arguments(self.program, self.alg, arrays)  # raises the standard message
            v = arrays.get(info.name, None)
            if info.channel:
                if v is None:
                    if info.default is None:
                        bind_arguments(self.program, self.alg, arrays)
                    combo[info.name] = int(info.default)
                else:
                    if isinstance(v, str) or np.ndim(v) != 0:
                        env = bind_arguments(self.program, self.alg, {info.name: v} | {
                            k: arrays[k] for k in arrays if k != info.name})
                        combo[info.name] = int(env[info.name])
                    else:
                        combo[info.name] = int(self._check_channel(info, v, arrays))
                values.append(np.asarray(float(combo[info.name])))
                continue
            if v is None:
                if info.default is None:
                    bind_arguments(self.program, self.alg, arrays)
                v = info.default
            try:
                a = np.asarray(v, dtype=np.float64)
            except (TypeError, ValueError, OverflowError):
                bind_arguments(self.program, self.alg, arrays)
                raise
            values.append(a)
        try:
            shapes = {a.shape for a in values}
            shapes.discard(())
            shape = shapes.pop() if len(shapes) == 1 else np.broadcast_shapes(*(a.shape for a in values))
        except ValueError:
            shape = broadcast_shape(self.name, dict(zip(self._names, values)))  # raises the shared message
        code = self._code(combo)
        n = math.prod(shape)
        keep, ptrs, strides = [], [], []
        for a in values:
            if a.size == 1:
                a = np.ascontiguousarray(a.reshape(1))
                strides.append(0)
            else:
                if a.shape != shape or not a.flags.c_contiguous:
                    a = np.ascontiguousarray(np.broadcast_to(a, shape))
                strides.append(1)
            keep.append(a)
            ptrs.append(a.ctypes.data)
        mask = 0
        for k, (info, st_) in enumerate(zip(self._infos, strides)):
            if st_ == 0 and not info.channel:
                mask |= 1 << k
        limit = self.scalar_variant_min
        if mask and limit is not None and n >= limit:
            code = self._variant(code, combo, mask)
        # one scratch block: argument pointers, strides, then each chunk's status words
        k = len(ptrs) + 1
        nst = status_words(len(self.layout.tables))
        chunks = self._chunks(n)
        scratch = np.zeros(2 * k + len(chunks) * nst, dtype=np.int64)
        scratch[:k - 1] = np.array(ptrs, dtype=np.uint64).view(np.int64)
        scratch[k:2 * k - 1] = strides
        sts = scratch[2 * k:].reshape(len(chunks), nst)
        base = scratch.ctypes.data
        out = np.empty(shape, dtype=np.float64)
        args = (base, base + 8 * k, self._tabs, self._scal, out.ctypes.data)
        st0 = base + 16 * k
        if len(chunks) == 1:
            code.batch(0, n, *args, st0)
        else:
            pool = _pool(len(chunks))
            futs = [pool.submit(code.batch, lo, hi, *args, st0 + 8 * nst * j)
                    for j, (lo, hi) in enumerate(chunks)]
            for f in futs:
                f.result()
        from tlop.backends.jit.interrupt import raise_if_hit

        if sts[:, 0].any():
            raise_if_hit()
        flat = out.reshape(-1)
        for k, (lo, hi) in enumerate(chunks):
            if sts[k, 0] != 0:
                # the first failure of the chunk: the first NaN before the first evaluation
                # error (argument failure or NaN result), else that evaluation error
                e0 = int(sts[k, 1])
                has_eval = int(sts[k, 0]) == ERR_EVAL
                nan = np.flatnonzero(~np.isfinite(flat[lo:min(e0 + 1, hi)]))
                i = lo + int(nan[0]) if nan.size else e0
                code = ERR_EVAL if has_eval and i == e0 else ERR_NAN
                self._batch_failure(code, i, keep, strides, arrays, combo, shape, float(flat[i]))
        warn_from_status(self.layout, sts)
        return out

    def _check_channel(self, info, v, arrays):
        f = float(v)
        if not f.is_integer() or not 0 <= f < len(self.program.channels):
            bind_arguments(self.program, self.alg, arrays)
        return f

    @staticmethod
    def _chunks_for(n: int, threads: int) -> list:
        k = max(1, min(threads, n // _MIN_CHUNK))
        bounds = [n * j // k for j in range(k + 1)]
        return list(zip(bounds[:-1], bounds[1:]))

    def _chunks(self, n: int) -> list:
        return self._chunks_for(n, max(1, int(self.threads)))

    def _point_env(self, i: int, keep, strides, combo) -> dict:
        env = {}
        for info, a, s in zip(self._infos, keep, strides):
            env[info.name] = float(a.reshape(-1)[i * s])
        return env

    def _arguments_ok(self, env: dict) -> bool:
        """The native argument checks, in Python (NaN, integrality, constraint)."""
        for info in self._infos:
            v = float(env[info.name])
            if info.channel:
                continue
            if v != v or (info.integer and float(np.floor(v)) != v):
                return False
            if info.op is not None:
                b = info.bound
                ok = {"<": v < b, "<=": v <= b, ">": v > b, ">=": v >= b, "==": v == b, "!=": v != b}[info.op]
                if not ok:
                    return False
        if self._binder.requires is not None and not np.all(self._binder.requires_mask(env)):
            return False
        if self.mapping is not None:
            from tlop.runtime.mapping import MappingError

            try:
                self.mapping.check(int(env["P"]))
            except MappingError:
                return False
        return True

    def _batch_failure(self, code, i, keep, strides, arrays, combo, shape, value=math.nan):
        env = self._point_env(i, keep, strides, combo)
        index = np.unravel_index(i, shape) if shape else ()
        where = f" (batch point {tuple(int(x) for x in index)})"
        if not self._arguments_ok(env):  # argument checks come first, as in the interpreter
            bind_arguments(self.program, self.alg, arrays)  # the vectorised message, with counts
            bind_arguments(self.program, self.alg, env)
            self._check_mapping(env)
            raise TlopError(f"'{self.name}': invalid argument at {self._describe(env)}{where}")
        if code == ERR_EVAL:
            try:
                self._interp(env)
            except TlopError as err:
                first = err.diagnostics[0]
                raise TlopError(Diagnostic(f"{first.message} at {self._describe(env)}{where}", first.span,
                                           code=code_of(first))) from None
            raise TlopError(f"'{self.name}': evaluation error at {self._describe(env)}{where}")
        if self._closed_q is not None:
            try:
                self._schedule_error(env)
            except TlopError as err:
                first = err.diagnostics[0]
                raise TlopError(Diagnostic(f"{first.message} at {self._describe(env)}{where}", first.span,
                                           code=code_of(first))) from None
        raise nonfinite_error(self.name, value, self.program, self.profile, self.alg.body, self._ranked(env),
                              where=where, at=self._describe(env), mapping=self.mapping)


def _pool(k: int) -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None or _POOL._max_workers < k:  # noqa: SLF001
        _POOL = ThreadPoolExecutor(max_workers=max(k, os.cpu_count() or 1), thread_name_prefix="tlop-jit")
    return _POOL

