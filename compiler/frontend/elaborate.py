"""Elaboration: checked AST → cost IR, with name resolution and type checking in one walk.

What it does: builds the global scope of a module and everything it imports (channels, tables,
scalar parameters, transmissions, defs, algorithms; duplicates reported), resolves every name,
checks types and dimensions (:mod:`tlop.ir.types`: ``int real bool channel``, and numbers with a
dimension — ``bytes``, ``time`` (``cost``), and products and quotients such as ``time/bytes``),
and lowers each algorithm to :mod:`tlop.ir`, every node annotated with its type: defs and
algorithm calls inlined with simultaneous ``Let`` bindings, channel names replaced by channel
indices, ``A || cost`` to ``Conc``, ``cost || cost || …`` to one n-ary ``ParComp`` of
transmission sequences.

Dimensions: a literal with a unit (``2us``, ``4KiB``) has its dimension, a plain number none,
except that a plain ``0`` is a zero of whatever dimension its place needs (``m > 0``,
``max(t, 0)``).  An algorithm's cost and a transmission's body must be times.  Defaults of defs
and algorithms must be closed (constants): they are lowered once, where they are declared.

Errors are collected, never stopping at the first: an ill-typed sub-expression gets the type
``error``, which every rule accepts silently, so one mistake is reported once.

Cost: linear in the declarations.  A def's body is lowered once and shared by every call that
inlines it (so the IR is a DAG), and every question asked of lowered IR — its tree size for the
inlining limit, whether it holds a schedule — is answered by one walk memoized on node identity
for the whole pass (:class:`TreeSizes`), which only descends into nodes it has not seen.

What it does not do: simplify, evaluate, or look at any profile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from tlop.frontend import ast as A
from tlop import ir
from tlop.ir import types as T
from tlop.ir.types import Type, TypeRuleError
from tlop.runtime.suggest import close
from tlop.runtime.diagnostics import DiagnosticSink, Span
from tlop.frontend.loader import LoadedModule
from tlop.frontend.transmission_cycles import check_transmission_cycles
from tlop.frontend.expansion import MAX_EXPANDED_NODES, TreeSizes, check_transmission_expansion, culprit, \
    too_big_message
from tlop.runtime.units import SIZE_UNITS, TIME_UNITS, unit_factor, unit_kind

__all__ = ["elaborate", "elaborate_expression", "Elaborated", "TYPES"]

TYPES = ("int", "real", "bytes", "time", "channel", "bool", "cost")
#: the platform table ``reduce p : m`` reads: the cost γ(m) of reducing m bytes
GAMMA = "gamma"
#: the loop variable of an exchange lowered for a dataflow model (no source name can clash)
EXCHANGE_VAR = "%x"
ERR = T.ERROR


@dataclass
class Elaborated:
    """The result: the IR program plus what printers need (docs, declarations)."""
    program: ir.Program
    root_algorithms: tuple
    decls: dict = field(default_factory=dict)  # name -> AST declaration (first one)
    modules: tuple = ()


class _Local:
    """A variable in an elaboration environment (a parameter, a ``let`` name or an index):
    each use of it lowers to an :class:`ir.Var` of its own span.  Environments map a name to
    ``(LOCAL, type)`` or ``(a _PerRank, type)``."""

    __slots__ = ()


LOCAL = _Local()


class _PerRank:
    """A per-rank parameter in an elaboration environment (``counts: bytes[P]``): only
    ``counts[r]`` reads it (:class:`tlop.ir.PerRankArg`); the bare name is an error."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


@dataclass
class _DefInfo:
    decl: A.Decl
    params: tuple  # ((name, Type), ...)
    result: Optional[Type] = None
    body: Optional[ir.Expr] = None
    defaults: dict = field(default_factory=dict)  # name -> closed IR
    state: str = "new"  # new | busy | done
    exploded: bool = False  # its body expanded past the size limit (reported once, there)
    env: Optional[dict] = None  # the parameters' environment (_Elaborator._param_env)
    per_rank: bool = False  # a parameter is declared per rank (``counts: bytes[P]``)


def _is_zero(e: A.Expr) -> bool:
    """A plain ``0``: a zero of any dimension."""
    return isinstance(e, A.Number) and e.value == 0 and e.unit == ""


def _zero(t: Type, span) -> ir.Num:
    return ir.Num(0.0, span=span, ty=t)


