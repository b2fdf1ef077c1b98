"""The checked-IR cache's C writer (grammar/native/cpython/irencode.c) against the reference,
pickle.dumps: what pickle.loads reads back from it is the same object graph — classes, field
dicts in order, spans, values (nan, -0.0, big ints, non-ASCII and surrogate strings) and the
same sharing — for the program of every stdlib file and for generated structures; whatever it
does not write (a class with __setstate__, list or dict items in a reduce value, nesting deeper
than it goes) is refused, and the cache's writer then uses pickle.dumps."""

from __future__ import annotations

import collections
import copyreg
import dataclasses
import math
import pickle
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from tlop.frontend import checked_cache, native
from tlop.frontend.limits import deep
from tlop.frontend.loader import stdlib_modules


@pytest.fixture(scope="module", autouse=True)
def encoder():
    try:
        native.build(quiet=True)
        native.build_decoder()
    except RuntimeError as e:
        if "Go" in str(e) or "no C compiler" in str(e) or "headers are not installed" in str(e):
            pytest.skip(f"the C helpers are not built: {e}")
        raise
    native._state.clear()
    assert native.ir_encoder() is not None


def graph(obj) -> tuple:
    """Everything of an object graph: each object's type and content, floats by their bits, and
    which objects are one and the same (the n-th distinct object met is ("ref", n) afterwards),
    except for values (spans), which the C writer writes each time it meets one: their content."""
    seen: dict = {}

    def walk(o):
        if o is None or isinstance(o, bool):
            return o
        if type(o) is float:
            return ("float", math.copysign(1.0, o) if o == 0 else 0.0, repr(o))
        if type(o) in (int, str):
            return (type(o).__name__, o)
        if type(o) in checked_cache._VALUE_CLASSES:
            return (type(o).__qualname__,) + tuple((k, walk(getattr(o, k))) for k in copyreg._slotnames(type(o)))
        if id(o) in seen:
            return ("ref", seen[id(o)])
        seen[id(o)] = len(seen)
        if type(o) in (tuple, list):
            return (type(o).__name__,) + tuple(walk(x) for x in o)
        if type(o) is dict:
            return ("dict",) + tuple((walk(k), walk(v)) for k, v in o.items())
        if isinstance(o, Fraction):
            return ("Fraction", o.numerator, o.denominator)
        if hasattr(o, "__dict__"):
            return (type(o).__qualname__,) + tuple((k, walk(v)) for k, v in vars(o).items())
        slots = copyreg._slotnames(type(o))  # a class with slots (Span)
        return (type(o).__qualname__,) + tuple((k, walk(getattr(o, k))) for k in slots if hasattr(o, k))

    with deep():
        return walk(obj)


def c_dumps(obj) -> bytes:
    import copyreg

    return native.ir_encoder()(obj, checked_cache._PLAIN, checked_cache._reduce, copyreg.__newobj__)


def roundtrip(obj):
    c = c_dumps(obj)
    assert graph(pickle.loads(c)) == graph(pickle.loads(pickle.dumps(obj, protocol=4))) == graph(obj)
    return c


@pytest.mark.parametrize("name", stdlib_modules())
def test_the_program_of_every_stdlib_file(name):
    from tlop.frontend.elaborate import elaborate
    from tlop.frontend.loader import load_tree, resolve_path

    with deep():
        elaborated = elaborate(load_tree(resolve_path(name)))
    record = {"program": elaborated.program, "root_algorithms": tuple(elaborated.root_algorithms),
              "files": [("a", "b", "c")], "imports": []}
    roundtrip(record)


@dataclasses.dataclass(frozen=True)
class Leaf:
    value: object
    span: object = None


@dataclasses.dataclass
class WithSetstate:
    x: int

    def __setstate__(self, state):  # pickle calls it: the C writer must not write this class
        self.__dict__.update(state)


scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2 ** 80, max_value=2 ** 80),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
                    st.sampled_from(["\udc80x", "é", "a" * 300]),
                    st.fractions(max_denominator=1000))
