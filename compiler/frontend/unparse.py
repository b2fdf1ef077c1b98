"""AST → ``.tlop`` source text (the formatter).

What it does: prints a module with one declaration per line group, doc comments kept, and the
fewest parentheses that re-parse to the same tree (precedence and associativity of the grammar).
``parse(unparse(m)) == m`` holds for every module (spans aside); the tests check it on the stdlib
and on generated programs (tests/test_unparse_roundtrip.py).

What it does not do: keep ``#`` comments or the original layout.
"""

from __future__ import annotations

from tlop.frontend import ast as A

__all__ = ["unparse", "unparse_expr"]

# binding strength of each binary operator (higher binds tighter), from the grammar
_PREC = {"or": 1, "and": 2, "<": 4, "<=": 4, ">": 4, ">=": 4, "==": 4, "!=": 4,
         "xor": 5, "&": 6, "<<": 7, ">>": 7,
         "+": 8, "-": 8, "||": 9, "*": 10, "/": 10, "%": 10, "div": 10, "^": 12}
_NOT, _NEG, _POSTFIX, _BINDER = 3, 11, 13, 0
_ADDITIVE = 8


def _num(n: A.Number) -> str:
    v = n.value
    text = str(int(v)) if float(v).is_integer() and abs(v) < 1e16 else repr(float(v))
    return text + n.unit


def _prec(e: A.Expr) -> int:
    if isinstance(e, A.Binary):
        return _PREC[e.op]
    if isinstance(e, A.Unary):
        return _NOT if e.op == "not" else _NEG
    if isinstance(e, (A.LetIn, A.IfThen, A.Reduction)):
        return _BINDER
    return _POSTFIX


def unparse_expr(e: A.Expr, ctx: int = 0) -> str:
    """Source text of ``e``, parenthesised if its precedence is below ``ctx``."""
    text = _expr(e)
    return f"({text})" if _prec(e) < ctx else text


def _expr(e: A.Expr) -> str:
    if isinstance(e, A.Number):
        return _num(e)
    if isinstance(e, A.Name):
        return e.id
    if isinstance(e, A.Indexed):
        return f"{e.id}[{unparse_expr(e.channel)}]"
    if isinstance(e, A.ConfigAccess):
        return f"{e.config}.{e.field}" + (f"[{unparse_expr(e.index)}]" if e.index is not None else "")
    if isinstance(e, A.Call):
        args = ", ".join((f"{a.name} = " if a.name else "") + unparse_expr(a.value) for a in e.args)
        ch = f"[{unparse_expr(e.channel)}]" if e.channel is not None else ""
        return f"{e.callee}{ch}({args})"
    if isinstance(e, A.Unary):
        if e.op == "not":
            return "not " + unparse_expr(e.operand, _NOT)
        return "-" + unparse_expr(e.operand, _NEG)
    if isinstance(e, A.Binary):
        p = _PREC[e.op]
        if e.op == "^":  # right-associative, and its exponent is a unary
            return f"{unparse_expr(e.lhs, _POSTFIX)} ^ {unparse_expr(e.rhs, _NEG)}"
        if p == 4:  # comparisons do not chain
            return f"{unparse_expr(e.lhs, p + 1)} {e.op} {unparse_expr(e.rhs, p + 1)}"
        return f"{unparse_expr(e.lhs, p)} {e.op} {unparse_expr(e.rhs, p + 1)}"
    if isinstance(e, A.LetIn):
        return f"let {e.name} = {unparse_expr(e.value)} in {unparse_expr(e.body)}"
    if isinstance(e, A.IfThen):
        return f"if {unparse_expr(e.test)} then {unparse_expr(e.then)} else {unparse_expr(e.otherwise)}"
    if isinstance(e, A.Reduction):
        return f"{e.kind} {e.var} in {unparse_expr(e.lo)} .. {unparse_expr(e.hi)}: {unparse_expr(e.body)}"
    if isinstance(e, A.Stage):
        return "stage " + _block(e.items)
    if isinstance(e, A.Stages):
        return f"stages {e.var} in {unparse_expr(e.lo)} .. {unparse_expr(e.hi)} " + _block(e.items)
    raise TypeError(f"not an expression: {e!r}")