class _Elaborator:
    def __init__(self, modules: list[LoadedModule]):
        self.modules = modules
        self.sink = DiagnosticSink()
        self.channels: list[str] = []
        self.globals: dict[str, A.Decl] = {}
        self.tables: dict[str, ir.TableSig] = {}
        self.table_decls: dict[str, A.TableDecl] = {}
        self.scalars: dict[str, ir.ScalarSig] = {}
        self.transmissions: dict[str, list] = {}
        self.callables: dict[str, _DefInfo] = {}
        self.model = ""
        self.decl_model: dict[str, str] = {}
        self.channel_info: dict[str, ir.ChannelInfo] = {}
        self.sizes = TreeSizes()
        self._calls_exploded = False
        self._index = None  # (number of globals, index) for "did you mean"
        self._numbers: dict = {}  # (value, unit, type of value) -> (IR value, Type) of a literal

    def _has_schedule(self, e) -> bool:
        """:func:`ir.has_schedule`, remembered per node for the whole pass (in :attr:`sizes`, which
        walks each node once for its size and this): inlined bodies are shared, and every
        algorithm calling a def would walk the def's body again."""
        return self.sizes.has_schedule(e)

    def _bounded(self, node, t, what: str, span):
        """``node`` if its tree (definitions inlined) is small enough, else an error at the place
        where it crosses the limit and an ``error`` node (so one explosion is reported once)."""
        size = self.sizes.size(node)
        if size <= MAX_EXPANDED_NODES:
            return node, t
        self.sink.error(too_big_message(what, size), culprit(self.sizes, node).span or span)
        self._calls_exploded = True  # the enclosing definition is not inlined (nor reported) again
        return ir.Num(0.0, span=span), ERR

    # ================================================================= declarations
    def collect(self):
        for lm in self.modules:
            module_model = None  # the module's model (anywhere in it), looked up at its first table or param
            for d in lm.module.decls:
                if isinstance(d, A.ModelDecl):
                    self.model = d.name
                    continue
                if isinstance(d, (A.TableDecl, A.ParamDecl)):
                    if module_model is None:
                        module_model = next((m.name for m in lm.module.decls if isinstance(m, A.ModelDecl)), "")
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
                    if d.placement is not None or d.contention is not None:
                        self.channel_info[d.name] = ir.ChannelInfo(d.placement, d.contention)
        for d in self.globals.values():
            if isinstance(d, A.TableDecl):
                self._table(d)
            elif isinstance(d, A.ParamDecl):
                self._param_decl(d)
            elif isinstance(d, (A.DefDecl, A.AlgorithmDecl)):
                self._callable(d)
            elif isinstance(d, A.ConfigDecl):
                self._config_decl(d)

    def _config_decl(self, d: A.ConfigDecl):
        """Check a ``config`` declaration against the tables a configuration offers
        (:data:`tlop.runtime.configs.CONFIG_FIELDS`)."""
        from tlop.runtime.configs import CONFIG_FIELDS

        offered = CONFIG_FIELDS.get(d.name)
        if offered is None:
            self.sink.error(f"no configuration table '{d.name}'; a configuration offers "
                            f"{', '.join(CONFIG_FIELDS)}", d.span)
            return
        seen = set()
        for f in d.fields:
            if f.name in seen:
                self.sink.error(f"duplicate field '{f.name}'", f.span)
            seen.add(f.name)
            if f.name not in offered:
                self.sink.error(f"the configuration's {d.name} has no field '{f.name}'; its fields: "
                                f"{', '.join(offered)}", f.span)
                continue
            if self._type(f.type) not in (T.INT, ERR):
                self.sink.error(f"configuration fields are int, not '{f.type.name}'", f.type.span)
            if f.per_rank != offered[f.name]:
                want = f"{f.name}: int[P] (one value per process)" if offered[f.name] else f"{f.name}: int (one value)"
                self.sink.error(f"{d.name}.{f.name} is declared '{want}'", f.span)

    def _dup(self, d, first):
        self.sink.error(f"duplicate definition of '{d.name}'", d.span,
                        notes=(f"first defined at {first.span}",))

    def _type(self, t: A.TypeRef, numeric: bool = False) -> Type:
        """The type a TypeRef names; ``numeric`` allows only numbers (any dimension)."""
        ty = T.parse_type(t.name)
        if ty is None:
            self.sink.error(f"unknown type '{t.name}'; types are {', '.join(TYPES)}, and products and "
                            f"quotients of numeric types such as time/bytes", t.span)
            return ERR
        if numeric and not ty.is_num:
            self.sink.error(f"type '{t.name}' is not allowed here; expected a number type "
                            f"(int, real, bytes, time, time/bytes …)", t.span)
            return ERR
        return ty

    def _channel_param(self, p: Optional[A.Param]) -> bool:
        if p is None:
            return False
        t = self._type(p.type)
        if t not in (T.CHANNEL, ERR):
            self.sink.error(f"type '{p.type.name}' is not allowed here; expected channel", p.type.span)
        return True

    def _table(self, d: A.TableDecl):
        indexed = self._channel_param(d.channel)
        names = tuple(p.name for p in d.params)
        tau_index = None
        sizes = 0
        tys = []
        for i, p in enumerate(d.params):
            t = self._type(p.type)
            tys.append(t)
            if p.name == "tau":
                if t not in (T.INT, ERR):
                    self.sink.error("the concurrency parameter 'tau' of a table must be int", p.type.span)
                tau_index = i
            elif t == T.BYTES:
                sizes += 1
            elif t != ERR:
                self.sink.error(f"table parameter '{p.name}' must be a size (bytes) or the concurrency 'tau: int'",
                                p.span)
        if sizes != 1:
            self.sink.error(f"table '{d.name}' must take exactly one size parameter (bytes), "
                            f"optionally followed by 'tau: int'", d.span)
        result = self._type(d.result, numeric=True)
        self.tables[d.name] = ir.TableSig(d.name, indexed, names, tau_index, self.decl_model.get(d.name, ""),
                                          span=d.span, ty=result, param_tys=tuple(tys))
        self.table_decls[d.name] = d

    def _param_decl(self, d: A.ParamDecl):
        indexed = self._channel_param(d.channel)
        t = self._type(d.type, numeric=True)
        self.scalars[d.name] = ir.ScalarSig(d.name, indexed, self.decl_model.get(d.name, ""), span=d.span, ty=t)

    def _callable(self, d):
        params = []
        seen = set()
        per_rank = False
        for p in d.params:
            per_rank = per_rank or p.per_rank is not None
            if p.name in seen:
                self.sink.error(f"duplicate parameter '{p.name}'", p.span)
            seen.add(p.name)
            params.append((p.name, self._type(p.type)))
            if p.per_rank is not None and not isinstance(d, A.AlgorithmDecl):
                self.sink.error(f"'{p.name}: {p.type.name}[{p.per_rank}]': a per-rank parameter (one value for each process) "
                                f"is only allowed in an algorithm", p.per_rank_span or p.span)
        result = self._type(d.result) if d.result is not None else None
        self.callables[d.name] = _DefInfo(d, tuple(params), result, per_rank=per_rank)

    # ================================================================= bodies
    def body_of(self, name: str):
        """Elaborate a def/algorithm once: its body (IR with its parameters free) and its
        defaults (closed IR)."""
        info = self.callables[name]
        if info.state == "done":
            return info
        if info.state == "busy":
            return None
        info.state = "busy"
        for p, (pname, ptype) in zip(info.decl.params, info.params):
            if p.default is not None:
                info.defaults[pname] = self._default(p, ptype, info)
        env = self._param_env(info)
        outer, self._calls_exploded = self._calls_exploded, False
        body, t = self.expr(info.decl.body, env)
        if not self._calls_exploded:
            body, t = self._bounded(body, t, f"'{name}'", info.decl.body.span)
        # a body too big, or one calling a body too big, is not inlined (nor reported) again
        info.exploded = self._calls_exploded
        self._calls_exploded = outer or info.exploded
        is_alg = isinstance(info.decl, A.AlgorithmDecl)
        want = info.result or (T.TIME if is_alg else None)
        if want is not None and _is_zero(info.decl.body) and want.is_num:
            body, t = _zero(want, info.decl.body.span), want
        if want is not None and not want.is_error and not T.accepts(want, t):
            if is_alg and want == T.TIME:
                msg = f"an algorithm's cost must be a time (s), but this expression is {t.describe()}"
            else:
                msg = f"'{name}' must be {want.describe()}, but this expression is {t.describe()}"
            self.sink.error(msg, info.decl.body.span)
        info.result = info.result or t
        info.body = body
        info.state = "done"
        return info

    def _default(self, p: A.Param, ptype: Type, info: _DefInfo) -> ir.Expr:
        """A parameter's default: closed, of the parameter's type, lowered once here."""
        node, t = self.expr(p.default, self._param_env(info))
        node, t = self._fit(node, t, p.default, ptype)
        if not T.accepts(ptype, t):
            self.sink.error(f"the default of '{p.name}' must be {ptype.describe()}, found {t.describe()}",
                            p.default.span)
        self._closed(node, p.default.span, "a default value")
        return node

    def _fit(self, node, t: Type, sub: A.Expr, want: Type):
        """A plain ``0`` where a number of type ``want`` is expected becomes a zero of that type."""
        if _is_zero(sub) and want.is_num:
            return _zero(want, sub.span), want
        return node, t

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
                body, t = self.expr(d.body, {d.param: (LOCAL, T.BYTES)})
                body, t = self._bounded(body, t, f"transmission '{name}'", d.body.span)
                if t not in (T.TIME, ERR):
                    self.sink.error(f"a transmission must cost a time (s), but this expression is {t.describe()}",
                                    d.body.span)
                variants.append(ir.TransmissionVariant(name, self.channels.index(d.channel), d.via, d.param, body,
                                                       span=d.span))
            out[name] = tuple(variants)
        return out

    # ================================================================= expressions
    def expr(self, e: A.Expr, env: dict):
        """(IR, type) of an expression in a local environment name -> (IR, type)."""
        rule = _EXPR_RULES.get(type(e))
        if rule is None:  # the method named after the AST class, looked up once per class
            rule = _EXPR_RULES[type(e)] = getattr(_Elaborator, "_" + type(e).__name__)
        return rule(self, e, env)

    def _Number(self, e: A.Number, env):
        # a literal's value and type depend on its value and unit alone: computed once for each
        # (a zero is not remembered, so 0.0 and -0.0, which are equal keys, never meet)
        key = (e.value, e.unit, type(e.value))
        hit = self._numbers.get(key)
        if hit is not None:
            return ir.Num(hit[0], span=e.span, ty=hit[1]), hit[1]
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
            t = T.INT if float(value).is_integer() else T.REAL
        else:
            t = T.TYPE_NAMES[kind]
        if value != 0:
            self._numbers[key] = (value, t)
        return ir.Num(value, span=e.span, ty=t), t

    def _Name(self, e: A.Name, env):
        local = env.get(e.id)
        if local is not None:
            node, t = local
            if isinstance(node, _PerRank):
                self.sink.error(f"'{e.id}' is a per-rank parameter (one value for each process): write {e.id}[r] for rank r's", e.span)
                return ir.Num(0.0), ERR
            return ir.Var(e.id, span=e.span, ty=t), t
        d = self.globals.get(e.id)
        if isinstance(d, A.ChannelDecl):
            return ir.Num(float(self.channels.index(e.id)), span=e.span, ty=T.CHANNEL), T.CHANNEL
        if isinstance(d, A.ParamDecl):
            sig = self.scalars[e.id]
            if sig.channel_indexed:
                self.sink.error(f"parameter '{e.id}' is indexed by channel: write {e.id}[c]", e.span)
                return ir.Num(0.0), ERR
            return ir.Scalar(e.id, None, span=e.span, ty=sig.ty), sig.ty
        if isinstance(d, A.ConfigDecl):
            self.sink.error(f"'{e.id}' is a configuration table: write {e.id}.FIELD "
                            f"({', '.join(f.name for f in d.fields)})", e.span)
            return ir.Num(0.0), ERR
        if d is not None:
            what = type(d).__name__.replace("Decl", "").lower()
            self.sink.error(f"'{e.id}' is a {what}; call it with arguments", e.span)
            return ir.Num(0.0), ERR
        self.sink.error(self._unknown(e.id, env), e.span)
        return ir.Num(0.0), ERR

    def _unknown(self, name, env, kind="name"):
        near = sorted({k for k in env if _close(name, k)} | self._near_globals(name))
        hint = f"; did you mean {', '.join(repr(k) for k in near[:3])}?" if near else ""
        return f"unknown {kind} '{name}'{hint}"

    def _near_globals(self, name: str) -> set:
        """The global names :func:`_close` to ``name``, through an index built once: every name
        under itself, its lower case and each of its one-character deletions (two names one edit
        apart share a key).  Comparing with every global made 10⁴ unknown names take minutes."""
        if self._index is None or self._index[0] != len(self.globals):
            index: dict = {}
            for k in self.globals:
                for key in _edit_keys(k):
                    index.setdefault(key, set()).add(k)
            self._index = (len(self.globals), index)
        index = self._index[1]
        candidates = set()
        for key in _edit_keys(name):
            candidates |= index.get(key, set())
        return {k for k in candidates if _close(name, k)}

    def _ConfigAccess(self, e: A.ConfigAccess, env):
        d = self.globals.get(e.config)
        index = self._int_expr(e.index, env, f"the index of {e.config}.{e.field}[…]") if e.index is not None else None
        if not isinstance(d, A.ConfigDecl):
            if d is None or e.config in env:
                self.sink.error(f"unknown configuration table '{e.config}'; declare it, e.g. "
                                f"'config {e.config} {{ … }}'", e.span)
            else:
                self.sink.error(f"'{e.config}' is not a configuration table (declared with 'config')", e.span)
            return ir.Num(0.0), ERR
        f = next((f for f in d.fields if f.name == e.field), None)
        if f is None:
            self.sink.error(f"'{e.config}' has no field '{e.field}'; its fields: "
                            f"{', '.join(f.name for f in d.fields) or 'none'}", e.span)
            return ir.Num(0.0), ERR
        if f.per_rank and index is None:
            self.sink.error(f"{e.config}.{e.field} has one value per process: write {e.config}.{e.field}[p]", e.span)
            return ir.Num(0.0), ERR
        if not f.per_rank and index is not None:
            self.sink.error(f"{e.config}.{e.field} is one value: write it without [ ]", e.span)
            return ir.Num(0.0), ERR
        return ir.ConfigRef(e.config, e.field, index, span=e.span, ty=T.INT), T.INT

    def _Indexed(self, e: A.Indexed, env):
        if e.id in env:
            node, t = env[e.id]
            if not isinstance(node, _PerRank):
                self.sink.error(f"'{e.id}' is not a per-rank parameter: only a parameter declared "
                                f"'{e.id}: TYPE[P]' is indexed by rank", e.span)
                return ir.Num(0.0), ERR
            index = self._int_expr(e.channel, env, f"the index of {e.id}[…]")
            return ir.PerRankArg(e.id, index, span=e.span, ty=t), t
        d = self.globals.get(e.id)
        if not isinstance(d, A.ParamDecl):
            if d is None:
                self.sink.error(self._unknown(e.id, env), e.span)
            else:
                self.sink.error(f"'{e.id}' is not a channel-indexed parameter", e.span)
            return ir.Num(0.0), ERR
        ch = self._channel_expr(e.channel, env)
        sig = self.scalars[e.id]
        if not sig.channel_indexed:
            self.sink.error(f"parameter '{e.id}' is not indexed by channel", e.span)
            return ir.Num(0.0), ERR
        return ir.Scalar(e.id, ch, span=e.span, ty=sig.ty), sig.ty

    def _channel_expr(self, e, env):
        node, t = self.expr(e, env)
        if t not in (T.CHANNEL, ERR):
            self.sink.error(f"expected a channel, found {t.describe()}", e.span)
        return node

    def _rule(self, rule, operands, whole_span):
        """Apply a typing rule; a violation is reported at the operand it names (or the whole
        expression) and gives the type ``error``."""
        try:
            return rule()
        except TypeRuleError as err:
            return self._rule_error(err, operands, whole_span)

    def _rule_error(self, err: TypeRuleError, operands, whole_span):
        """Report a violated typing rule at the operand it names (or the whole expression); the
        type ``error``."""
        span = operands[err.operand].span if err.operand is not None and err.operand < len(operands) \
            else whole_span
        self.sink.error(err.message, span)
        return ERR

    def _Unary(self, e: A.Unary, env):
        node, t = self.expr(e.operand, env)
        if e.op == "not":
            t2 = self._rule(lambda: T.logical_not(t), (e.operand,), e.span)
            return ir.Not(node, span=e.span, ty=T.BOOL), (T.BOOL if t2 == T.BOOL else ERR)
        t2 = self._rule(lambda: T.negate(t), (e.operand,), e.span)
        if t2 == ERR:
            return node, ERR
        return ir.Neg(node, span=e.span, ty=t2), t2

    def _Binary(self, e: A.Binary, env):
        op = e.op
        if op == "||":
            return self._conc(e, env)
        a, ta = self.expr(e.lhs, env)
        b, tb = self.expr(e.rhs, env)
        if op in _SAME_DIMENSION_OPS:  # a plain 0 takes the dimension of the other side
            if tb.is_num:
                a, ta = self._fit(a, ta, e.lhs, tb)
            if ta.is_num:
                b, tb = self._fit(b, tb, e.rhs, ta)
        rule = _BINARY_RULES.get(op)
        try:
            t = rule(op, ta, tb) if rule is not None else T.arith(op, ta, tb, _constant(e.rhs) if op == "^" else None)
        except TypeRuleError as err:
            t = self._rule_error(err, (e.lhs, e.rhs), e.span)
        return ir.Bin(op, a, b, span=e.span, ty=t), t

    # ---------------------------------------------------------------- ‖
    def _conc(self, e: A.Binary, env):
        lhs, tl = self.expr(e.lhs, env)
        if tl.is_num and tl.dimensionless:
            rhs, tr = self.expr(e.rhs, env)
            t = self._rule(lambda: T.conc(tl, tr), (e.lhs, e.rhs), e.span)
            if t == ERR:
                return rhs, ERR
            return ir.Conc(lhs, rhs, span=e.span, ty=T.TIME), T.TIME
        if tl == ERR:
            self.expr(e.rhs, env)
            return lhs, ERR
        if tl != T.TIME:
            self.sink.error(f"the left side of '||' must be a plain number (a count) or a cost, "
                            f"found {tl.describe()}", e.lhs.span)
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
            if t not in (T.TIME, ERR):
                self.sink.error(f"both sides of a parallel composition must be costs, found {t.describe()}",
                                sub.span)
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
        return ir.ParComp(tuple(operands), span=e.span, ty=T.TIME), T.TIME

    # ---------------------------------------------------------------- binders
    def _LetIn(self, e: A.LetIn, env):
        value, t = self.expr(e.value, env)
        inner = dict(env)
        inner[e.name] = (LOCAL, t)
        body, tb = self.expr(e.body, inner)
        return ir.Let(((e.name, value),), body, span=e.span, ty=tb), tb

    def _IfThen(self, e: A.IfThen, env):
        test, tt = self.expr(e.test, env)
        if tt not in (T.BOOL, ERR):
            self.sink.error(f"the condition of 'if' must be bool, found {tt.describe()}", e.test.span)
        a, ta = self.expr(e.then, env)
        b, tb = self.expr(e.otherwise, env)
        if tb.is_num:
            a, ta = self._fit(a, ta, e.then, tb)
        if ta.is_num:
            b, tb = self._fit(b, tb, e.otherwise, ta)
        t = self._rule(lambda: T.branches(ta, tb), (e.then, e.otherwise), e.span)
        return ir.Cond(test, a, b, span=e.span, ty=t), t

    def _Reduction(self, e: A.Reduction, env):
        lo, tl = self.expr(e.lo, env)
        hi, th = self.expr(e.hi, env)
        for t, sub in ((tl, e.lo), (th, e.hi)):
            self._rule(lambda: T.reduction_bound(e.kind, t), (sub,), sub.span)
        inner = dict(env)
        inner[e.var] = (LOCAL, T.INT)
        body, tb = self.expr(e.body, inner)
        if not tb.is_num and tb != ERR:
            self.sink.error(f"the body of '{e.kind}' must be a number, found {tb.describe()}", e.body.span)
            tb = ERR
        return ir.Reduce(e.kind, e.var, lo, hi, body, span=e.span, ty=tb), tb

    # ---------------------------------------------------------------- calls
    def _Call(self, e: A.Call, env):
        name = e.callee
        if name in ir.FUNCTIONS and name not in self.globals:
            return self._builtin(e, env)
        if name == "node" and name not in self.globals and name not in env:
            return self._node_of(e, env)
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
        if name in ("min", "max"):  # max(t, 0): the 0 takes the dimension of the others
            dim = next((t for (_, t), a in zip(args, e.args) if t.is_num and not _is_zero(a.value)), None)
            if dim is not None:
                args = [self._fit(n, t, a.value, dim) for (n, t), a in zip(args, e.args)]
        try:
            t = T.function(name, [t for _, t in args])
        except TypeRuleError as err:
            t = self._rule_error(err, tuple(a.value for a in e.args), e.span)
        return ir.Fn(name, tuple(n for n, _ in args), span=e.span, ty=t), t

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
        nodes = []
        for (node, t), p, want, a in zip(args, d.params, sig.param_tys, e.args):
            node, t = self._fit(node, t, a.value, want)
            if not T.accepts(want, t):
                self.sink.error(f"argument '{p.name}' of table '{d.name}' must be {want.describe()}, "
                                f"found {t.describe()}", a.span)
            nodes.append(node)
        return ir.Lookup(d.name, ch, tuple(nodes), span=e.span, ty=sig.ty), sig.ty

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
        size, t = self._fit(size, t, e.args[0].value, T.BYTES)
        if t not in (T.BYTES, ERR):
            self.sink.error(f"the size of a transmission must be a size (B), found {t.describe()}", e.args[0].span)
        return ir.Transmit(e.callee, ch, size, span=e.span, ty=T.TIME), T.TIME

    def _inline(self, e: A.Call, d, env):
        info = self.body_of(d.name)
        if info is None:
            self.sink.error(f"recursive call of '{d.name}' (definitions cannot recurse)", e.callee_span or e.span)
            return ir.Num(0.0), ERR
        if info.exploded:
            self._calls_exploded = True
            return ir.Num(0.0, span=e.span), ERR  # reported at its body: calls of it are not
        if e.channel is not None:
            self.sink.error(f"'{d.name}' takes no channel index", e.channel.span)
        params = d.params
        per_rank = next((p for p in params if p.per_rank is not None), None) if info.per_rank else None
        if per_rank is not None:
            p = per_rank
            self.sink.error(f"'{d.name}' takes a per-rank argument '{p.name}: {p.type.name}[{p.per_rank}]', so it "
                            f"cannot be called from an expression; evaluate it on its own", e.callee_span or e.span)
            return ir.Num(0.0), ERR
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
            value = a.value
            if type(value) is A.Name and value.id == key and env.get(key, (None,))[0] is LOCAL:
                # f(P) where P is the caller's own variable P: the binding is dropped below, so its
                # ir.Var is not built (lowering the name reports nothing)
                bound[key] = ((LOCAL, env[key][1]), a)
            else:
                bound[key] = (self.expr(value, env), a)
        bindings = []
        for p, (pname, ptype) in zip(params, info.params):
            if pname in bound:
                (node, t), a = bound[pname]
                node, t = self._fit(node, t, a.value, ptype)
                if not T.accepts(ptype, t):
                    self.sink.error(f"argument '{pname}' of '{d.name}' must be {ptype.describe()}, "
                                    f"found {t.describe()}", a.span)
                if node is LOCAL:
                    continue  # f(P) inside a scope where P is P: bindings are simultaneous, so drop it
                bindings.append((pname, node))
            elif pname in info.defaults:
                bindings.append((pname, info.defaults[pname]))  # closed: no caller name can leak in
            elif p.default is None:
                self.sink.error(f"missing argument '{pname}' in call of '{d.name}'", e.span)
                return ir.Num(0.0), ERR
        result = info.result or ERR
        if not bindings:
            return info.body, result
        return self._bounded(ir.Let(tuple(bindings), info.body, span=e.span, ty=result), result,
                             f"this call of '{d.name}'", e.span)

    # ================================================================= schedules
    def _node_of(self, e: A.Call, env):
        self._positional(e, "built-in function")
        if e.channel is not None:
            self.sink.error("'node' takes no channel index", e.channel.span)
        if len(e.args) != 1:
            self.sink.error(f"'node' takes 1 argument (a rank), got {len(e.args)}", e.span)
            return ir.Num(0.0), ERR
        rank = self._int_expr(e.args[0].value, env, "the rank of node(…)")
        return ir.NodeOf(rank, span=e.span, ty=T.INT), T.INT

    def _int_expr(self, sub: A.Expr, env, what: str):
        node, t = self.expr(sub, env)
        if t != T.INT and t != ERR:
            self.sink.error(f"{what} must be an integer (int), found {t.describe()}", sub.span)
        return node

    def _Stage(self, e: A.Stage, env):
        items = tuple(self._item(i, env) for i in e.items)
        return ir.Stage(items, span=e.span, ty=T.TIME), T.TIME

    def _Stages(self, e: A.Stages, env):
        lo, tl = self.expr(e.lo, env)
        hi, th = self.expr(e.hi, env)
        for t, sub in ((tl, e.lo), (th, e.hi)):
            self._rule(lambda: T.reduction_bound("stages", t), (sub,), sub.span)
        inner = dict(env)
        inner[e.var] = (LOCAL, T.INT)
        items = tuple(self._item(i, inner) for i in e.items)
        stage = ir.Stage(items, span=e.span, ty=T.TIME)
        return ir.Reduce("sum", e.var, lo, hi, stage, span=e.span, ty=T.TIME), T.TIME

    def _item(self, i: A.Item, env) -> ir.Expr:
        """The IR of a stage item (typed ``item``)."""
        if isinstance(i, A.LoopItem):
            lo, tl = self.expr(i.lo, env)
            hi, th = self.expr(i.hi, env)
            for t, sub in ((tl, i.lo), (th, i.hi)):
                self._rule(lambda: T.reduction_bound(i.kind, t), (sub,), sub.span)
            inner = dict(env)
            inner[i.var] = (LOCAL, T.INT)
            if i.where is not None:
                where, tw = self.expr(i.where, inner)
                if tw not in (T.BOOL, ERR):
                    self.sink.error(f"the 'where' of '{i.kind}' must be a condition (bool), found {tw.describe()}; "
                                    f"compare it, e.g. 'where p % 2 == 0'", i.where.span)
            else:
                where = ir.Num(1.0, ty=T.BOOL)
            body = self._item(i.body, inner)
            return ir.Loop(i.kind, i.var, lo, hi, where, body, span=i.span, ty=T.ITEM)
        if isinstance(i, A.SendItem):
            src = self._int_expr(i.src, env, "the source rank of a send")
            dst = self._int_expr(i.dst, env, "the destination rank of a send")
            size, t = self.expr(i.size, env)
            size, t = self._fit(size, t, i.size, T.BYTES)
            if t not in (T.BYTES, ERR):
                self.sink.error(f"the size of a send must be a size (B), found {t.describe()}", i.size.span)
            if i.weight is not None:
                weight, tw = self.expr(i.weight, env)
                if tw != ERR and not (tw.is_num and tw.dimensionless):
                    self.sink.error(f"the weight of a send must be a plain number (the transfers it counts "
                                    f"for), found {tw.describe()}", i.weight.span)
            else:
                weight = ir.Num(1.0, ty=T.INT)
            return ir.Send(src, dst, size, weight, span=i.span, ty=T.ITEM)
        if isinstance(i, A.ExchangeItem):
            return self._exchange(i, env)
        if isinstance(i, A.ComputeItem):
            rank = self._int_expr(i.rank, env, f"the rank of '{i.kind}'")
            if i.kind == "compute":
                cost, t = self.expr(i.amount, env)
                cost, t = self._fit(cost, t, i.amount, T.TIME)
                if t not in (T.TIME, ERR):
                    self.sink.error(f"the cost of 'compute' must be a time (s), found {t.describe()}", i.amount.span)
                return ir.Compute(rank, cost, span=i.span, ty=T.ITEM)
            size, t = self.expr(i.amount, env)
            size, t = self._fit(size, t, i.amount, T.BYTES)
            if t not in (T.BYTES, ERR):
                self.sink.error(f"the size of 'reduce' must be a size (B), found {t.describe()}", i.amount.span)
            cost = self._gamma(size, i.span, "'reduce'")
            return ir.Compute(rank, cost, span=i.span, ty=T.ITEM)
        if isinstance(i, A.BlockItem):
            return ir.Block(tuple(self._item(x, env) for x in i.items), span=i.span, ty=T.ITEM)
        raise TypeError(f"not a stage item: {i!r}")

    def _gamma(self, size: ir.Expr, span, what: str) -> ir.Expr:
        """γ(size), the platform's reduction cost, or 0 s after an error when it has none."""
        sig = self.tables.get(GAMMA)
        if sig is None or sig.channel_indexed or sig.tau_index is not None or sig.ty != T.TIME:
            self.sink.error(f"{what} needs the platform's reduction cost table "
                            f"'table {GAMMA}(m: bytes) -> time' (import a platform that declares it)", span)
            return ir.Num(0.0, ty=T.TIME)
        return ir.Lookup(GAMMA, None, (size,), span=span, ty=T.TIME)

    def _exchange(self, i: A.ExchangeItem, env) -> ir.Expr:
        """``exchange a <-> b : size [combine]`` lowered for the module's model.

        τ-Lop prices an MPI_Sendrecv between a pair as the reference library and the papers do:
        one transfer a → b counting twice in τ (``weight 2``), followed, with ``combine``, by one
        reduction γ(size) (the pair's two reductions run at the same time on two ranks).  A
        dataflow model (LogGP, pLogP) sees the two messages: ``par`` over the two directions,
        each a send and, with ``combine``, the receiver's reduction of what it received."""
        a = self._int_expr(i.a, env, "a rank of an exchange")
        b = self._int_expr(i.b, env, "a rank of an exchange")
        size, t = self.expr(i.size, env)
        size, t = self._fit(size, t, i.size, T.BYTES)
        if t not in (T.BYTES, ERR):
            self.sink.error(f"the size of an exchange must be a size (B), found {t.describe()}", i.size.span)
        gamma = self._gamma(size, i.span, "'exchange … combine'") if i.combine else None
        one = ir.Num(1.0, ty=T.INT)
        if self.model in ("taulop", ""):
            send = ir.Send(a, b, size, ir.Num(2.0, ty=T.INT), span=i.span, ty=T.ITEM)
            if gamma is None:
                return send
            return ir.Block((send, ir.Compute(a, gamma, span=i.span, ty=T.ITEM)), span=i.span, ty=T.ITEM)
        x = ir.Var(EXCHANGE_VAR, ty=T.INT)
        first = ir.Bin("==", x, ir.Num(0.0, ty=T.INT), ty=T.BOOL)
        src = ir.Cond(first, a, b, ty=T.INT)
        dst = ir.Cond(first, b, a, ty=T.INT)
        body = ir.Send(src, dst, size, one, span=i.span, ty=T.ITEM)
        if gamma is not None:
            body = ir.Block((body, ir.Compute(dst, gamma, span=i.span, ty=T.ITEM)), span=i.span, ty=T.ITEM)
        return ir.Loop("par", EXCHANGE_VAR, ir.Num(0.0, ty=T.INT), one, ir.Num(1.0, ty=T.BOOL), body,
                       span=i.span, ty=T.ITEM)

    # ================================================================= algorithms
    def algorithm(self, name: str) -> Optional[ir.Algorithm]:
        d = self.globals[name]
        info = self.body_of(name)
        params = []
        for p, (pname, ptype) in zip(d.params, info.params):
            default = info.defaults.get(pname)
            constraint = None
            if p.op is not None:
                bound, t = self.expr(p.bound, self._param_env(info))
                if not ptype.is_num and ptype != ERR:
                    self.sink.error(f"a constraint needs a numeric parameter; '{pname}' is {ptype.describe()}",
                                    p.constraint_span)
                elif ptype != ERR:
                    bound, t = self._fit(bound, t, p.bound, ptype)
                    if t != ERR and not t.same_dimension(ptype):
                        self.sink.error(f"cannot compare '{pname}' ({ptype.describe()}) with {t.describe()}",
                                        p.constraint_span)
                self._closed(bound, p.bound.span, "a constraint bound")
                constraint = (p.op, bound)
            elif ptype.is_num and not ptype.dimensionless:
                constraint = (">=", _zero(ptype, None))  # sizes, times and rates are never negative
            params.append(ir.ParamSig(pname, str(ptype), default, constraint, span=p.span,
                                      constraint_span=p.constraint_span,
                                      per_rank=self._per_rank(d, p, ptype, info)))
        doc = "\n".join(d.docs)
        if d.over is not None:
            if not any(pname == "P" and ptype == T.INT for pname, ptype in info.params):
                self.sink.error(f"algorithm '{name}' runs over a process mapping, so it needs the process "
                                f"count as its parameter 'P: int'", d.span)
        elif info.body is not None and self._has_schedule(info.body):
            self.sink.error(f"algorithm '{name}' has a schedule (stages, or node(…)), which needs a process "
                            f"mapping: declare it with 'over map: mapping' after the parameters", d.span)
        requires = None
        if d.requires is not None:
            requires, tr = self.expr(d.requires, self._param_env(info))
            if tr not in (T.BOOL, ERR):
                self.sink.error(f"the 'where' of an algorithm must be a condition (bool) on its parameters, found "
                                f"{tr.describe()}; compare it, e.g. 'where S <= m' or 'where P & (P - 1) == 0'",
                                d.requires.span)
            elif any(not isinstance(n, (ir.Var, ir.Num, ir.Bin, ir.Neg, ir.Not, ir.Fn, ir.Cond, ir.Let))
                     for n in ir.walk(requires)):
                self.sink.error("the 'where' of an algorithm is a condition on its arguments alone; it cannot read "
                                "the platform's tables, parameters or transmissions, or sum", d.requires.span)
        return ir.Algorithm(name, tuple(params), info.body, doc, self.model, span=d.span, over=d.over,
                            requires=requires, requires_span=d.requires.span if d.requires is not None else None)

    @staticmethod
    def _param_env(info):
        """The environment of a def's or algorithm's parameters, built once per declaration and
        shared by its body, defaults, constraints and ``where`` (environments are never
        changed in place: a binder extends a copy)."""
        if info.env is None:
            # per-rank parameters of an algorithm (a def's are refused at its declaration)
            per_rank = ({p.name for p in info.decl.params if p.per_rank is not None}
                        if info.per_rank and isinstance(info.decl, A.AlgorithmDecl) else ())
            info.env = {n: ((_PerRank(n) if n in per_rank else LOCAL), t) for n, t in info.params}
        return info.env

    def _per_rank(self, d, p, ptype, info) -> Optional[str]:
        """The process-count parameter of ``p`` when it is declared per rank (``counts: bytes[P]``),
        after checking it: a number type, and ``P`` an int parameter of the same algorithm."""
        if p.per_rank is None:
            return None
        types = dict(info.params)
        if ptype != ERR and (not ptype.is_num or ptype == T.CHANNEL):
            self.sink.error(f"a per-rank parameter takes numbers (bytes, time, int …); '{p.name}' is "
                            f"{ptype.describe()}", p.type.span)
        ranks = types.get(p.per_rank)
        if ranks != T.INT or any(q.name == p.per_rank and q.per_rank is not None for q in d.params):
            self.sink.error(f"per-rank parameter '{p.name}: {p.type.name}[{p.per_rank}]': '{p.per_rank}' must be an int "
                            f"parameter of '{d.name}' (the number of processes)", p.per_rank_span or p.span)
        return p.per_rank

    def _closed(self, node, span, what):
        if type(node) is ir.Num:  # most defaults and bounds: a constant
            return
        free = ir.free_vars(node)
        if free:
            self.sink.error(f"{what} must be a constant; it uses the parameter{'s' if len(free) > 1 else ''} "
                            f"{', '.join(sorted(free))}", span)


