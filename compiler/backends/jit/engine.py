"""The one LLVM engine of the process: target machine, optimisation pipeline, code loading.

What it does: initialises LLVM once (native target, host CPU name and features), owns a single
long-lived MCJIT execution engine, verifies every module it is given, optimises it through the
new pass builder at a level chosen by the module's size (:data:`OPT_LEVELS`: O3, O1, none; a
module beyond :data:`MAX_IR_CHARS` is refused with a clear error), emits a relocatable object file (the unit the on-disk cache
stores) and loads object files into the engine, returning the addresses of named functions.
The CPython C-API functions the generated call wrappers use, the C library's ``malloc``,
``calloc``, ``realloc``, ``free`` and ``qsort`` (schedule stages) and the words of
:mod:`tlop.backends.jit.interrupt` are registered as symbols so that a cached object file
links against the running process.

What it does not do: generate code (:mod:`tlop.backends.jit.codegen`), decide cache keys
(:mod:`tlop.backends.jit.cache`), or ever unload code: a loaded object stays for the life of the
process (each distinct object is loaded once; :mod:`tlop.backends.jit.evaluator` keeps the index).
"""

from __future__ import annotations

import ctypes
import threading
from typing import Optional

import llvmlite
import llvmlite.binding as llvm

from tlop.runtime.diagnostics import TlopError

__all__ = ["Engine", "engine", "target_description", "opt_level", "OPT_LEVELS", "MAX_IR_CHARS"]

#: C-API functions the generated Python call wrappers may reference (see :mod:`tlop.backends.jit.pywrap`)
_PYAPI = ("PyFloat_FromDouble", "PyFloat_AsDouble", "PyErr_Occurred", "PyErr_Clear",
          "PyDict_GetItem", "PyDict_Size", "PyObject_Call", "PyCapsule_GetPointer",
          "PyLong_AsDouble", "PyDict_Next", "PyObject_GetAttrString", "Py_DecRef")
#: C library functions schedule code uses (scratch memory and sorting; :mod:`tlop.backends.jit.schedgen`)
_LIBC = ("malloc", "calloc", "realloc", "free", "qsort")


