"""Elaboration, part 2: expressions — numbers with units, names, configuration access, table
lookups, operators with their typing and dimension rules, ``let``/``if``, reductions, calls
(builtins, transmissions, inlined definitions).

What it does not do: stages and their items (:mod:`.schedules`), or the global scope
(:mod:`.declarations`).
"""

from __future__ import annotations

import math

from tlop.frontend import ast as A
from tlop import ir
from tlop.ir import types as T
from tlop.ir.types import TypeRuleError
from tlop.runtime.units import SIZE_UNITS, TIME_UNITS, unit_factor, unit_kind

from tlop.frontend.elaborate.common import (ERR, LOCAL, _PerRank, _is_zero, _close, _constant, _xmit_sequence,
    _edit_keys, _EXPR_RULES, _SAME_DIMENSION_OPS, _BINARY_RULES)


class Expressions:
    """The part of the elaborator that lowers expressions."""

    # ================================================================= expressions
    def expr(self, e: A.Expr, env: dict):
        """(IR, type) of an expression in a local environment name -> (IR, type)."""
        rule = _EXPR_RULES.get(type(e))
        if rule is None:  # the method named after the AST class, looked up once per class
            rule = _EXPR_RULES[type(e)] = getattr(type(self), "_" + type(e).__name__)
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
