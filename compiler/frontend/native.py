"""The native parser: the same grammar, parsed in Go, loaded with ctypes.

What it does: builds (on request) and loads ``grammar/native`` — a C shared library made by
``go build -buildmode=c-shared`` — and turns a source into the same :mod:`tlop.frontend.ast`
module the reference parser (:mod:`tlop.frontend.reference_parser`) builds.  The library
answers with a pickle of the AST that only names the AST's classes and
:class:`~tlop.runtime.diagnostics.Span` (its readers refuse anything else); before first use the field order it writes is compared with the dataclasses'.
It has two paths to that answer:

* the **fast path** (``fastlex.go``, ``fastparse.go``): a hand-written lexer and
  recursive-descent parser of ``grammar/Tlop.g4`` that writes the pickle as it goes, one
  declaration at a time, with no parse tree — several times faster than the ANTLR path; it
  either answers or *delegates*;
* the **ANTLR path** (``main.go``, ``encode.go``): the ANTLR Go target generated from
  ``grammar/Tlop.g4`` (the grammar of the Python parser too; ``grammar/generate.sh`` writes
  both), its parse tree walked into the same pickle; it answers whatever the fast path
  delegates, and is the fast path's reference.

The contract between them: whenever the fast path answers, the ANTLR path answers exactly the
same bytes; it delegates on any syntax error, anything the ANTLR path answers with a fallback
code (the builder's diagnostics, the chain, depth and token pre-scan limits) and anything it is
not sure of.  The tests compare the two byte for byte (:func:`native_answer`'s ``path``), and
check that no stdlib or golden source is delegated.

What it does not do: report errors.  When the native parse finds a syntax error, or anything the
Python builder would report, or nesting deeper than it handles, :func:`parse` returns None and
:func:`tlop.frontend.parse.parse_source` parses the source with the Python ANTLR parser, the
reference, so diagnostics are the same with or without the library.  It does not build the library
while parsing: :func:`build` (``python -m tlop.frontend.native``, run by the test suite) builds it
when Go is installed, into ``grammar/native/_build`` under a name that is a hash of its sources (a
changed grammar or builder is never served by an old library).

The answer is read into the AST by a small C decoder (``grammar/native/cpython/astdecode.c``,
built next to the library with the C compiler against this Python's headers, loaded with
``ctypes.PyDLL``): it reads the same pickle, sets each instance's fields on the instance
directly, and is about three times faster than :mod:`pickle`.  The restricted
:class:`_Unpickler` stays the reference reader: it is used when the decoder is not built (no C
compiler, no Python headers) or refuses an answer, and the tests check both give the same AST.

``TLOP_PARSER=python`` turns the native parser off (``TLOP_NATIVE_PATH=antlr`` or ``fast`` runs
one of its paths alone, for comparisons); the library is also not used in a process forked after
it was loaded (the Go runtime does not survive ``fork``).
"""

from __future__ import annotations

import ctypes
import dataclasses
import hashlib
import io
import os
import pickle
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from pathlib import Path

from tlop.frontend import ast as A
from tlop.frontend.limits import MAX_CHAIN_TERMS
from tlop.runtime.diagnostics import Source, Span

__all__ = ["parse", "status", "build", "available"]

#: the deepest parse tree (in grammar rule levels) the native path takes; deeper sources go to
#: the reference parser, which decides whether they are too deep
MAX_DEPTH = 1500
#: bound of the token pre-scan before the Go parser recurses (a Go stack overflow is fatal)
MAX_ESTIMATE = 50000

_GRAMMAR = Path(__file__).resolve().parents[2] / "grammar"
_lock = threading.Lock()
_state: dict = {}


def _go_sources() -> list:
    """The files the library is built from (empty when they are not installed)."""
    if not (_GRAMMAR / "go.mod").is_file():
        return []
    files = [_GRAMMAR / "go.mod", _GRAMMAR / "go.sum"]
    files += sorted(p for p in (_GRAMMAR / "native").glob("*.go") if not p.name.endswith("_test.go"))
    files += sorted((_GRAMMAR / "_antlr_go").glob("*.go"))
    return [f for f in files if f.is_file()]


def _key(files) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:20]


_CPYTHON_SOURCES = (_GRAMMAR / "native" / "cpython" / "astdecode.c", _GRAMMAR / "native" / "cpython" / "irencode.c")