class Engine:
    """LLVM state shared by every compiled evaluator (use :func:`engine`)."""

    def __init__(self):
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        self.lock = threading.RLock()
        self.triple = llvm.get_process_triple()
        self.cpu = llvm.get_host_cpu_name()
        try:
            self.features = llvm.get_host_cpu_features().flatten()
        except RuntimeError:  # some hosts do not report features; the CPU name suffices
            self.features = ""
        target = llvm.Target.from_triple(self.triple)
        # the IR pipeline is O3 (below); the back end runs at its default level (O2): on this
        # code it emits the same loops, and object emission is ~10% faster
        self.tm = target.create_target_machine(cpu=self.cpu, features=self.features, opt=2,
                                               reloc="default", codemodel="jitdefault", jit=True)
        self._register_pyapi()
        backing = llvm.parse_assembly("")
        backing.triple = self.triple
        self.ee = llvm.create_mcjit_compiler(backing, self.tm)
        from tlop.backends.jit.interrupt import function_symbols

        for name, addr in function_symbols(self).items():  # the Ctrl-C poll the generated loops call
            llvm.add_symbol(name, addr)

    @staticmethod
    def _register_pyapi() -> None:
        for name in _PYAPI:
            fn = getattr(ctypes.pythonapi, name)
            llvm.add_symbol(name, ctypes.cast(fn, ctypes.c_void_p).value)
        libc = ctypes.CDLL(None)
        for name in _LIBC:
            llvm.add_symbol(name, ctypes.cast(getattr(libc, name), ctypes.c_void_p).value)
        from tlop.backends.jit.interrupt import symbols

        for name, addr in symbols().items():
            llvm.add_symbol(name, addr)

    # ------------------------------------------------------------------ compile
    def compile_ir(self, text: str, name: str = "tlop") -> bytes:
        """Parse, verify, optimise (at :func:`opt_level` for the size of ``text``) and emit an
        object file for LLVM IR ``text``; IR beyond :data:`MAX_IR_CHARS` is refused
        (:class:`tlop.backends.jit.codegen.NotCompilable`: the interpreter evaluates it)."""
        level = opt_level(len(text))
        if level is None:
            from tlop.backends.jit.codegen import NotCompilable

            raise NotCompilable(f"'{name}' is too large to compile: {len(text) // 1000:,} kB of LLVM IR (the JIT "
                                f"compiles at most {MAX_IR_CHARS // 1000:,} kB); the interpreter evaluates it "
                                f"(--engine interp, or AlgorithmHandle.evaluate)")
        with self.lock:
            try:
                mod = llvm.parse_assembly(text)
                mod.name = name
                mod.triple = self.triple
                mod.data_layout = str(self.tm.target_data)
                mod.verify()
            except RuntimeError as err:  # a code generator bug, never a user error
                raise TlopError(f"internal error: the JIT produced invalid LLVM IR for {name}: {err}") from None
            if level > 0:
                self._optimize(mod, level)
            return self.tm.emit_object(mod)

    def _optimize(self, mod, level: int = 3) -> None:
        pto = llvm.create_pipeline_tuning_options(speed_level=level)
        pto.loop_vectorization = level >= 2
        pto.slp_vectorization = level >= 2
        pb = llvm.create_pass_builder(self.tm, pto)
        pb.getModulePassManager().run(mod, pb)

    def optimized_ir(self, text: str) -> str:
        """The O3-optimised LLVM IR of ``text`` (for inspection and debugging)."""
        with self.lock:
            mod = llvm.parse_assembly(text)
            mod.triple = self.triple
            mod.data_layout = str(self.tm.target_data)
            mod.verify()
            self._optimize(mod)
            return str(mod)

    # ------------------------------------------------------------------ load
    def load_object(self, obj: bytes, symbols: tuple) -> dict:
        """Load an object file into the engine; return ``{symbol: address}`` for ``symbols``.

        Raises ValueError when the object file cannot be used (the cache treats that as a
        corrupted entry)."""
        with self.lock:
            try:
                ref = llvm.ObjectFileRef.from_data(obj)
            except Exception as err:  # noqa: BLE001 - llvmlite raises bare RuntimeError
                raise ValueError(f"unreadable object file: {err}") from None
            self.ee.add_object_file(ref)
            self.ee.finalize_object()
            out = {}
            for s in symbols:
                addr = self.ee.get_function_address(s)
                if not addr:
                    raise ValueError(f"object file lacks symbol {s}")
                out[s] = addr
            return out

    def describe(self) -> str:
        """Versions and target: part of every cache key."""
        return (f"llvmlite={llvmlite.__version__};llvm={'.'.join(map(str, llvm.llvm_version_info))};"
                f"triple={self.triple};cpu={self.cpu};features={self.features}")


#: LLVM IR sizes (characters of text) up to which the IR is optimised at O3, then O1, then not
#: at all (O0: instruction selection only); beyond the last, the JIT refuses.  O3 costs about
#: 10 s per MB of IR on this kind of machine, O1 about a third of that: an algorithm whose
#: schedule expands to a large module compiles in seconds instead of minutes, and runs a little
#: slower
OPT_LEVELS = ((200_000, 3), (2_000_000, 1), (20_000_000, 0))
MAX_IR_CHARS = OPT_LEVELS[-1][0]


def opt_level(chars: int) -> Optional[int]:
    """The optimisation level for ``chars`` characters of LLVM IR, None beyond :data:`MAX_IR_CHARS`."""
    for limit, level in OPT_LEVELS:
        if chars <= limit:
            return level
    return None


_ENGINE: Optional[Engine] = None
_ENGINE_LOCK = threading.Lock()


def engine() -> Engine:
    """The process-wide engine, created on first use."""
    global _ENGINE
    if _ENGINE is None:
        with _ENGINE_LOCK:
            if _ENGINE is None:
                _ENGINE = Engine()
    return _ENGINE


def target_description() -> str:
    return engine().describe()
