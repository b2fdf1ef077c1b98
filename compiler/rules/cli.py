"""CLI glue for ``tlop rules``, ``tlop explain`` and ``tlop prove`` (wired by :mod:`tlop.cli`).

What it does: argument definitions and runners that print to stdout and return an exit status;
user errors raise :class:`~tlop.diagnostics.TlopError`.  ``tlop prove`` reads its claim with a
small expression reader (numbers, names, channel names, algorithm calls with positional or named
arguments, ``+ − · / ^ ‖``, ``ceil floor log2 min max abs``, one comparison).

What it does not do: parse ``.tlop`` files (the ``load`` callable does).
"""

from __future__ import annotations

import re
import time

from .. import ir
from ..diagnostics import TlopError
from .catalogue import RULES, MODEL_FAMILIES

__all__ = ["add_rules_arguments", "run_rules", "add_explain_arguments", "run_explain",
           "add_prove_arguments", "run_prove", "parse_claim", "parse_expr"]


# ----------------------------------------------------------------------------- tlop rules

def add_rules_arguments(p):
    p.add_argument("--verify", action="store_true", help="prove every rule with Z3 and print its time")
    p.add_argument("--family", action="append", default=None, help="only rules of this family (repeatable)")
    p.add_argument("--conditions", action="store_true",
                   help="with --verify: also check that every side condition is needed")


def _rule_text(r) -> str:
    from ..notation import format_text
    if r.rhs is None:
        return r.doc
    lhs = format_text(r.lhs).replace("?", "")
    rhs = format_text(r.rhs).replace("?", "")
    s = f"{lhs} → {rhs}"
    if r.conditions:
        s += "  if " + ", ".join(format_text(c).replace("?", "") for c in r.conditions)
    return s


def run_rules(args) -> int:
    from ..prove import verify_rule, condition_needed
    rules = [r for r in RULES if not args.family or r.family in args.family]
    if args.family and not rules:
        fams = ", ".join(dict.fromkeys(r.family for r in RULES))
        raise TlopError(f"no rules in family {', '.join(args.family)}; families: {fams}")
    if not args.verify:
        for r in rules:
            kind = "model " + "+".join(r.axioms) if r.kind == "model" else "identity"
            print(f"{r.name:16} {r.family:9} {kind:14} {_rule_text(r)}")
        print(f"{len(rules)} rules")
        return 0
    failed = 0
    t0 = time.perf_counter()
    for r in rules:
        o = verify_rule(r)
        how = {"induction": " (induction: " + ", ".join(f"{n} {s}" for n, s in o.obligations) + ")",
               "instances": f" ({len(o.obligations)} instances)"}.get(o.mode, "")
        print(f"{o.status:8} {o.seconds * 1000:8.1f} ms  {r.name}{how}")
        if not o.ok:
            failed += 1
            if o.status == "unknown":
                print("         Z3 returned unknown: counted as a failure")
            if o.counterexample is not None:
                print("         " + o.counterexample.render().replace("\n", "\n         "))
        if args.conditions and o.ok:
            for i, c in enumerate(r.conditions):
                if i in r.keep_reason:
                    print(f"         condition {i + 1} kept: {r.keep_reason[i]}")
                    continue
                d = condition_needed(r, i)
                if d.status != "refuted":
                    failed += 1
                    print(f"         condition {i + 1} is not needed ({d.status})")
    dt = time.perf_counter() - t0
    print(f"{len(rules) - failed} of {len(rules)} rules proved in {dt:.2f} s")
    return 1 if failed else 0


# ----------------------------------------------------------------------------- tlop explain

def add_explain_arguments(p):
    p.add_argument("file", help="a .tlop file or stdlib module")
    p.add_argument("algorithm", help="the algorithm to explain")
    p.add_argument("--no", action="append", default=[], choices=list(MODEL_FAMILIES),
                   help="switch a model-assumption family off (repeatable), e.g. --no A1")
    p.add_argument("--assume", action="append", default=[], help='an assumption such as "P >= 4"')
    p.add_argument("--latex", action="store_true", help="print LaTeX instead of text")


def _algorithm(program, name):
    if name not in program.algorithms:
        known = ", ".join(sorted(program.algorithms)) or "(none)"
        raise TlopError(f"no algorithm '{name}'; algorithms: {known}")
    return program.algorithms[name]


def run_explain(args, load) -> int:
    from ..explain import derivation_lines
    from ..simplify import DEFAULT_FAMILIES, PassManager, context_for
    program = load(args.file).program
    alg = _algorithm(program, args.algorithm)
    fams = DEFAULT_FAMILIES - set(args.no)
    assume = tuple(parse_expr(a, program) for a in args.assume)
    ctx = context_for(program, alg, families=fams, assume=assume)
    res = PassManager(ctx).run(alg.body)
    print(f"{alg.name}:")
    for line in derivation_lines(res, program, latex=args.latex):
        print(line)
    return 0


# ----------------------------------------------------------------------------- tlop prove

def add_prove_arguments(p):
    p.add_argument("file", help="a .tlop file or stdlib module")
    p.add_argument("claim", help='e.g. "recursive_doubling(P, m) > 2 * binomial_scatter(P, m)"')
    p.add_argument("--assume", action="append", default=[], help='e.g. "P >= 4" (repeatable)')
    p.add_argument("--bound", type=int, default=64, help="unroll sums to at most this many terms")
    p.add_argument("--no", action="append", default=[], choices=list(MODEL_FAMILIES),
                   help="do not assume this model family")