structures = st.recursive(
    scalars,
    lambda kids: st.one_of(st.tuples(kids, kids), st.lists(kids, max_size=4).map(tuple), st.lists(kids, max_size=4),
                           st.dictionaries(st.text(max_size=3), kids, max_size=4), st.builds(Leaf, kids, kids)),
    max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(structures, st.integers(0, 3))
def test_generated_structures_and_sharing(obj, copies):
    shared = [obj] * copies + [(obj, Leaf(obj))] * copies  # the same objects, several times
    roundtrip({"x": obj, "shared": shared})


def test_what_it_does_not_write_is_refused_and_the_cache_uses_pickle():
    refused = [WithSetstate(1),                                   # __setstate__
               collections.OrderedDict(a=1),                      # dict items in the reduce value
               {"deep": (lambda t: [t := (t,) for _ in range(9000)][-1])(())}]  # deeper than it goes
    for obj in refused:
        with pytest.raises(ValueError, match="IR encoder"):
            c_dumps(obj)
        with deep():
            assert graph(pickle.loads(checked_cache.dumps(obj))) == graph(obj)


def test_plain_classes_are_learnt_and_special_ones_are_not():
    assert checked_cache._plain(Leaf)
    assert not checked_cache._plain(WithSetstate)
    assert not checked_cache._plain(Fraction)          # its own __reduce__
    from tlop.runtime.diagnostics import Source

    assert not checked_cache._plain(Source)             # its own __getstate__ (drops the line cache)
    src = Source("s.tlop", "a\nb")
    src.line(1)                                         # fills the cache the pickle must not carry
    back = pickle.loads(c_dumps(src))
    assert vars(back) == {"name": "s.tlop", "text": "a\nb"}


@dataclasses.dataclass(unsafe_hash=True, slots=True)
class Slotted:
    a: object
    b: object = None


@dataclasses.dataclass(frozen=True, slots=True)
class FrozenSlotted:  # the dataclass gives it __getstate__/__setstate__: pickle calls them
    a: object


def test_classes_with_slots_are_written_and_read_back_without_their_code():
    assert checked_cache._plain(Slotted) == (__name__, "Slotted", ("a", "b"))
    assert checked_cache._plain(FrozenSlotted) is None
    unset = Slotted.__new__(Slotted)
    object.__setattr__(unset, "a", 1)  # b never set: not in the state, still unset after
    shared = Slotted([1.5, "x"], None)
    data = roundtrip({"s": (shared, shared, Slotted(Slotted(2)), unset)})
    back = pickle.loads(data)["s"]
    assert back[0] is back[1] and back[0] == shared and not hasattr(back[3], "b")
    with deep():
        assert graph(pickle.loads(checked_cache.dumps(FrozenSlotted((1, 2))))) == graph(FrozenSlotted((1, 2)))


def test_a_span_is_a_value_written_each_time_it_is_met():
    from tlop.runtime.diagnostics import Source, Span

    assert checked_cache._plain(Span) == ("tlop.runtime.diagnostics", "Span",
                                          ("source", "line", "col", "end_line", "end_col"), True)
    src = Source("s.tlop", "a\nb")
    span = Span(src, 1, 1, 2, 1)
    back = pickle.loads(roundtrip([span, span, Span(src, 2, 1, 2, 1)]))
    assert back[0] == back[1] == span and back[0] is not back[1]  # equal, no longer one object
    assert back[0].source is back[1].source is back[2].source      # the source stays one object
    assert pickle.dumps(back[0]) and back[2].line == 2


class DictAmongSlots:
    __slots__ = ("a", "__dict__")


class ReadsMadeUp:
    __slots__ = ("a",)

    def __getattr__(self, name):  # a read that makes a new object each time
        return [name]


class SlotShadowed:
    __slots__ = ("_a",)
    a = property(lambda self: [self._a])


def test_classes_whose_slots_are_not_plain_are_not_written_directly():
    """A ``__dict__`` among the slots would be dropped, and a read that makes new objects could
    leave the memo pointing at a dead object's address: pickle writes these."""
    assert checked_cache._plain(DictAmongSlots) is None
    assert checked_cache._plain(ReadsMadeUp) is None
    assert checked_cache._plain(SlotShadowed) == (__name__, "SlotShadowed", ("_a",))  # its slot is _a
    o = DictAmongSlots()
    o.a, o.x = 1, 2
    back = pickle.loads(checked_cache.dumps({"o": o}))["o"]
    assert (back.a, vars(back)) == (1, {"x": 2})


def test_an_ast_node_refuses_a_state_that_is_not_its_fields():
    from tlop.frontend import ast as A

    n = A.Name.__new__(A.Name)
    with pytest.raises(TypeError, match="no field '__class__'"):
        n.__setstate__({"id": "x", "__class__": A.Number})
    with pytest.raises(TypeError, match="fields"):
        n.__setstate__([])
    n.__setstate__({"id": "x"})
    assert n.id == "x" and pickle.loads(pickle.dumps(A.Name("y"))) == A.Name("y")
