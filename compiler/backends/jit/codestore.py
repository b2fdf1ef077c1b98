"""Native code for one specialisation of an algorithm: its cache key, and where it comes from.

What it does: :func:`_code_key` is the cache key of one compiled specialisation (the IR the code
depends on, the profile's structure, the channel arguments, the scalar mask, the mapping kind,
the closed form's variable, the configuration fields, the llvmlite/LLVM versions, triple and
CPU, and a digest of the JIT's own source); :func:`_obtain` gets its native code from, in
order, the process (an object is loaded into the engine once: :data:`_LOADED`), the on-disk
cache (:mod:`tlop.backends.jit.cache`), or the code generator
(:class:`tlop.backends.jit.codegen.CodeGen`), timing it (:class:`CompileStats`);
:func:`is_cached` says whether that would need no code generation; :func:`closed_variant` is the
lowered algorithm a schedule is compiled as.

What it does not do: bind arguments, call the code or report errors
(:class:`tlop.backends.jit.evaluator.Evaluator`), or decide when a cached entry can be trusted
(:mod:`tlop.backends.jit.cache`).
"""

from __future__ import annotations

import ctypes
import hashlib
import threading
import time
from pathlib import Path
from typing import Optional

from tlop import ir as tir
from tlop.runtime.diagnostics import TlopError

from tlop.backends.jit import cache as _cache
from tlop.backends.jit.codegen import CodeGen, check_compilable, param_infos
from tlop.backends.jit.engine import engine
from tlop.backends.jit.tables import ProfileLayout
from tlop.lower.schedules import lower_schedule

__all__ = ["CompileStats", "is_cached", "closed_variant"]

_BATCH_T = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_LOADED: dict = {}  # cache key -> {symbol: address}
_LOAD_LOCK = threading.Lock()
_SOURCE_HASH: Optional[str] = None


def _source_hash() -> str:
    """A digest of the JIT's own code, so a changed code generator never reuses stale objects."""
    global _SOURCE_HASH
    if _SOURCE_HASH is None:
        h = hashlib.sha256()
        here = Path(__file__).parent
        # every module of this package (the code generators are split over several) and the budget
        for path in sorted(here.glob("*.py")) + [here.parent / "budget.py"]:
            h.update(path.read_bytes())
        for path in sorted((here.parent.parent / "ir" / "taulop").glob("*.py")):  # the schedule semantics
            h.update(path.read_bytes())
        _SOURCE_HASH = h.hexdigest()
    return _SOURCE_HASH


class CompileStats:
    """How the code of an evaluator was obtained: ``source`` is ``"process"``, ``"disk"`` or
    ``"compiled"``; ``seconds`` the time it took."""

    def __init__(self, source: str, seconds: float, key: str):
        self.source, self.seconds, self.key = source, seconds, key

    def __repr__(self) -> str:
        return f"<CompileStats {self.source} {self.seconds * 1e3:.2f} ms>"


class _Code:
    """Native code for one channel specialisation of one algorithm on one profile layout
    (``mask == 0``), or one batch loop specialised for the arguments of ``mask`` being
    scalars (``mask != 0``, no scalar entry points; see :meth:`Evaluator.batch`)."""

    def __init__(self, key: str, sym: str, addrs: dict, stats: CompileStats, llvm_ir: Optional[str],
                 mask: int = 0):
        self.key, self.sym, self.addrs, self.stats, self.llvm_ir = key, sym, addrs, stats, llvm_ir
        self.batch = _BATCH_T(addrs[f"{sym}_batch"])
        self.variants: dict = {}  # scalar mask -> _Code


def _program_repr(program: tir.Program, alg: tir.Algorithm) -> str:
    """Everything of ``program`` the code of ``alg`` depends on: channels, tables, scalars,
    transmissions, the model (which gives schedules their meaning), the channels' placement
    and contention (which decide a send's channel and group), and the platform's functions a
    dataflow send is priced with (``send_overhead`` …: called by name, not through ``alg``'s
    body — two modules that differ only there once shared one compiled object)."""
    from tlop.backends.dataflow_names import DATAFLOW_FUNCTIONS

    priced_by = sorted((n, program.algorithms[n]) for n in DATAFLOW_FUNCTIONS if n in program.algorithms)
    return repr((program.channels, sorted(program.tables.items()), sorted(program.scalars.items()),
                 sorted(program.transmissions.items()), program.model, sorted(program.channel_info.items()), alg,
                 priced_by))