def decoder_path() -> Path | None:
    """Where the C helpers (the AST decoder and the IR encoder of :mod:`.checked_cache`) for
    these sources and this Python are (or would be) built."""
    if not all(f.is_file() for f in _CPYTHON_SOURCES):
        return None
    h = hashlib.sha256(b"".join(f.read_bytes() for f in _CPYTHON_SOURCES))
    h.update(f"\0{sys.version}\0{sysconfig.get_paths()['include']}\0{sys.abiflags}".encode())
    return _GRAMMAR / "native" / "_build" / f"libtlopdecode-{h.hexdigest()[:20]}.so"


def find_cc() -> str | None:
    """The C compiler: $CC, then Python's own, then cc and gcc on PATH."""
    cands = [os.environ.get("CC"), (sysconfig.get_config_var("CC") or "").split(" ")[0], "cc", "gcc"]
    for cand in cands:
        found = cand and shutil.which(cand)
        if found:
            return found
    return None


def build_decoder() -> Path:
    """Build the AST decoder and the IR encoder (nothing to do when they exist); returns the path.  Raises
    RuntimeError with the reason when it cannot be built (no C compiler, no Python headers)."""
    target = decoder_path()
    if target is None:
        raise RuntimeError("the decoder's C sources are not installed (grammar/native/cpython)")
    if target.exists():
        return target
    cc = find_cc()
    include = sysconfig.get_paths()["include"]
    if cc is None:
        raise RuntimeError("no C compiler (looked at $CC, Python's CC, cc and gcc)")
    if not (Path(include) / "Python.h").is_file():
        raise RuntimeError(f"the Python headers are not installed ({include}/Python.h)")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        out = Path(tmp) / target.name
        proc = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-Wall", "-Werror", f"-I{include}",
                               *map(str, _CPYTHON_SOURCES), "-o", str(out)], capture_output=True, text=True, timeout=600)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"building the AST decoder failed: {(proc.stderr or proc.stdout).strip()[-2000:]}")
        os.replace(out, target)
    for old in target.parent.glob("libtlopdecode-*.so"):
        if old != target:
            old.unlink(missing_ok=True)
    return target


def library_path() -> Path | None:
    """Where the library for the current sources is (or would be) built; None without sources."""
    files = _go_sources()
    if not files:
        return None
    return _GRAMMAR / "native" / "_build" / f"libtlopparse-{_key(files)}.so"


