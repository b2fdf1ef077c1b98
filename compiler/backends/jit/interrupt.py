"""Ctrl-C for native code: a counter bumped by SIGINT that compiled loops poll.

Why: a compiled evaluation runs without returning to the Python interpreter, so a Python
signal handler cannot run until it returns — a long native loop would ignore Ctrl-C.

What it does:

* two process-wide words the generated code references by name (registered with the engine
  as symbols, like the CPython API functions): :data:`COUNT_SYMBOL`, bumped by every SIGINT,
  and :data:`HIT_SYMBOL`, set by native code that stopped because of one;
* a tiny native signal handler (LLVM IR, compiled once) that bumps the counter and then calls
  the handler it replaced — CPython's own C-level handler, so Python still sees the signal and
  raises :class:`KeyboardInterrupt` as usual.  It is installed (:func:`install`) with
  ``sigaction``, keeping the flags and mask CPython chose, only while SIGINT is handled by a
  Python handler (the default ``default_int_handler`` or the user's); SIG_DFL/SIG_IGN are left
  alone;
* a batch reads the counter when it starts, and its points' loops poll it every
  :data:`POLL_MASK` + 1 iterations (:meth:`tlop.backends.jit.codegen.CodeGen.poll`), both
  through functions compiled here (:data:`NOW_FUNCTION`, :data:`POLL_FUNCTION`: never inlined,
  declared as touching only memory the caller cannot reach, so the optimiser neither deletes
  the poll nor is stopped by it from hoisting invariant table lookups); when it changed the
  poll sets :data:`HIT_SYMBOL` and the loops stop and report an evaluation error;
* :func:`raise_if_hit`, called by the evaluator whenever native code reported a failure,
  clears the hit word and lets Python process the pending signal
  (``PyErr_CheckSignals``: the Python handler runs and normally raises KeyboardInterrupt); if
  the handler returns without raising, KeyboardInterrupt is raised anyway, since the
  evaluation was abandoned.

What it does not do: interrupt anything on platforms without ``sigaction`` in the C library
(loops then just run to the end, as before), or survive a later ``signal.signal(SIGINT, …)``
by the user (CPython then re-installs its own C handler: native loops stop being
interruptible, nothing else changes; :func:`install` is called again at every compile).
"""

from __future__ import annotations

import ctypes
import signal
import sys
import threading

__all__ = ["COUNT_SYMBOL", "HIT_SYMBOL", "POLL_MASK", "NOW_FUNCTION", "POLL_FUNCTION", "symbols", "function_symbols",
           "install", "raise_if_hit", "installed"]

COUNT_SYMBOL = "tlop_interrupt_count"
HIT_SYMBOL = "tlop_interrupt_hit"
_PREV_SYMBOL = "tlop_interrupt_prev"
#: native loops poll the counter when their shared iteration count has these bits clear
POLL_MASK = (1 << 14) - 1

_count = ctypes.c_int64(0)
_hit = ctypes.c_int64(0)
_prev = ctypes.c_uint64(0)
_lock = threading.Lock()
_handler_addr = None
_SIGACTION_BYTES = 512  # larger than struct sigaction on every Linux ABI


def symbols() -> dict:
    """The words generated code references: ``{name: address}``."""
    return {COUNT_SYMBOL: ctypes.addressof(_count), HIT_SYMBOL: ctypes.addressof(_hit),
            _PREV_SYMBOL: ctypes.addressof(_prev)}


_HANDLER_IR = f"""
@{COUNT_SYMBOL} = external global i64
@{_PREV_SYMBOL} = external global i64
define void @tlop_on_sigint(i32 %sig) {{
entry:
  %old = atomicrmw add ptr @{COUNT_SYMBOL}, i64 1 seq_cst
  %prev = load volatile i64, ptr @{_PREV_SYMBOL}
  %real = icmp ugt i64 %prev, 1
  br i1 %real, label %chain, label %done
chain:
  %fn = inttoptr i64 %prev to ptr
  call void %fn(i32 %sig)
  br label %done
done:
  ret void
}}
"""


