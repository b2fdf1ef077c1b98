"""Elaboration, part 1: the global scope — declarations collected, types of parameters, tables,
definitions lowered once (``body_of``), transmissions, and algorithms with their parameters and
closed defaults.

What it does not do: lower expressions or stages (:mod:`.expressions`,
:mod:`.schedules`); it calls them through ``self``.
"""

from __future__ import annotations

from typing import Optional

from tlop.frontend import ast as A
from tlop import ir
from tlop.ir import types as T
from tlop.ir.types import Type
from tlop.runtime.diagnostics import DiagnosticSink
from tlop.frontend.loader import LoadedModule
from tlop.frontend.expansion import MAX_EXPANDED_NODES, TreeSizes, culprit, too_big_message

from tlop.frontend.elaborate.common import ERR, LOCAL, TYPES, _DefInfo, _PerRank, _is_zero, _zero


class Declarations:
    """The part of the elaborator that owns the global scope (its state is set in ``__init__``)."""

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