def find_go() -> str | None:
    """The ``go`` command: $GO, then PATH, then /usr/local/go/bin/go."""
    for cand in (os.environ.get("GO"), shutil.which("go"), "/usr/local/go/bin/go"):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def build(quiet: bool = False) -> Path:
    """Build the library for the current sources (nothing to do when it exists); returns its path.
    Raises RuntimeError with the reason when it cannot be built."""
    target = library_path()
    if target is None:
        raise RuntimeError("the Go sources of the native parser are not installed (grammar/native)")
    if target.exists():
        try:
            build_decoder()
        except RuntimeError:  # as below
            pass
        return target
    go = find_go()
    if go is None:
        raise RuntimeError("Go is not installed (looked at $GO, PATH and /usr/local/go/bin/go)")
    target.parent.mkdir(parents=True, exist_ok=True)
    if not quiet:
        print(f"tlop: building the native parser with {go} (once) …", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        out = Path(tmp) / target.name
        env = dict(os.environ, CGO_ENABLED="1")
        proc = subprocess.run([go, "build", "-buildmode=c-shared", "-trimpath", "-o", str(out), "./native"],
                              cwd=_GRAMMAR, env=env, capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"go build failed: {(proc.stderr or proc.stdout).strip()[-2000:]}")
        os.replace(out, target)
    for old in target.parent.glob("libtlopparse-*.so"):  # libraries of older sources
        if old != target:
            old.unlink(missing_ok=True)
    try:
        build_decoder()
    except RuntimeError:  # the parser works without it (the reference unpickler reads); main() says why
        pass
    return target


def _expected_schema() -> str:
    classes = ["Module", "ModelDecl", "ImportDecl", "ChannelDecl", "TableDecl", "ParamDecl", "TransmissionDecl",
               "DefDecl", "AlgorithmDecl", "ConfigDecl", "ConfigField", "Param", "TypeRef", "LetIn", "IfThen",
               "Reduction", "Unary", "Binary", "Call", "Arg", "Indexed", "ConfigAccess", "Number", "Name", "Stage",
               "Stages", "LoopItem", "SendItem", "ComputeItem", "BlockItem"]
    parts = [f"{c}:{','.join(f.name for f in dataclasses.fields(getattr(A, c)))}" for c in classes]
    parts.append("Span:" + ",".join(f.name for f in dataclasses.fields(Span)))
    return ";".join(parts)


def _load():
    """The loaded library, or None; the reason is kept for :func:`status`."""
    if _state.get("pid") == os.getpid():
        return _state["lib"]
    if "pid" in _state:  # forked after loading: the Go runtime's threads are gone
        _state.update(lib=None, reason="not used in a forked process")
        return None
    _state["pid"] = os.getpid()
    _state["lib"] = None
    if os.environ.get("TLOP_PARSER", "").lower() == "python":
        _state["reason"] = "turned off (TLOP_PARSER=python)"
        return None
    path = library_path()
    if path is None or not path.exists():
        _state["reason"] = ("not built: the Go sources are not installed" if path is None else
                            "not built (python -m tlop.frontend.native builds it; needs Go)")
        return None
    try:
        lib = ctypes.CDLL(str(path))
        lib.tlop_parse.restype = ctypes.c_void_p
        lib.tlop_parse.argtypes = [ctypes.c_char_p, ctypes.c_longlong, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                   ctypes.POINTER(ctypes.c_longlong)]
        lib.tlop_parse_mode.restype = ctypes.c_void_p
        lib.tlop_parse_mode.argtypes = [ctypes.c_char_p, ctypes.c_longlong, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                        ctypes.c_int, ctypes.POINTER(ctypes.c_longlong)]
        lib.tlop_free.argtypes = [ctypes.c_void_p]
        lib.tlop_schema.restype = ctypes.c_void_p
        ptr = lib.tlop_schema()
        schema = ctypes.string_at(ptr).decode()
        lib.tlop_free(ptr)
    except (OSError, AttributeError) as e:
        _state["reason"] = f"cannot be loaded ({e})"
        return None
    if schema != _expected_schema():
        _state["reason"] = "out of date with tlop.frontend.ast (rebuild: python -m tlop.frontend.native)"
        return None
    _state.update(lib=lib, reason=None)
    return lib


def _decoder():
    """The C decoder's function (``tlop_decode``) with its class table, or None when it is not
    built or cannot be loaded (then answers are unpickled)."""
    if "decoder" in _state and _state.get("decoder_pid") == os.getpid():
        return _state["decoder"]
    _state["decoder_pid"] = os.getpid()
    _state["decoder"] = None
    path = decoder_path()
    if path is None or not path.exists():
        return None
    try:
        fn = ctypes.PyDLL(str(path)).tlop_decode
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.py_object
    fn.argtypes = [ctypes.py_object, ctypes.py_object, ctypes.py_object, ctypes.c_ssize_t]
    classes = {("A", name): cls for name, cls in vars(A).items()
               if isinstance(cls, type) and issubclass(cls, A.Node)}
    classes[("D", "span")] = Span  # D.span(l, c, el, ec): the decoder makes a Span of the source
    _state["decoder"] = (fn, classes)
    try:
        enc = ctypes.PyDLL(str(path)).tlop_encode
    except AttributeError:
        enc = None
    else:
        enc.restype = ctypes.py_object
        enc.argtypes = [ctypes.py_object] * 4
    _state["encoder"] = enc
    return _state["decoder"]


def ir_encoder():
    """The C writer of the checked-IR cache's pickles (``tlop_encode``, irencode.c), or None
    when it is not built."""
    _decoder()
    return _state.get("encoder")


def available() -> bool:
    """Whether :func:`parse` uses the native library in this process."""
    return _load() is not None


def status() -> str:
    """One line for ``tlop --version``: which parser parses sources, and why."""
    if _load() is not None:
        return ("parser: native (Go: fast path, ANTLR Go target behind it; grammar/native); "
                "Python ANTLR runtime for diagnostics")
    return f"parser: Python ANTLR runtime (the native parser is {_state.get('reason')})"


class _Unpickler(pickle.Unpickler):
    """Reads the library's answer: AST classes only, every span on ``source`` written as
    ``D.span(l, c, el, ec)`` (a span is never built field by field; the persistent id
    ``"source"`` is also understood)."""

    def __init__(self, data, source: Source):
        stream = io.BytesIO(data)
        stream.seek(1)  # after the answer's code byte
        super().__init__(stream)
        self._source = source

    def find_class(self, module, name):
        if module == "A" and isinstance(getattr(A, name, None), type) and issubclass(getattr(A, name), A.Node):
            return getattr(A, name)
        if module == "D" and name == "span":  # D.span(l, c, el, ec): a Span of the source parsed
            source = self._source
            return lambda line, col, end_line, end_col: Span(source, line, col, end_line, end_col)
        raise pickle.UnpicklingError(f"native parser: unexpected class {module}.{name}")

    def persistent_load(self, pid):
        if pid != "source":
            raise pickle.UnpicklingError(f"native parser: unexpected reference {pid!r}")
        return self._source


def parse(source: Source):
    """The module of ``source``, parsed natively; None when the reference parser must parse it
    (the library is not available, the text is not encodable, or the native parse stopped).
    The C decoder reads the answer where the library wrote it (a file of 10⁵ declarations
    answers 74 MB: not copied into a bytes object first)."""
    return _ask(source, None, decode_in_place=True)


#: the library's parse modes (``path`` of :func:`native_answer`)
_MODES = {"auto": 0, "fast": 1, "antlr": 2}


def native_answer(source: Source, path: str | None = None) -> bytes | None:
    """The library's answer for ``source`` (a pickled module after a zero byte), or None.
    ``path``: ``"auto"`` (the fast path, the ANTLR path where it delegates; what :func:`parse`
    uses), ``"fast"`` (the fast path alone: None where it delegates) or ``"antlr"`` (the ANTLR
    path alone), for the tests and benchmarks that compare the two; by default
    ``$TLOP_NATIVE_PATH`` when it is one of those, else ``"auto"``."""
    return _ask(source, path, decode_in_place=False)


def _ask(source: Source, path: str | None, decode_in_place: bool):
    """The library's answer for ``source`` as bytes (or None), or with ``decode_in_place`` the
    module it holds (or None), read by the C decoder before the answer's memory is freed."""
    mode = _MODES[path] if path else _MODES.get(os.environ.get("TLOP_NATIVE_PATH", ""), 0)
    lib = _load()
    if lib is None:
        return None
    try:
        data = source.text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: only the reference parser sees them
        return None
    if len(data) >= 2 ** 31 - 1:  # the library takes a C int length: only the reference parser
        return None
    n = ctypes.c_longlong()
    with _lock:
        ptr = lib.tlop_parse_mode(data, len(data), MAX_CHAIN_TERMS, MAX_DEPTH, MAX_ESTIMATE, mode, ctypes.byref(n))
        try:
            if ctypes.string_at(ptr, 1) != b"\0":
                return None
            if decode_in_place and _decoder() is not None:
                view = (ctypes.c_char * n.value).from_address(ptr)
                fn, classes = _decoder()
                try:
                    return fn(view, classes, source, 1)
                except Exception:  # refused: the reference reader decides, below
                    pass
            answer = ctypes.string_at(ptr, n.value)
        finally:
            lib.tlop_free(ptr)
    return decode(answer, source, "pickle") if decode_in_place else answer


def decode(answer: bytes, source: Source, reader: str = "auto") -> A.Module:
    """The module a successful :func:`native_answer` holds, its spans on ``source``.  ``reader``:
    ``"c"`` the C decoder (ValueError when it is not built), ``"pickle"`` the reference
    unpickler, ``"auto"`` the C decoder when it is built, else (or when it refuses the answer)
    the unpickler."""
    if reader != "pickle":
        dec = _decoder()
        if dec is None:
            if reader == "c":
                raise ValueError("the C AST decoder is not built (python -m tlop.frontend.native)")
        else:
            fn, classes = dec
            try:
                return fn(answer, classes, source, 1)
            except Exception:  # refused (ValueError) or a field it cannot set: the reference decides
                if reader == "c":
                    raise
    return _Unpickler(answer, source).load()


def main(argv=None) -> int:
    """``python -m tlop.frontend.native``: build the library for the current sources."""
    try:
        path = build()
    except RuntimeError as e:
        print(f"tlop: cannot build the native parser: {e}", file=sys.stderr)
        return 1
    print(f"tlop: native parser: {path}")
    try:
        print(f"tlop: AST decoder: {build_decoder()}")
    except RuntimeError as e:  # the parser works without it: its answers are unpickled
        print(f"tlop: AST decoder not built ({e}); the native parser's answers are unpickled")
    return 0


if __name__ == "__main__":
    sys.exit(main())