def run_prove(args, load) -> int:
    from ..prove import prove_relation
    from ..smt import ModelAxioms
    program = load(args.file).program
    lhs, rel, rhs, ints, facts = parse_claim(args.claim, program)
    # the parameter constraints of the algorithms called hold, and the user's assumptions
    assume = list(facts) + [parse_expr(a, program, ints) for a in args.assume]
    ax = ModelAxioms(linearity="linearity" not in args.no, a1="A1" not in args.no)
    o = prove_relation(lhs, rel, rhs, program, assume=assume, int_vars=ints, axioms=ax, bound=args.bound)
    if o.ok:
        print(f"proved ({o.mode}) in {o.seconds:.2f} s: {args.claim}")
        return 0
    if o.status == "refuted":
        print(f"refuted: {args.claim}")
        if o.counterexample is not None:
            print(o.counterexample.render())
        return 1
    print(f"unknown: Z3 could not decide {args.claim} (counted as a failure)")
    return 1


# ----------------------------------------------------------------------------- claim reader

_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)|([A-Za-z_][A-Za-z_0-9]*)|(<=|>=|==|!=|\|\||[-+*/^(),<>=\[\]]))")


def _tokens(text):
    pos, out = 0, []
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise TlopError(f"cannot read the claim at '{text[pos:]}'")
        out.append(m.group(1) or m.group(2) or m.group(3))
        pos = m.end()
    return out


class _Reader:
    def __init__(self, text, program, ints):
        self.toks = _tokens(text)
        self.i = 0
        self.program = program
        self.ints = ints
        self.text = text
        self.facts = []

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, want=None):
        t = self.peek()
        if t is None or (want is not None and t != want):
            raise TlopError(f"in '{self.text}': expected {want or 'more'} but found {t or 'the end'}")
        self.i += 1
        return t

    def expr(self):
        e = self.term_conc()
        while self.peek() in ("+", "-"):
            op = self.take()
            e = ir.Bin(op, e, self.term_conc())
        return e

    def term_conc(self):
        e = self.term()
        while self.peek() == "||":
            self.take()
            e = ir.Conc(e, self.term())
        return e

    def term(self):
        e = self.unary()
        while self.peek() in ("*", "/"):
            op = self.take()
            e = ir.Bin(op, e, self.unary())
        return e

    def unary(self):
        if self.peek() == "-":
            self.take()
            return ir.Neg(self.unary())
        base = self.atom()
        if self.peek() == "^":
            self.take()
            return ir.Bin("^", base, self.unary())
        return base

    def atom(self):
        t = self.take()
        if t == "(":
            e = self.expr()
            self.take(")")
            return e
        if t[0].isdigit():
            return ir.Num(float(t))
        if self.peek() == "(" or self.peek() == "[":
            ch = None
            if self.peek() == "[":
                self.take("[")
                ch = self.expr()
                self.take("]")
            self.take("(")
            args, named = [], {}
            while self.peek() != ")":
                if self.i + 1 < len(self.toks) and self.toks[self.i + 1] == "=" and self.peek()[0].isalpha():
                    name = self.take()
                    self.take("=")
                    named[name] = self.expr()
                else:
                    args.append(self.expr())
                if self.peek() == ",":
                    self.take(",")
            self.take(")")
            return self.call(t, ch, args, named)
        if self.program is not None and t in self.program.channels:
            return ir.Num(float(self.program.channels.index(t)))
        return ir.Var(t)

    def call(self, name, ch, args, named):
        if name in ir.FUNCTIONS:
            return ir.Fn(name, tuple(args))
        prog = self.program
        if prog is not None and name in prog.algorithms:
            alg = prog.algorithms[name]
            binds = []
            for k, p in enumerate(alg.params):
                if k < len(args):
                    v = args[k]
                elif p.name in named:
                    v = named[p.name]
                elif p.default is not None:
                    v = p.default
                else:
                    raise TlopError(f"{name}: missing argument '{p.name}'")
                binds.append((p.name, v))
                if p.type in ("int", "channel") and isinstance(v, ir.Var):
                    self.ints.add(v.name)
                if p.constraint is not None:
                    self.facts.append(ir.Bin(p.constraint[0], v, p.constraint[1]))
                if p.type in ("bytes", "int"):
                    self.facts.append(ir.Bin(">=", v, ir.Num(0)))
            return ir.Let(tuple(binds), alg.body)
        if prog is not None and name in prog.tables:
            return ir.Lookup(name, ch, tuple(args))
        if prog is not None and name in prog.transmissions:
            if ch is None:
                raise TlopError(f"transmission '{name}' needs a channel: {name}[c](m)")
            return ir.Transmit(name, ch, args[0])
        raise TlopError(f"unknown name '{name}' in the claim")


def parse_expr(text: str, program=None, ints=None) -> ir.Expr:
    """An IR expression (or a comparison, as a 0/1 expression) read from ``text``."""
    r = _Reader(text, program, ints if ints is not None else set())
    e = r.expr()
    if r.peek() in ("<", "<=", ">", ">=", "==", "!=", "="):
        op = r.take()
        e = ir.Bin("==" if op == "=" else op, e, r.expr())
    if r.peek() is not None:
        raise TlopError(f"in '{text}': unexpected '{r.peek()}'")
    return e


def parse_claim(text: str, program=None):
    """``(lhs, relation, rhs, integer variables, parameter facts)`` of a claim such as ``"a(P, m) <= 2 * b(P, m)"``."""
    ints: set = set()
    r = _Reader(text, program, ints)
    lhs = r.expr()
    rel = r.peek()
    if rel not in ("<", "<=", ">", ">=", "==", "!=", "="):
        raise TlopError(f"a claim compares two costs, e.g. \"a(P, m) <= b(P, m)\"; got '{text}'")
    r.take()
    rhs = r.expr()
    if r.peek() is not None:
        raise TlopError(f"in '{text}': unexpected '{r.peek()}'")
    return lhs, ("==" if rel == "=" else rel), rhs, ints, tuple(dict.fromkeys(r.facts))