#: AST expression class -> the _Elaborator method that lowers it (``_Number`` for ``A.Number`` …)
_EXPR_RULES: dict = {}
#: the binary operators whose operands have one dimension (a plain ``0`` fits either side)
_SAME_DIMENSION_OPS = frozenset(("+", "-", "%") + ir.COMPARE_OPS)
#: the typing rule of each binary operator other than the arithmetic ones (:func:`T.arith`)
_BINARY_RULES = {**{op: T.logic for op in ir.LOGIC_OPS}, **{op: T.integer_op for op in ir.INT_OPS},
                 **{op: T.compare for op in ir.COMPARE_OPS}}


def _constant(e: A.Expr):
    """The value of a constant exponent written in the source (a plain number, possibly
    negated), else None."""
    sign = 1
    while isinstance(e, A.Unary) and e.op == "-":
        sign, e = -sign, e.operand
    if isinstance(e, A.Number) and e.unit == "":
        from fractions import Fraction
        return sign * Fraction(e.value)
    return None


def _xmit_sequence(node: ir.Expr):
    """A cost expression as a tuple of Xmit items, if it is a sequence of (A ‖) transmissions."""
    if isinstance(node, ir.Transmit):
        return (ir.Xmit(ir.Num(1.0, ty=T.INT), node.name, node.channel, node.size, span=node.span, ty=T.TIME),)
    if isinstance(node, ir.Conc):
        inner = _xmit_sequence(node.body)
        if inner is None:
            return None
        return tuple(ir.Xmit(_mul(node.factor, x.count), x.name, x.channel, x.size, span=x.span, ty=T.TIME)
                     for x in inner)
    if isinstance(node, ir.Bin) and node.op == "+":
        a, b = _xmit_sequence(node.lhs), _xmit_sequence(node.rhs)
        if a is None or b is None:
            return None
        return a + b
    return None


