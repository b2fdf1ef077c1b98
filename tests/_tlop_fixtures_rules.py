"""Hand-built τ-Lop programs and a fake profile for the rules/simplifier/notation tests (the
front end is not needed)."""

import math

from tlop import ir

N, V = ir.Num, ir.Var


def B(op, a, b):
    return ir.Bin(op, a, b)


TABLES = {"o": ir.TableSig("o", True, ("m",), None), "L": ir.TableSig("L", True, ("m", "tau"), 1)}


def _variants():
    o = lambda c: ir.Lookup("o", N(c), (V("m"),))
    L = lambda c: ir.Lookup("L", N(c), (V("m"), N(1)))
    return {"T": (ir.TransmissionVariant("T", 0, None, "m", B("+", o(0), B("*", N(2), L(0)))),
                  ir.TransmissionVariant("T", 1, None, "m", B("+", o(1), L(1))))}


def program(channels=("c0", "c1"), algorithms=None):
    return ir.Program(tuple(channels), dict(TABLES), {}, _variants(), dict(algorithms or {}), "taulop")


def xm(ch, size, count=1):
    return ir.Xmit(N(count), "T", N(ch), size if isinstance(size, ir.Expr) else N(size))


def pc(*ops):
    return ir.ParComp(tuple(tuple(op) for op in ops))


class _Table:
    def __init__(self, fn):
        self.fn = fn

    def lookup(self, m, tau=None):
        return self.fn(m) if tau is None else self.fn(m, tau)


class FakeProfile:
    """Tables satisfying the model axioms: non-negative, monotone in τ,
    L(m,τ) ≤ L(m,Aτ) ≤ A·L(m,τ); with ``linear`` every table is linear in m (then A1 and
    linearity hold too), otherwise they carry a constant latency."""

    name = "fake"

    def __init__(self, seed=0, linear=True):
        import random
        rnd = random.Random(seed)
        self.a = [rnd.uniform(0.1, 2.0) for _ in range(2)]
        self.b = [rnd.uniform(0.1, 2.0) for _ in range(2)]
        self.p = [rnd.uniform(0.2, 1.0) for _ in range(2)]
        self.lat = 0.0 if linear else rnd.uniform(0.5, 3.0)

    def resolve_channel(self, ch):
        return ch

    def transmission_kind(self, pch):
        return None

    def has_table(self, name, pch):
        return name in ("o", "L")

    def table(self, name, pch):
        c = 0 if pch == "c0" else 1
        if name == "o":
            return _Table(lambda m: self.lat + self.a[c] * m)
        return _Table(lambda m, tau: (self.lat + self.b[c] * m) * (tau ** self.p[c]))

    def has_scalar(self, name, pch):
        return False

    def scalar(self, name, pch):
        raise KeyError(name)