def _block(items) -> str:
    return "{ " + " ".join(_item(i) for i in items) + (" }" if items else "}")


def _item(i: A.Item) -> str:
    """Source text of a stage item (items need no parentheses: each starts with a keyword)."""
    if isinstance(i, A.LoopItem):
        where = f" where {unparse_expr(i.where)}" if i.where is not None else ""
        return f"{i.kind} {i.var} in {unparse_expr(i.lo)} .. {unparse_expr(i.hi)}{where}: {_item(i.body)}"
    if isinstance(i, A.SendItem):
        # a binder (let/if/sum) as the size would swallow 'weight': parenthesise it then
        size = unparse_expr(i.size, _POSTFIX if i.weight is not None and _prec(i.size) == _BINDER else 0)
        weight = f" weight {unparse_expr(i.weight)}" if i.weight is not None else ""
        return f"send {unparse_expr(i.src)} -> {unparse_expr(i.dst)} : {size}{weight}"
    if isinstance(i, A.ExchangeItem):
        size = unparse_expr(i.size, _POSTFIX if i.combine and _prec(i.size) == _BINDER else 0)
        return f"exchange {unparse_expr(i.a)} <-> {unparse_expr(i.b)} : {size}" + (" combine" if i.combine else "")
    if isinstance(i, A.ComputeItem):
        return f"{i.kind} {unparse_expr(i.rank)} : {unparse_expr(i.amount)}"
    if isinstance(i, A.BlockItem):
        return _block(i.items)
    raise TypeError(f"not a stage item: {i!r}")


def _param(p: A.Param) -> str:
    out = f"{p.name}: {p.type.name}" + (f"[{p.per_rank}]" if p.per_rank is not None else "")
    if p.op is not None:
        out += f" {p.op} {unparse_expr(p.bound, _ADDITIVE)}"
    if p.default is not None:
        out += f" = {unparse_expr(p.default)}"
    return out


def _decl(d: A.Decl) -> str:
    if isinstance(d, A.ModelDecl):
        return f"model {d.name}"
    if isinstance(d, A.ImportDecl):
        return 'import "' + d.path.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(d, A.ChannelDecl):
        placement = {"within": " within node", "between": " between nodes"}.get(d.placement, "")
        contention = f" contention {d.contention}" if d.contention else ""
        return f"channel {d.name}{placement}{contention}"
    if isinstance(d, A.ConfigDecl):
        fields = ", ".join(f"{f.name}: {f.type.name}" + ("[P]" if f.per_rank else "") for f in d.fields)
        return f"config {d.name} {{ {fields} }}"
    ch = ""
    if isinstance(d, (A.TableDecl, A.ParamDecl)) and d.channel is not None:
        ch = f"[{d.channel.name}: {d.channel.type.name}]"
    if isinstance(d, A.TableDecl):
        return f"table {d.name}{ch}({', '.join(_param(p) for p in d.params)}) -> {d.result.name}"
    if isinstance(d, A.ParamDecl):
        return f"param {d.name}{ch}: {d.type.name}"
    if isinstance(d, A.TransmissionDecl):
        via = f" via {d.via}" if d.via else ""
        return f"transmission {d.name}[{d.channel}]({d.param}){via} =\n    {unparse_expr(d.body)}"
    if isinstance(d, (A.DefDecl, A.AlgorithmDecl)):
        kw = "def" if isinstance(d, A.DefDecl) else "algorithm"
        res = f" -> {d.result.name}" if d.result is not None else ""
        over = ""
        if isinstance(d, A.AlgorithmDecl) and d.over is not None:
            over = " over mapping" if d.over == "mapping" else f" over {d.over}: mapping"
        if isinstance(d, A.AlgorithmDecl) and d.requires is not None:
            over += f" where {unparse_expr(d.requires)}"
        return f"{kw} {d.name}({', '.join(_param(p) for p in d.params)}){res}{over} =\n    {unparse_expr(d.body)}"
    raise TypeError(f"not a declaration: {d!r}")


def unparse(m: A.Module) -> str:
    """The source text of a module."""
    parts = []
    for d in m.decls:
        docs = "".join(f"/// {line}\n" for line in d.docs)
        parts.append(docs + _decl(d))
    return "\n\n".join(parts) + "\n"
