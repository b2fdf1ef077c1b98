"""``repr`` of many doubles in native code: the text Python writes, without a Python call per value.

What it does: :func:`repr_lines` returns, for a float64 array, the list of ``repr(float(v))``
texts (``nan`` as a caller-chosen text, e.g. an empty CSV cell), byte for byte what Python writes,
at native speed.  The shortest decimal that reads back as the same double comes from Ryu (Ulf
Adams, PLDI 2018; ``ulfjack/ryu`` ``ryu/d2s.c``: ``d2d``, ``mulShift64``/``mulShiftAll64`` of
``d2s_intrinsics.h`` with a 128-bit type, ``pow5bits``/``log10Pow2``/``log10Pow5`` of
``common.h``; the 128-bit tables ``DOUBLE_POW5_INV_SPLIT``/``DOUBLE_POW5_SPLIT`` of
``d2s_full_table.h`` computed from their definition), emitted as LLVM IR by
:func:`tlop.backends.jit.floatrepr_ir.build_ir`; the digits are then laid out as CPython's
``float_repr`` does (``format_float_short`` in ``Python/pystrtod.c``, mode ``'r'``: positional
when the decimal point position ``decpt`` is in −3 … 16, else ``d.ddde±XX``; ``.0`` after
integers; ``inf``, ``-0.0``).  This module loads and calls that code, compiled once per
machine through the JIT's engine and on-disk cache (:mod:`tlop.backends.jit.engine`,
:mod:`tlop.backends.jit.cache`).  The agreement with ``repr``
is a test (tests/test_floatrepr.py: edge cases and random bit patterns of every exponent).

What it does not do: format anything but float64 (no ``str.format`` specs), write files, or
decide where it is used (:mod:`tlop.cli.csvfast` calls it for chunks big enough to pay for the
call; small ones use ``repr``).
"""

from __future__ import annotations

import ctypes
import hashlib
import threading
from pathlib import Path
from typing import Optional

import numpy as np

from tlop.backends.jit.floatrepr_ir import _LINES, _SYMBOL, build_ir, pow5_tables  # noqa: F401 - re-exported

__all__ = ["repr_lines", "csv_lines", "build_ir", "MAX_CHARS"]

#: the longest repr of a double ("-2.2250738585072014e-308" is 24) plus the separator
MAX_CHARS = 25
_FN_T = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                         ctypes.c_void_p, ctypes.c_int64)
_LINES_T = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_LOCK = threading.Lock()
_FN: Optional[tuple] = None  # (repr function, lines function)

def _key() -> str:
    from tlop.backends.jit.engine import engine

    h = hashlib.sha256()
    for part in ("tlop-floatrepr-2", Path(__file__).read_bytes().decode(),
                 (Path(__file__).parent / "floatrepr_ir.py").read_bytes().decode(), engine().describe()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _function():
    """The native function, from this process, the on-disk cache or compiled (once)."""
    global _FN
    if _FN is not None:
        return _FN
    with _LOCK:
        if _FN is None:
            from tlop.backends.jit import cache as _cache
            from tlop.backends.jit.engine import engine

            eng = engine()
            key = _key()
            store = _cache.default_cache()
            addrs = None
            obj = store.get(key)
            if obj is not None:
                try:
                    addrs = eng.load_object(obj, (_SYMBOL, _LINES))
                except ValueError:
                    store.invalidate(key)
            if addrs is None:
                obj = eng.compile_ir(build_ir(), "float_repr")
                store.put(key, obj)
                addrs = eng.load_object(obj, (_SYMBOL, _LINES))
            _FN = (_FN_T(addrs[_SYMBOL]), _LINES_T(addrs[_LINES]))
    return _FN


def repr_lines(values, nan: str = "nan") -> list:
    """``[repr(float(v)) for v in values]`` (NaN as ``nan``), through native code."""
    x = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)
    n = len(x)
    if n == 0:
        return []
    nb = nan.encode()
    buf = np.empty(n * (MAX_CHARS + len(nb)), dtype=np.uint8)
    nanbuf = np.frombuffer(nb or b"\0", dtype=np.uint8)
    used = _function()[0](x.ctypes.data, n, buf.ctypes.data, nanbuf.ctypes.data, len(nb))
    return buf[:used].tobytes().decode("ascii").split("\n")


_ENCODED: dict = {}  # id(table) -> (table, bytes, offsets, longest): a grid's axis tables, once


def _encoded(key, texts):
    """The texts as one UTF-8 byte array, their offsets and the longest one's length; a table
    object (a grid axis's cells, the same object every chunk) is encoded once."""
    hit = _ENCODED.get(id(key))
    if hit is not None and hit[0] is key:
        return hit[1:]
    enc = [t.encode() for t in texts]
    off = np.zeros(len(enc) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in enc], out=off[1:])
    tab = np.frombuffer(b"".join(enc) or b"\0", dtype=np.uint8)
    out = (tab, off, max(len(e) for e in enc))
    if not isinstance(key, str) and len(texts) > 64:
        if len(_ENCODED) > 64:
            _ENCODED.clear()
        _ENCODED[id(key)] = (key,) + out
    return out


def csv_lines(columns: list, n: int) -> str:
    """CSV lines of ``n`` points through native code.  Each column is ``("float", values, nan)``
    (doubles written as ``repr`` writes them, NaN as the text ``nan``), optionally with a fourth
    element, flags: where a flag is set the value is the line's first number (``best``'s
    cost is its winner's), whose text is copied, not formatted again; or ``("text", index,
    cells)`` (the text ``cells[index[j]]``: cells already quoted for CSV).  The same text as
    joining the cells with ``,`` and ending each line with ``\n``."""
    if n == 0:
        return ""
    keep = []  # the arrays the native code reads (alive until it returns)
    kinds, cols, tabs, offs, sames = [], [], [], [], []
    width = 0
    for column in columns:
        kind, data, extra = column[:3]
        flags = column[3] if len(column) > 3 else None
        if flags is not None:
            flags = np.ascontiguousarray(flags, dtype=np.uint8).reshape(-1)
            keep.append(flags)
        sames.append(flags.ctypes.data if flags is not None else 0)
        if kind == "float":
            arr = np.ascontiguousarray(data, dtype=np.float64).reshape(-1)
            texts = [extra]
            kinds.append(0)
        else:
            arr = np.ascontiguousarray(data, dtype=np.int64).reshape(-1)
            texts = extra
            kinds.append(1)
        assert len(arr) == n
        tab, off, longest = _encoded(extra, texts)
        width += max(longest, MAX_CHARS if kind == "float" else 0) + 1
        keep += [arr, off, tab]
        cols.append(arr.ctypes.data)
        tabs.append(tab.ctypes.data)
        offs.append(off.ctypes.data)
    k = len(columns)
    ptr = lambda v: np.array(v, dtype=np.uint64)  # noqa: E731 - arrays of addresses
    kinds_a, cols_a, tabs_a, offs_a = np.array(kinds, dtype=np.int64), ptr(cols), ptr(tabs), ptr(offs)
    buf = np.empty(n * (width + 1), dtype=np.uint8)
    same_a = ptr(sames)
    used = _function()[1](n, k, kinds_a.ctypes.data, cols_a.ctypes.data, tabs_a.ctypes.data,
                          offs_a.ctypes.data, buf.ctypes.data, same_a.ctypes.data)
    del keep
    return buf[:used].tobytes().decode("utf-8")