def _mul(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if isinstance(b, ir.Num) and b.value == 1.0:
        return a
    return ir.Bin("*", a, b, ty=a.ty * b.ty)


def _edit_keys(name: str) -> set:
    """The keys under which the "did you mean" index files a name: its lower case and its
    one-character deletions (names at most one edit apart, or equal ignoring case, share one)."""
    low = name.lower()
    return {low} | {low[:i] + low[i + 1:] for i in range(len(low))}


#: the language's 'did you mean' test (one edit apart, or equal ignoring case): the command line's too
_close = close


@dataclass
class _Root:
    body: ir.Expr
    span: Optional[Span]


def elaborate_expression(modules: list[LoadedModule], expr: A.Expr, var_types: dict):
    """(IR, type) of a lone expression in the scope of a loaded module tree, with the free
    variables ``var_types`` (name -> type spelling such as ``int`` or ``time/bytes``); the type
    is returned as its spelling.  Raises TlopError with every error."""
    el = _Elaborator(modules)
    el.collect()
    transmissions = el.transmission_variants()
    env = {}
    for n, spelling in var_types.items():
        t = T.parse_type(spelling)
        if t is None:
            el.sink.error(f"unknown type '{spelling}' of '{n}'", expr.span)
            t = ERR
        env[n] = (LOCAL, t)
    node, t = el.expr(expr, env)
    node, t = el._bounded(node, t, "the expression", expr.span)
    if not el.sink.has_errors:
        check_transmission_expansion(transmissions, {"the expression": _Root(node, expr.span)}, el.sink)
    el.sink.raise_if_errors()
    return node, str(t)


def elaborate(modules: list[LoadedModule]) -> Elaborated:
    """Check and lower a loaded module tree (root last).  Raises TlopError with every error."""
    el = _Elaborator(modules)
    el.collect()
    transmissions = el.transmission_variants()
    check_transmission_cycles(tuple(el.channels), transmissions, el.sink)
    algorithms = {}
    root = modules[-1]
    root_names = tuple(d.name for d in root.module.decls if isinstance(d, A.AlgorithmDecl))
    for name, d in el.globals.items():
        if isinstance(d, A.DefDecl):
            el.body_of(name)
    in_root = set(root_names)
    ordered = list(root_names) + [n for n, d in el.globals.items()
                                  if isinstance(d, A.AlgorithmDecl) and n not in in_root]
    for name in ordered:
        if isinstance(el.globals.get(name), A.AlgorithmDecl):
            algorithms[name] = el.algorithm(name)
    if not el.sink.has_errors:
        check_transmission_expansion(transmissions, algorithms, el.sink, unweighted=el.sizes)
    el.sink.raise_if_errors()
    program = ir.Program(tuple(el.channels), dict(el.tables), dict(el.scalars), transmissions, algorithms,
                         el.model, dict(el.channel_info))
    return Elaborated(program, root_names, dict(el.globals), tuple(modules))
