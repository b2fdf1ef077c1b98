"""The C decoder of the native parser's answers (grammar/native/cpython/astdecode.c) against the
reference reader, the restricted unpickler of tlop.frontend.native: the same AST — fields, their
order, spans and the one shared Source — for every stdlib file and every test source; and on
damaged answers (truncated, bytes flipped, inserted or deleted) either a refusal or exactly the
unpickler's result, never a crash (the damage runs in a child process, so a crash is a failed
test, not a dead test run), never an object of a class outside the AST."""

from __future__ import annotations

import dataclasses
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from tlop.frontend import native
from tlop.frontend.limits import deep
from tlop.frontend.loader import resolve_path, stdlib_modules
from tlop.runtime.diagnostics import Source, Span

from test_native_parser import _fields

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module", autouse=True)
def decoder():
    try:
        native.build(quiet=True)
    except RuntimeError as e:
        pytest.skip(f"native parser not built: {e}")
    try:
        native.build_decoder()
    except RuntimeError as e:
        if "no C compiler" in str(e) or "headers are not installed" in str(e):
            pytest.skip(f"C decoder not built: {e}")
        raise  # a compiler and headers exist: a build failure is a failure
    native._state.clear()
    assert native.available() and native._decoder() is not None


def _sources() -> list:
    files = [resolve_path(m) for m in stdlib_modules()] + sorted((ROOT / "tests").rglob("*.tlop"))
    return [Source(f.name, f.read_text(encoding="utf-8", errors="surrogateescape")) for f in files]


def test_same_ast_as_the_unpickler():
    answered = 0
    for source in _sources():
        answer = native.native_answer(source)
        if answer is None:  # a source the reference parser must report on
            continue
        answered += 1
        got, want = native.decode(answer, source, "c"), native.decode(answer, source, "pickle")
        with deep():
            assert _fields(got) == _fields(want), source.name
        assert got == want
        spans = [getattr(n, f.name) for n in _nodes(got) for f in dataclasses.fields(n)
                 if isinstance(getattr(n, f.name, None), Span)]
        assert spans and all(s.source is source for s in spans)
    assert answered > 40


def _nodes(node):
    from tlop.frontend import ast as A

    return list(A.iter_nodes(node))


def test_auto_uses_the_c_decoder_and_falls_back(monkeypatch):
    source = Source("t.tlop", "def f(x: int) = x + 1\n")
    answer = native.native_answer(source)
    calls = []
    fn, classes = native._decoder()
    monkeypatch.setitem(native._state, "decoder", (lambda *a: calls.append(a) or fn(*a), classes))
    assert native.decode(answer, source) == native.decode(answer, source, "pickle")
    assert len(calls) == 1
    # an answer the decoder refuses (here: a class outside its table) is read by the unpickler
    monkeypatch.setitem(native._state, "decoder", (fn, {k: v for k, v in classes.items() if k[1] != "Number"}))
    with pytest.raises(ValueError, match="unexpected class A.Number"):
        native.decode(answer, source, "c")
    assert native.decode(answer, source) == native.decode(answer, source, "pickle")


def test_it_refuses_what_is_not_an_answer():
    fn, classes = native._decoder()
    src = Source("t", "")
    for data, what in [(b"\0\x80\x04\x8c\x05posix\x8c\x06system\x93.", "unexpected class posix.system"),
                       (b"\0" + pickle.dumps([1, 2]), "unexpected opcode"),  # FRAME, then lists
                       (b"\0\x80\x04K\x01", "no STOP"),
                       (b"\0\x80\x04X\xff\xff\xff\x7f", "truncated answer"),
                       (b"\0\x80\x04h\x05.", "memo index out of range"),
                       (b"\0\x80\x04t.", "TUPLE without a mark"),
                       (b"\0\x80\x04\x8c\x05other\x8c\x01xQ.", "unexpected persistent id"),
                       (b"\0\x80\x04\x8c\x01A\x8c\x06Number\x93(K\x01K\x02K\x03K\x04tR.",
                        "REDUCE of something other than D.span"),
                       (b"\0\x80\x04\x8c\x01D\x8c\x04span\x93(K\x01K\x02K\x03tR.",
                        "REDUCE of something other than D.span with four numbers")]:
        with pytest.raises(ValueError, match=what):
            fn(data, classes, src, 1)
    # a span is D.span(l, c, el, ec) and nothing else: no NEWOBJ, no BUILD, no D.Span; the
    # reference reader refuses each too (a Span has slots, no __dict__ for BUILD to fill)
    for data, what in [(b"\0\x80\x04\x8c\x01D\x8c\x04span\x93)\x81.", "NEWOBJ of something that is not an AST class"),
                       (b"\0\x80\x04\x8c\x01D\x8c\x04span\x93(K\x01K\x02K\x03K\x04tR}(\x8c\x04lineK\tub.",
                        "BUILD of something that is not an AST instance"),
                       (b"\0\x80\x04\x8c\x01D\x8c\x04Span\x93(K\x01K\x02K\x03K\x04tR.", "unexpected class D.Span")]:
        with pytest.raises(ValueError, match=what):
            fn(data, classes, src, 1)
        with pytest.raises((pickle.UnpicklingError, TypeError, AttributeError)):  # the reference refuses too
            native._Unpickler(data, src).load()