def _closed_kind(program: tir.Program, kind: Optional[str]) -> Optional[str]:
    """The mapping kind closed forms are derived for: none in a dataflow model (LogGP, pLogP,
    LogGPH: the closed forms are τ-Lop's; the dataflow program is compiled as it is)."""
    from tlop.backends.dataflow_names import DATAFLOW_MODELS

    return None if program.model in DATAFLOW_MODELS else kind


def closed_variant(program: tir.Program, alg: tir.Algorithm, kind: Optional[str]):
    """``(algorithm, q)``: the lowered algorithm this evaluator compiles
    (:func:`tlop.lower.schedules.lower_schedule`): for a schedule under a sequential or
    round-robin mapping with a closed form, ``if conditions then closed form else schedule`` and
    the name of its ranks-per-node variable — a stage it covers costs a few table lookups, not an
    enumeration; else ``(alg, None)`` (the reason is on the lowering, and in debug output)."""
    low = lower_schedule(program, alg, _closed_kind(program, kind))
    return low.algorithm, low.q


def _code_key(program, alg, layout: ProfileLayout, combo: dict, mask: int = 0, mapping_kind=None,
              closed_q=None, config_fields: tuple = ()) -> str:
    """The cache key of one compiled specialisation."""
    h = hashlib.sha256()
    for part in ("tlop-jit-2", _source_hash(), engine().describe(), _program_repr(program, alg),
                 layout.signature(), repr(sorted(combo.items())), f"scalars={mask}", f"mapping={mapping_kind}",
                 f"closed={closed_q}", f"config={config_fields!r}"):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def is_cached(program: tir.Program, name: str, profile, mapping=None) -> bool:
    """Whether :func:`compile_algorithm` would find the default specialisation of ``name`` for
    ``profile`` and ``mapping`` already loaded or in the on-disk cache (no code is generated;
    the closed form is derived, once per process, as compiling would).  False when the JIT
    refuses the algorithm."""
    from tlop.backends.jit.configdata import config_fields

    alg = program.algorithms.get(name)
    if alg is None:
        return False
    try:
        check_compilable(alg, program)
        if alg.over is not None:
            from tlop.backends.binding import as_mapping

            mapping = as_mapping(mapping)
        else:
            mapping = None
        layout = ProfileLayout(program, profile, False)
        kind = mapping.kind if mapping is not None else None
        code_alg, closed_q = closed_variant(program, alg, kind)
        fields = config_fields(alg) if mapping is not None else ()
        combo = {i.name: int(i.default) if i.default is not None else 0 for i in param_infos(alg) if i.channel}
        key = _code_key(program, code_alg, layout, combo, 0, kind, closed_q, fields)
    except TlopError:
        return False
    return key in _LOADED or _cache.default_cache().has(key)


def _obtain(program, alg, layout: ProfileLayout, combo: dict, mask: int = 0, mapping_kind=None,
            closed_q=None, config_fields: tuple = ()) -> _Code:
    t0 = time.perf_counter()
    eng = engine()
    key = _code_key(program, alg, layout, combo, mask, mapping_kind, closed_q, config_fields)
    sym = "tlop_" + key[:24]
    symbols = [f"{sym}_batch"]
    with _LOAD_LOCK:
        addrs = _LOADED.get(key)
        if addrs is not None:
            return _Code(key, sym, addrs, CompileStats("process", time.perf_counter() - t0, key), None, mask)
        store = _cache.default_cache()
        obj = store.get(key)
        if obj is not None:
            try:
                addrs = eng.load_object(obj, tuple(symbols))
            except ValueError:
                store.invalidate(key)
                addrs = None
            if addrs is not None:
                _LOADED[key] = addrs
                return _Code(key, sym, addrs, CompileStats("disk", time.perf_counter() - t0, key), None, mask)
        cg = CodeGen(program, alg, layout, combo, sym, scalar_mask=mask, mapping_kind=mapping_kind,
                     closed_q=closed_q, config_fields=config_fields)
        text = cg.build()
        obj = eng.compile_ir(text, f"{alg.name}")
        store.put(key, obj)
        addrs = eng.load_object(obj, tuple(symbols))
        _LOADED[key] = addrs
        return _Code(key, sym, addrs, CompileStats("compiled", time.perf_counter() - t0, key), text, mask)