#: the functions generated loops call (never inlined: they live in their own object), declared in
#: the generated code as touching only memory the caller cannot reach
#: (``inaccessiblememonly``): LLVM keeps every call — a call that may write memory cannot be
#: deleted or hoisted — yet knows the tables and arguments are untouched, so it hoists the
#: loop-invariant table searches and interpolations across polls (the ``monotonic`` atomic
#: loads in the loops that this replaces pinned them inside the loop)
NOW_FUNCTION = "tlop_interrupt_now"
POLL_FUNCTION = "tlop_interrupt_poll"
FUNCTION_ATTRIBUTES = ("nounwind", "inaccessiblememonly")

_POLL_IR = f"""
@{COUNT_SYMBOL} = external global i64
@{HIT_SYMBOL} = external global i64
define i64 @{NOW_FUNCTION}() noinline nounwind {{
entry:
  %now = load atomic i64, ptr @{COUNT_SYMBOL} monotonic, align 8
  ret i64 %now
}}
define i1 @{POLL_FUNCTION}(i64 %start) noinline nounwind {{
entry:
  %now = load atomic i64, ptr @{COUNT_SYMBOL} monotonic, align 8
  %changed = icmp ne i64 %now, %start
  br i1 %changed, label %hit, label %done
hit:
  store atomic i64 1, ptr @{HIT_SYMBOL} monotonic, align 8
  ret i1 1
done:
  ret i1 0
}}
"""


def function_symbols(eng) -> dict:
    """Compile the poll functions into ``eng`` (once per engine): ``{name: address}``, for the
    engine to register as symbols the generated code links against."""
    obj = eng.compile_ir(_POLL_IR, "tlop_interrupt_poll")
    return eng.load_object(obj, (NOW_FUNCTION, POLL_FUNCTION))


def _handler() -> int:
    global _handler_addr
    if _handler_addr is None:
        from tlop.backends.jit.engine import engine

        eng = engine()
        obj = eng.compile_ir(_HANDLER_IR, "tlop_interrupt")
        _handler_addr = eng.load_object(obj, ("tlop_on_sigint",))["tlop_on_sigint"]
    return _handler_addr


def _libc():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.sigaction
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    fn.restype = ctypes.c_int
    return fn


def installed() -> bool:
    """Whether SIGINT currently goes through the native handler first."""
    if _handler_addr is None or not sys.platform.startswith("linux"):
        return False
    sigaction = _libc()
    if sigaction is None:
        return False
    old = ctypes.create_string_buffer(_SIGACTION_BYTES)
    if sigaction(signal.SIGINT, None, old) != 0:
        return False
    return ctypes.c_uint64.from_buffer(old).value == _handler_addr


def install() -> bool:
    """Put the native handler in front of the current SIGINT handler (idempotent); False when
    it cannot or should not be (not Linux, no Python-level handler, no ``sigaction``)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        current = signal.getsignal(signal.SIGINT)
    except (ValueError, TypeError):
        return False
    if not callable(current):  # SIG_DFL, SIG_IGN or a handler set outside Python
        return False
    sigaction = _libc()
    if sigaction is None:
        return False
    with _lock:
        handler = _handler()
        old = ctypes.create_string_buffer(_SIGACTION_BYTES)
        if sigaction(signal.SIGINT, None, old) != 0:
            return False
        prev = ctypes.c_uint64.from_buffer(old).value
        if prev == handler:
            return True
        if prev <= 1:  # the C level says default/ignore after all: leave it
            return False
        _prev.value = prev
        new = ctypes.create_string_buffer(old.raw, _SIGACTION_BYTES)
        ctypes.c_uint64.from_buffer(new).value = handler
        return sigaction(signal.SIGINT, new, None) == 0


def raise_if_hit() -> None:
    """Raise KeyboardInterrupt when native code stopped because of Ctrl-C (see the module
    docstring); nothing otherwise."""
    if not _hit.value:
        return
    _hit.value = 0
    ctypes.pythonapi.PyErr_CheckSignals()  # the Python handler runs here (and usually raises)
    raise KeyboardInterrupt