_DAMAGE = r'''
import copyreg, pickle, random, sys
from tlop.frontend import native
from tlop.frontend.loader import resolve_path
from tlop.runtime.diagnostics import Source
def shape(o):  # everything of a decoded object, damaged ones too (a Span may lack a field)
    if isinstance(o, tuple):
        return ("tuple",) + tuple(shape(x) for x in o)
    if isinstance(o, Source):
        return ("source", id(o))
    if hasattr(o, "__dict__"):
        return (type(o).__name__,) + tuple((k, shape(v)) for k, v in vars(o).items())
    slots = copyreg._slotnames(type(o))  # AST nodes and spans: the slots that are set
    if slots:
        return (type(o).__name__,) + tuple((k, shape(getattr(o, k))) for k in slots if hasattr(o, k))
    return (type(o).__name__, repr(o))
fn, classes = native._decoder()
rng = random.Random(int(sys.argv[1]))
count = {"same": 0, "refused": 0}
for name in ("taulop/bcast", "kernels/summa", "plogp/bcast"):
    try:
        path = resolve_path(name)
    except Exception:
        continue
    source = Source(path.name, path.read_text())
    answer = native.native_answer(source)
    for _ in range(int(sys.argv[2])):
        data = bytearray(answer)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(1, len(data))
            kind = rng.randrange(4)
            if kind == 0:
                data[i] = rng.randrange(256)
            elif kind == 1:
                del data[i]
            elif kind == 2:
                data.insert(i, rng.randrange(256))
            else:
                del data[i:]
                if len(data) < 2:
                    data += b"."
        data = bytes(data)
        try:
            got = fn(data, classes, source, 1)
        except Exception:
            count["refused"] += 1
            continue
        want = native._Unpickler(data, source).load()  # must succeed, and agree
        assert shape(got) == shape(want), (name, data)
        count["same"] += 1
print(count["same"], count["refused"])
'''


def test_damaged_answers_are_refused_or_read_as_the_unpickler_reads_them():
    proc = subprocess.run([sys.executable, "-c", _DAMAGE, "20261125", "700"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]  # a crash is a negative return code
    same, refused = map(int, proc.stdout.split())
    assert same >= 20 and refused > 500  # both outcomes are exercised


def test_parse_reads_the_answer_in_place_and_falls_back_to_the_unpickler(monkeypatch):
    """native.parse hands the library's memory to the decoder (no copy); when the decoder
    refuses, the answer is copied and unpickled: the same module either way."""
    source = Source("t.tlop", "def f(x: int) = x + 1\nalgorithm a(P: int) = f(P) * 1s\n")
    want = native.decode(native.native_answer(source), source, "pickle")
    seen = []
    fn, classes = native._decoder()

    def spy(data, *rest):
        seen.append(type(data).__name__)
        return fn(data, *rest)

    monkeypatch.setitem(native._state, "decoder", (spy, classes))
    assert _fields(native.parse(source)) == _fields(want)
    assert seen and "bytes" not in seen  # a view of the library's memory, not a copy

    def refuse(*_):
        raise ValueError("refused")

    monkeypatch.setitem(native._state, "decoder", (refuse, classes))
    assert _fields(native.parse(source)) == _fields(want)


def test_an_answer_of_many_pieces_is_the_antlr_paths_answer():
    """The fast path writes its answer in pieces of 4 MB (a file of 10⁵ declarations answers
    74 MB); put together, they are the ANTLR path's bytes."""
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_frontend_scale import source as many

    src = Source("many.tlop", many(14000))
    fast = native.native_answer(src, "fast")
    assert fast is not None and len(fast) > 2 * (4 << 20)
    assert fast == native.native_answer(src, "antlr")
