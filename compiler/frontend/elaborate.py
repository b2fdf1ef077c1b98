"""Elaboration: checked AST → cost IR, with name resolution and type checking in one walk.

What it does: builds the global scope of a module and everything it imports (channels, tables,
scalar parameters, transmissions, defs, algorithms; duplicates reported), resolves every name,
checks types (``int real bytes time channel bool``; ``cost`` is another name for ``time``), and
lowers each algorithm to :mod:`tlop.ir`: defs and algorithm calls inlined with simultaneous
``Let`` bindings, channel names replaced by channel indices, ``int || cost`` to ``Conc``,
``cost || cost || …`` to one n-ary ``ParComp`` of transmission sequences.

Errors are collected, never stopping at the first: an ill-typed sub-expression gets the type
``error``, which every rule accepts silently, so one mistake is reported once.

What it does not do: simplify, evaluate, or look at any profile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from tlop.frontend import ast as A
from tlop import ir
from tlop.runtime.diagnostics import DiagnosticSink, Span
from tlop.frontend.loader import LoadedModule
from tlop.runtime.units import SIZE_UNITS, TIME_UNITS, unit_factor, unit_kind

__all__ = ["elaborate", "elaborate_expression", "Elaborated", "TYPES"]

TYPES = ("int", "real", "bytes", "time", "channel", "bool", "cost")
NUMERIC = ("int", "real", "bytes", "time")
ERR = "error"


def _norm(t: str) -> str:
    return "time" if t == "cost" else t


@dataclass
class Elaborated:
    """The result: the IR program plus what printers need (docs, declarations)."""
    program: ir.Program
    root_algorithms: tuple
    decls: dict = field(default_factory=dict)  # name -> AST declaration (first one)
    modules: tuple = ()


@dataclass
class _DefInfo:
    decl: A.Decl
    params: tuple  # ((name, type), ...)
    result: Optional[str] = None
    body: Optional[ir.Expr] = None
    state: str = "new"  # new | busy | done


def _join(a: str, b: str) -> Optional[str]:
    """The type of ``a + b`` (also of if-branches, min/max): None when incompatible."""
    if ERR in (a, b):
        return ERR
    if a == b:
        return a
    if {a, b} <= {"int", "real"}:
        return "real"
    for dim in ("bytes", "time"):
        if {a, b} <= {dim, "int", "real"}:
            return dim
    return None


class _Elaborator:
    def __init__(self, modules: list[LoadedModule]):
        self.modules = modules
        self.sink = DiagnosticSink()
        self.channels: list[str] = []
        self.globals: dict[str, A.Decl] = {}
        self.tables: dict[str, ir.TableSig] = {}
        self.table_decls: dict[str, A.TableDecl] = {}
        self.scalars: dict[str, ir.ScalarSig] = {}
        self.scalar_types: dict[str, str] = {}
        self.transmissions: dict[str, list] = {}
        self.callables: dict[str, _DefInfo] = {}
        self.model = ""
        self.decl_model: dict[str, str] = {}

    # ================================================================= declarations
    def collect(self):
        for lm in self.modules:
            module_model = next((d.name for d in lm.module.decls if isinstance(d, A.ModelDecl)), "")
            for d in lm.module.decls:
                if isinstance(d, A.ModelDecl):
                    self.model = d.name
                    continue
                if isinstance(d, (A.TableDecl, A.ParamDecl)):
                    self.decl_model.setdefault(d.name, module_model)
                if isinstance(d, A.ImportDecl):
                    continue
                if isinstance(d, A.TransmissionDecl):
                    if d.name in self.globals and not isinstance(self.globals[d.name], A.TransmissionDecl):
                        self._dup(d, self.globals[d.name])
                        continue
                    self.globals.setdefault(d.name, d)
                    self.transmissions.setdefault(d.name, []).append(d)
                    continue
                if d.name in ir.FUNCTIONS or d.name in TYPES:
                    self.sink.error(f"'{d.name}' is a built-in name and cannot be redefined", d.span)
                    continue
                if d.name in self.globals:
                    self._dup(d, self.globals[d.name])
                    continue
                self.globals[d.name] = d
                if isinstance(d, A.ChannelDecl):
                    self.channels.append(d.name)
        for d in self.globals.values():
            if isinstance(d, A.TableDecl):
                self._table(d)
            elif isinstance(d, A.ParamDecl):
                self._param_decl(d)
            elif isinstance(d, (A.DefDecl, A.AlgorithmDecl)):
                self._callable(d)

    def _dup(self, d, first):
        self.sink.error(f"duplicate definition of '{d.name}'", d.span,
                        notes=(f"first defined at {first.span}",))

    def _type(self, t: A.TypeRef, allowed=TYPES) -> str:
        if t.name not in TYPES:
            self.sink.error(f"unknown type '{t.name}'; types are {', '.join(TYPES)}", t.span)
            return ERR
        if t.name not in allowed:
            self.sink.error(f"type '{t.name}' is not allowed here; expected {' or '.join(allowed)}", t.span)
            return ERR
        return _norm(t.name)

    def _channel_param(self, p: Optional[A.Param]) -> bool:
        if p is None:
            return False
        self._type(p.type, ("channel",))
        return True

    def _table(self, d: A.TableDecl):
        indexed = self._channel_param(d.channel)
        names = tuple(p.name for p in d.params)
        tau_index = None
        sizes = 0
        for i, p in enumerate(d.params):
            t = self._type(p.type, ("bytes", "int"))
            if p.name == "tau":
                if t not in ("int", ERR):
                    self.sink.error("the concurrency parameter 'tau' of a table must be int", p.type.span)
                tau_index = i
            elif t == "bytes":
                sizes += 1
            elif t != ERR:
                self.sink.error(f"table parameter '{p.name}' must be a size (bytes) or the concurrency 'tau: int'",
                                p.span)
        if sizes != 1:
            self.sink.error(f"table '{d.name}' must take exactly one size parameter (bytes), "
                            f"optionally followed by 'tau: int'", d.span)
        self._type(d.result, ("time", "real", "cost"))
        self.tables[d.name] = ir.TableSig(d.name, indexed, names, tau_index, self.decl_model.get(d.name, ""), span=d.span)
        self.table_decls[d.name] = d

    def _param_decl(self, d: A.ParamDecl):
        indexed = self._channel_param(d.channel)
        self.scalar_types[d.name] = self._type(d.type, ("time", "real", "bytes", "int", "cost"))
        self.scalars[d.name] = ir.ScalarSig(d.name, indexed, self.decl_model.get(d.name, ""), span=d.span)

    def _callable(self, d):
        params = []
        seen = set()
        for p in d.params:
            if p.name in seen:
                self.sink.error(f"duplicate parameter '{p.name}'", p.span)
            seen.add(p.name)
            params.append((p.name, self._type(p.type)))
        result = self._type(d.result) if d.result is not None else None
        self.callables[d.name] = _DefInfo(d, tuple(params), result)

    # ================================================================= bodies
    def body_of(self, name: str):
        """Elaborate a def/algorithm body once (its IR with its parameters free)."""
        info = self.callables[name]
        if info.state == "done":
            return info
        if info.state == "busy":
            return None
        info.state = "busy"
        env = {n: (ir.Var(n), t) for n, t in info.params}
        body, t = self.expr(info.decl.body, env)
        want = info.result or ("time" if isinstance(info.decl, A.AlgorithmDecl) else None)
        if want is not None and t != ERR and _join(want, t) != want:
            what = "an algorithm's cost" if isinstance(info.decl, A.AlgorithmDecl) and info.result is None \
                else f"'{name}'"
            self.sink.error(f"{what} must be {want}, but this expression is {t}", info.decl.body.span)
        info.result = info.result or t
        info.body = body
        info.state = "done"
        return info

    def transmission_variants(self):
        out = {}
        for name, decls in self.transmissions.items():
            seen = {}
            variants = []
            for d in decls:
                if d.channel not in self.channels:
                    self.sink.error(f"unknown channel '{d.channel}'; channels: {', '.join(self.channels) or '(none)'}",
                                    d.channel_span)
                    continue
                key = (d.channel, d.via)
                if key in seen:
                    self.sink.error(f"duplicate definition of transmission {name}[{d.channel}]"
                                    + (f" via {d.via}" if d.via else ""), d.span,
                                    notes=(f"first defined at {seen[key].span}",))
                    continue
                seen[key] = d
                body, t = self.expr(d.body, {d.param: (ir.Var(d.param), "bytes")})
                if t not in ("time", ERR):
                    self.sink.error(f"a transmission must cost a time, but this expression is {t}", d.body.span)
                variants.append(ir.TransmissionVariant(name, self.channels.index(d.channel), d.via, d.param, body,
                                                       span=d.span))
            out[name] = tuple(variants)
        return out

    # ================================================================= expressions
    def expr(self, e: A.Expr, env: dict):
        """(IR, type) of an expression in a local environment name -> (IR, type)."""
        method = getattr(self, "_" + type(e).__name__)
        return method(e, env)

    def _Number(self, e: A.Number, env):
        kind = unit_kind(e.unit)
        if kind is None:
            self.sink.error(f"unknown unit '{e.unit}'; sizes: {', '.join(SIZE_UNITS)}; "
                            f"times: {', '.join(TIME_UNITS)}", e.span)
            return ir.Num(e.value, span=e.span), ERR
        value = e.value * unit_factor(e.unit)
        if not math.isfinite(value):
            self.sink.error("number too large", e.span)
            return ir.Num(0.0, span=e.span), ERR
        if kind == "number":
            return ir.Num(value, span=e.span), ("int" if float(value).is_integer() else "real")
        return ir.Num(value, span=e.span), kind

    def _Name(self, e: A.Name, env):
        if e.id in env:
            node, t = env[e.id]
            return (ir.Var(e.id, span=e.span) if isinstance(node, ir.Var) else node), t
        d = self.globals.get(e.id)
        if isinstance(d, A.ChannelDecl):
            return ir.Num(float(self.channels.index(e.id)), span=e.span), "channel"
        if isinstance(d, A.ParamDecl):
            if self.scalars[e.id].channel_indexed:
                self.sink.error(f"parameter '{e.id}' is indexed by channel: write {e.id}[c]", e.span)
                return ir.Num(0.0), ERR
            return ir.Scalar(e.id, None, span=e.span), self.scalar_types[e.id]
        if d is not None:
            what = type(d).__name__.replace("Decl", "").lower()
            self.sink.error(f"'{e.id}' is a {what}; call it with arguments", e.span)
            return ir.Num(0.0), ERR
        self.sink.error(self._unknown(e.id, env), e.span)
        return ir.Num(0.0), ERR

    def _unknown(self, name, env, kind="name"):
        known = sorted(set(env) | set(self.globals))
        near = [k for k in known if _close(name, k)]
        hint = f"; did you mean {', '.join(repr(k) for k in near[:3])}?" if near else ""
        return f"unknown {kind} '{name}'{hint}"

    def _Indexed(self, e: A.Indexed, env):
        d = self.globals.get(e.id)
        if not isinstance(d, A.ParamDecl):
            if d is None:
                self.sink.error(self._unknown(e.id, env), e.span)
            else:
                self.sink.error(f"'{e.id}' is not a channel-indexed parameter", e.span)
            return ir.Num(0.0), ERR
        ch = self._channel_expr(e.channel, env)
        if not self.scalars[e.id].channel_indexed:
            self.sink.error(f"parameter '{e.id}' is not indexed by channel", e.span)
            return ir.Num(0.0), ERR
        return ir.Scalar(e.id, ch, span=e.span), self.scalar_types[e.id]

    def _channel_expr(self, e, env):
        node, t = self.expr(e, env)
        if t not in ("channel", ERR):
            self.sink.error(f"expected a channel, found {t}", e.span)
        return node

    def _Unary(self, e: A.Unary, env):
        node, t = self.expr(e.operand, env)
        if e.op == "not":
            if t not in ("bool", ERR):
                self.sink.error(f"'not' needs a condition (bool), found {t}", e.operand.span)
            return ir.Not(node, span=e.span), "bool"
        if t not in NUMERIC and t != ERR:
            self.sink.error(f"cannot negate a {t}", e.operand.span)
            return node, ERR
        return ir.Neg(node, span=e.span), t

    def _Binary(self, e: A.Binary, env):
        if e.op == "||":
            return self._conc(e, env)
        a, ta = self.expr(e.lhs, env)
        b, tb = self.expr(e.rhs, env)
        op = e.op
        if op in ("and", "or"):
            for node, t, sub in ((a, ta, e.lhs), (b, tb, e.rhs)):
                if t not in ("bool", ERR):
                    self.sink.error(f"'{op}' needs conditions (bool), found {t}", sub.span)
            return ir.Bin(op, a, b, span=e.span), "bool"
        if op in ir.COMPARE_OPS:
            if ERR in (ta, tb):
                return ir.Bin(op, a, b, span=e.span), "bool"
            if ta == tb == "channel" and op in ("==", "!="):
                return ir.Bin(op, a, b, span=e.span), "bool"
            if ta not in NUMERIC or tb not in NUMERIC or _join(ta, tb) is None:
                self.sink.error(f"cannot compare {ta} with {tb}", e.op_span or e.span)
                return ir.Bin(op, a, b, span=e.span), ERR
            return ir.Bin(op, a, b, span=e.span), "bool"
        if ERR in (ta, tb):
            return ir.Bin(op, a, b, span=e.span), ERR
        for t, sub in ((ta, e.lhs), (tb, e.rhs)):
            if t not in NUMERIC:
                self.sink.error(f"operator '{op}' needs numbers, found {t}", sub.span)
                return ir.Bin(op, a, b, span=e.span), ERR
        t = self._arith_type(op, ta, tb)
        if op in ("+", "-") and t in ("bytes", "time"):
            # a plain number may stand for a size or a time only as a literal (m - 1, 0.5 * t):
            # adding an int variable such as P to a time is a unit mistake
            for side, ts, sub in ((a, ta, e.lhs), (b, tb, e.rhs)):
                if ts in ("int", "real") and not _is_literal(sub):
                    self.sink.error(f"cannot {'add' if op == '+' else 'subtract'} a plain {ts} and {t}: "
                                    f"give it a unit (e.g. 2us, 64KiB) or multiply by one", sub.span)
                    return ir.Bin(op, a, b, span=e.span), ERR
        if t is None:
            self.sink.error(f"type mismatch: cannot apply '{op}' to {ta} and {tb}", e.op_span or e.span)
            return ir.Bin(op, a, b, span=e.span), ERR
        return ir.Bin(op, a, b, span=e.span), t

    @staticmethod
    def _arith_type(op, ta, tb):
        plain = ("int", "real")
        if op in ("+", "-"):
            return _join(ta, tb)
        if op == "*":
            if ta in plain and tb in plain:
                return _join(ta, tb)
            if ta in plain:
                return tb
            if tb in plain:
                return ta
            if {ta, tb} == {"bytes", "time"}:
                return "time"  # bytes × per-byte time (LogGP's G)
            return "real"
        if op == "/":
            if tb in plain:
                return "real" if ta in plain else ta
            if ta == tb:
                return "real"
            if ta == "time" and tb == "bytes":
                return "time"  # time per byte
            return "real"
        if op == "%":
            return ta if ta == tb or tb == "int" else "real"
        if op == "^":
            if tb not in plain:
                return None
            return "int" if ta == tb == "int" else ("real" if ta in plain else None)
        return None

    # ---------------------------------------------------------------- ‖
    def _conc(self, e: A.Binary, env):
        lhs, tl = self.expr(e.lhs, env)
        if tl in ("int", "real"):
            rhs, tr = self.expr(e.rhs, env)
            if tr not in ("time", ERR):
                self.sink.error(f"the right side of 'A || …' must be a cost, found {tr}", e.rhs.span)
                return rhs, ERR
            return ir.Conc(lhs, rhs, span=e.span), tr
        if tl == ERR:
            self.expr(e.rhs, env)
            return lhs, ERR
        if tl != "time":
            self.sink.error(f"the left side of '||' must be a count (int) or a cost, found {tl}", e.lhs.span)
            self.expr(e.rhs, env)
            return lhs, ERR
        operands = []
        ok = True
        rhs, tr = self.expr(e.rhs, env)
        sides = [(lhs, tl, e.lhs), (rhs, tr, e.rhs)]
        for i, (node, t, sub) in enumerate(sides):
            if i == 0 and isinstance(node, ir.ParComp) and isinstance(sub, A.Binary) and sub.op == "||":
                operands.extend(node.operands)  # a || b || c is one n-ary composition (A2 sorted)
                continue
            if t not in ("time", ERR):
                self.sink.error(f"both sides of a parallel composition must be costs, found {t}", sub.span)
                ok = False
                continue
            seq = _xmit_sequence(node)
            if seq is None:
                if t != ERR:
                    self.sink.error("each side of 'cost || cost' must be a transmission or a sequence of "
                                    "transmissions (e.g. T[c](m) + 2 || T[c](m2))", sub.span)
                ok = False
                continue
            operands.append(seq)
        if not ok:
            return ir.Num(0.0), ERR
        return ir.ParComp(tuple(operands), span=e.span), "time"

    # ---------------------------------------------------------------- binders
    def _LetIn(self, e: A.LetIn, env):
        value, t = self.expr(e.value, env)
        inner = dict(env)
        inner[e.name] = (ir.Var(e.name), t)
        body, tb = self.expr(e.body, inner)
        return ir.Let(((e.name, value),), body, span=e.span), tb

    def _IfThen(self, e: A.IfThen, env):
        test, tt = self.expr(e.test, env)
        if tt not in ("bool", ERR):
            self.sink.error(f"the condition of 'if' must be bool, found {tt}", e.test.span)
        a, ta = self.expr(e.then, env)
        b, tb = self.expr(e.otherwise, env)
        t = _join(ta, tb)
        if t is None:
            self.sink.error(f"the branches of 'if' have different types: {ta} and {tb}", e.span)
            t = ERR
        return ir.Cond(test, a, b, span=e.span), t

    def _Reduction(self, e: A.Reduction, env):
        lo, tl = self.expr(e.lo, env)
        hi, th = self.expr(e.hi, env)
        for t, sub in ((tl, e.lo), (th, e.hi)):
            if t not in ("int", ERR):
                self.sink.error(f"the bounds of '{e.kind}' must be integers (int), found {t}; "
                                f"use ceil or floor", sub.span)
        inner = dict(env)
        inner[e.var] = (ir.Var(e.var), "int")
        body, tb = self.expr(e.body, inner)
        if tb not in NUMERIC and tb != ERR:
            self.sink.error(f"the body of '{e.kind}' must be a number, found {tb}", e.body.span)
            tb = ERR
        return ir.Reduce(e.kind, e.var, lo, hi, body, span=e.span), tb

    # ---------------------------------------------------------------- calls
    def _Call(self, e: A.Call, env):
        name = e.callee
        if name in ir.FUNCTIONS and name not in self.globals:
            return self._builtin(e, env)
        d = self.globals.get(name)
        if d is None:
            for a in e.args:
                self.expr(a.value, env)
            if name in env:
                msg = f"'{name}' is a value, not a function"
            elif e.channel is not None:
                indexed = sorted(n for n, t in self.tables.items() if t.channel_indexed) + sorted(self.transmissions)
                msg = self._unknown(name, {}, "table or transmission")
                msg += f"; in scope: {', '.join(indexed) if indexed else '(none: import a platform)'}" \
                    if "did you mean" not in msg else ""
            else:
                msg = self._unknown(name, env, "function, table or algorithm")
            self.sink.error(msg, e.callee_span or e.span)
            return ir.Num(0.0), ERR
        if isinstance(d, A.TableDecl):
            return self._lookup(e, d, env)
        if isinstance(d, A.TransmissionDecl):
            return self._transmit(e, env)
        if isinstance(d, (A.DefDecl, A.AlgorithmDecl)):
            return self._inline(e, d, env)
        what = type(d).__name__.replace("Decl", "").lower()
        self.sink.error(f"'{name}' is a {what}, not something to call", e.callee_span or e.span)
        return ir.Num(0.0), ERR

    def _positional(self, e: A.Call, kind: str):
        for a in e.args:
            if a.name is not None:
                self.sink.error(f"{kind} arguments are positional; remove '{a.name} ='", a.span)

    def _builtin(self, e: A.Call, env):
        name = e.callee
        self._positional(e, "built-in function")
        if e.channel is not None:
            self.sink.error(f"built-in function '{name}' takes no channel index", e.channel.span)
        args = [self.expr(a.value, env) for a in e.args]
        arity = ir.FUNCTIONS[name]
        if arity is None and len(args) < 2:
            self.sink.error(f"'{name}' takes two or more arguments, got {len(args)}", e.span)
            return ir.Num(0.0), ERR
        if arity is not None and len(args) != arity:
            self.sink.error(f"'{name}' takes {arity} argument{'s' if arity > 1 else ''}, got {len(args)}", e.span)
            return ir.Num(0.0), ERR
        types = [t for _, t in args]
        if ERR in types:
            return ir.Fn(name, tuple(n for n, _ in args), span=e.span), ERR
        for (_, t), a in zip(args, e.args):
            if t not in NUMERIC:
                self.sink.error(f"'{name}' needs a number, found {t}", a.span)
                return ir.Num(0.0), ERR
        node = ir.Fn(name, tuple(n for n, _ in args), span=e.span)
        if name in ("ceil", "floor"):
            return node, ("int" if types[0] in ("int", "real") else types[0])
        if name == "abs":
            return node, types[0]
        if name in ("min", "max"):
            t = types[0]
            for t2, a in zip(types[1:], e.args[1:]):
                j = _join(t, t2)
                if j is None:
                    self.sink.error(f"'{name}' of {t} and {t2}", a.span)
                    return node, ERR
                t = j
            return node, t
        return node, "real"

    def _lookup(self, e: A.Call, d: A.TableDecl, env):
        sig = self.tables[d.name]
        self._positional(e, "table")
        ch = None
        if sig.channel_indexed and e.channel is None:
            self.sink.error(f"table '{d.name}' is indexed by channel: write {d.name}[c](…)", e.span)
        elif not sig.channel_indexed and e.channel is not None:
            self.sink.error(f"table '{d.name}' is not indexed by channel", e.channel.span)
        elif e.channel is not None:
            ch = self._channel_expr(e.channel, env)
        args = [self.expr(a.value, env) for a in e.args]
        if len(args) != len(d.params):
            self.sink.error(f"table '{d.name}' takes {len(d.params)} argument{'s' if len(d.params) != 1 else ''} "
                            f"({', '.join(p.name for p in d.params)}), got {len(args)}", e.span)
            return ir.Num(0.0), ERR
        for (node, t), p, a in zip(args, d.params, e.args):
            want = _norm(p.type.name)
            if t != ERR and want in TYPES and _join(want, t) != want:
                self.sink.error(f"argument '{p.name}' of table '{d.name}' must be {want}, found {t}", a.span)
        return ir.Lookup(d.name, ch, tuple(n for n, _ in args), span=e.span), _norm(d.result.name)

    def _transmit(self, e: A.Call, env):
        self._positional(e, "transmission")
        if e.channel is None:
            self.sink.error(f"transmission '{e.callee}' needs a channel: write {e.callee}[c](m)", e.span)
            return ir.Num(0.0), ERR
        ch = self._channel_expr(e.channel, env)
        if len(e.args) != 1:
            self.sink.error(f"transmission '{e.callee}' takes 1 argument (the size), got {len(e.args)}", e.span)
            return ir.Num(0.0), ERR
        size, t = self.expr(e.args[0].value, env)
        if t not in ("bytes", "int", ERR):
            self.sink.error(f"the size of a transmission must be bytes, found {t}", e.args[0].span)
        return ir.Transmit(e.callee, ch, size, span=e.span), "time"

    def _inline(self, e: A.Call, d, env):
        info = self.body_of(d.name)
        if info is None:
            self.sink.error(f"recursive call of '{d.name}' (definitions cannot recurse)", e.callee_span or e.span)
            return ir.Num(0.0), ERR
        if e.channel is not None:
            self.sink.error(f"'{d.name}' takes no channel index", e.channel.span)
        params = d.params
        bound: dict = {}
        positional = True
        for i, a in enumerate(e.args):
            if a.name is None:
                if not positional:
                    self.sink.error("a positional argument cannot follow a named one", a.span)
                    continue
                if i >= len(params):
                    self.sink.error(f"'{d.name}' takes {len(params)} argument{'s' if len(params) != 1 else ''}, "
                                    f"got {len(e.args)}", a.span)
                    break
                key = params[i].name
            else:
                positional = False
                key = a.name
                if key not in {p.name for p in params}:
                    self.sink.error(f"'{d.name}' has no parameter '{key}'", a.span)
                    continue
                if key in bound:
                    self.sink.error(f"argument '{key}' given twice", a.span)
                    continue
            bound[key] = (self.expr(a.value, env), a)
        bindings = []
        for p, (pname, ptype) in zip(params, info.params):
            if pname in bound:
                (node, t), a = bound[pname]
                if t != ERR and ptype != ERR and _join(ptype, t) != ptype:
                    self.sink.error(f"argument '{pname}' of '{d.name}' must be {ptype}, found {t}", a.span)
                if isinstance(node, ir.Var) and node.name == pname:
                    continue  # f(P) inside a scope where P is P: bindings are simultaneous, so drop it
                bindings.append((pname, node))
            elif p.default is not None:
                node, _ = self.expr(p.default, self._param_env(info))
                bindings.append((pname, node))
            else:
                self.sink.error(f"missing argument '{pname}' in call of '{d.name}'", e.span)
                return ir.Num(0.0), ERR
        result = info.result or ERR
        if not bindings:
            return info.body, result
        return ir.Let(tuple(bindings), info.body, span=e.span), result

    # ================================================================= algorithms
    def algorithm(self, name: str) -> Optional[ir.Algorithm]:
        d = self.globals[name]
        info = self.body_of(name)
        params = []
        for p, (pname, ptype) in zip(d.params, info.params):
            default = None
            if p.default is not None:
                default, t = self.expr(p.default, self._param_env(info))
                if t != ERR and ptype != ERR and _join(ptype, t) != ptype:
                    self.sink.error(f"the default of '{pname}' must be {ptype}, found {t}", p.default.span)
                self._closed(default, p.default.span, "a default value")
            constraint = None
            if p.op is not None:
                bound, t = self.expr(p.bound, self._param_env(info))
                if ptype not in NUMERIC and ptype != ERR:
                    self.sink.error(f"a constraint needs a numeric parameter; '{pname}' is {ptype}",
                                    p.constraint_span)
                elif t != ERR and ptype != ERR and _join(ptype, t) is None:
                    self.sink.error(f"cannot compare '{pname}' ({ptype}) with {t}", p.constraint_span)
                self._closed(bound, p.bound.span, "a constraint bound")
                constraint = (p.op, bound)
            elif ptype in ("bytes", "time"):
                constraint = (">=", ir.Num(0.0))  # sizes and times are never negative
            params.append(ir.ParamSig(pname, ptype, default, constraint, span=p.span,
                                      constraint_span=p.constraint_span))
        doc = "\n".join(d.docs)
        return ir.Algorithm(name, tuple(params), info.body, doc, self.model, span=d.span)

    @staticmethod
    def _param_env(info):
        return {n: (ir.Var(n), t) for n, t in info.params}

    def _closed(self, node, span, what):
        free = ir.free_vars(node)
        if free:
            self.sink.error(f"{what} must be a constant; it uses the parameter{'s' if len(free) > 1 else ''} "
                            f"{', '.join(sorted(free))}", span)


def _is_literal(e: A.Expr) -> bool:
    """A number written in the source, possibly negated or in parentheses of arithmetic on numbers."""
    if isinstance(e, A.Number):
        return True
    if isinstance(e, A.Unary) and e.op == "-":
        return _is_literal(e.operand)
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "/", "^"):
        return _is_literal(e.lhs) and _is_literal(e.rhs)
    return False


def _xmit_sequence(node: ir.Expr):
    """A cost expression as a tuple of Xmit items, if it is a sequence of (A ‖) transmissions."""
    if isinstance(node, ir.Transmit):
        return (ir.Xmit(ir.Num(1.0), node.name, node.channel, node.size, span=node.span),)
    if isinstance(node, ir.Conc):
        inner = _xmit_sequence(node.body)
        if inner is None:
            return None
        return tuple(ir.Xmit(_mul(node.factor, x.count), x.name, x.channel, x.size, span=x.span) for x in inner)
    if isinstance(node, ir.Bin) and node.op == "+":
        a, b = _xmit_sequence(node.lhs), _xmit_sequence(node.rhs)
        if a is None or b is None:
            return None
        return a + b
    return None


def _mul(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if isinstance(b, ir.Num) and b.value == 1.0:
        return a
    return ir.Bin("*", a, b)


def _close(a: str, b: str) -> bool:
    """A cheap 'did you mean': same letters up to one edit, or case-insensitive equal."""
    if a == b:
        return False
    if a.lower() == b.lower():
        return True
    if abs(len(a) - len(b)) > 1 or max(len(a), len(b)) < 2:
        return False
    # one substitution, insertion or deletion
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    return a[i + 1:] == b[i + 1:] or a[i:] == b[i + 1:] or a[i + 1:] == b[i:]


def elaborate_expression(modules: list[LoadedModule], expr: A.Expr, var_types: dict):
    """(IR, type) of a lone expression in the scope of a loaded module tree, with the free
    variables ``var_types`` (name -> type name).  Raises TlopError with every error."""
    el = _Elaborator(modules)
    el.collect()
    el.transmission_variants()
    env = {n: (ir.Var(n), _norm(t)) for n, t in var_types.items()}
    node, t = el.expr(expr, env)
    el.sink.raise_if_errors()
    return node, t


def elaborate(modules: list[LoadedModule]) -> Elaborated:
    """Check and lower a loaded module tree (root last).  Raises TlopError with every error."""
    el = _Elaborator(modules)
    el.collect()
    transmissions = el.transmission_variants()
    algorithms = {}
    root = modules[-1]
    root_names = tuple(d.name for d in root.module.decls if isinstance(d, A.AlgorithmDecl))
    for name, d in el.globals.items():
        if isinstance(d, A.DefDecl):
            el.body_of(name)
    ordered = list(root_names) + [n for n, d in el.globals.items()
                                  if isinstance(d, A.AlgorithmDecl) and n not in root_names]
    for name in ordered:
        if isinstance(el.globals.get(name), A.AlgorithmDecl):
            algorithms[name] = el.algorithm(name)
    el.sink.raise_if_errors()
    program = ir.Program(tuple(el.channels), dict(el.tables), dict(el.scalars), transmissions, algorithms,
                         el.model)
    return Elaborated(program, root_names, dict(el.globals), tuple(modules))
