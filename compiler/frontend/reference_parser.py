"""The parser: source text → AST with spans, with the Python ANTLR runtime.

What it does: runs the ANTLR-generated lexer and parser (``tlop._antlr``) with ANTLR's console
listeners removed, collects every syntax error as a :class:`~tlop.runtime.diagnostics.Diagnostic` with a
span (a missing closing bracket at the bracket left open, not where the parser noticed it), and builds :mod:`tlop.ast` nodes from the parse tree.  Number literals are split into value
and unit here (an unknown unit is reported later by the checker, which knows the context).
:mod:`tlop.frontend.parse` imports this module (and ANTLR) only when a source is parsed, not when
the checked-IR cache answers.

What it does not do: resolve imports or names, or check types.
"""

from __future__ import annotations

import re

from antlr4 import CommonTokenStream, InputStream, Token
from antlr4.error.ErrorListener import ErrorListener
from antlr4.error.ErrorStrategy import BailErrorStrategy, DefaultErrorStrategy  # noqa: F401

from tlop.frontend import ast as A
from tlop.runtime.diagnostics import DiagnosticSink, Source, Span, TlopError  # noqa: F401
from tlop.frontend.limits import MAX_CHAIN_TERMS, MAX_NESTING, deep
from tlop.ir.taulop.contention import CONTENTION_KEYS
from tlop._antlr.TlopLexer import TlopLexer
from tlop._antlr.TlopParser import TlopParser
from tlop._antlr.TlopVisitor import TlopVisitor

__all__ = ["parse_source", "parse_reference", "parse_text"]


class _Collect(ErrorListener):
    """Turns ANTLR syntax errors into diagnostics instead of printing them."""

    def __init__(self, source: Source, sink: DiagnosticSink):
        self.source = source
        self.sink = sink
        self._muted_line = None  # after a reserved word: the rest of its line is recovery noise

    def syntaxError(self, recognizer, offendingSymbol, line, column, msg, e):  # noqa: N802 (ANTLR API)
        width = 1
        text = None
        if offendingSymbol is not None and getattr(offendingSymbol, "text", None) not in (None, "<EOF>"):
            text = offendingSymbol.text
            width = max(1, len(text))
        span = Span(self.source, line, column + 1, line, column + width)
        if text in RESERVED and _expects_name(recognizer):
            self.sink.error(f"'{text}' is a reserved word; choose another name", span)
            self._muted_line = line
            return
        if line == self._muted_line:
            return
        prev = _previous_token(recognizer, offendingSymbol)
        if text == "(" and prev is not None and prev.text in _SCHEDULE_WORDS:
            # 'stage(P)': a reserved word called as a function
            self.sink.error(f"'{prev.text}' is a reserved word (it starts a schedule: {_SCHEDULE_WORDS[prev.text]}); "
                            f"a function or algorithm cannot be named '{prev.text}'",
                            Span(self.source, prev.line, prev.column + 1, prev.line, prev.column + len(prev.text)))
            self._muted_line = line
            return
        missing = re.match(r"missing '([)\]}])' at ", msg) or re.search(r"expecting '([)\]}])'$", msg)
        opener = _unclosed(recognizer, offendingSymbol, missing.group(1)) if missing else None
        if opener is not None:
            where = "the end of the file" if text is None else f"'{text}' at {line}:{column + 1}"
            self.sink.error(f"missing '{missing.group(1)}' to close this '{opener.text}' (the parser noticed at "
                            f"{where})",
                            Span(self.source, opener.line, opener.column + 1, opener.line, opener.column + 1))
            return
        self.sink.error(_friendly(msg, text), span)


_OPENERS = {")": "(", "]": "[", "}": "{"}


def _unclosed(recognizer, token, closer: str):
    """The opening bracket for ``closer`` that is still open before ``token`` (the innermost,
    scanning back over balanced pairs), or None."""
    try:
        stream = recognizer.getInputStream()
        i = token.tokenIndex - 1
    except Exception:  # the lexer, or no stream: no opinion
        return None
    opener = _OPENERS[closer]
    depth = 0
    while i >= 0:
        t = stream.get(i)
        if t.text == closer:
            depth += 1
        elif t.text == opener:
            if depth == 0:
                return t
            depth -= 1
        i -= 1
    return None


#: words of the language that cannot be names (the grammar's keywords that look like names)
RESERVED = frozenset({
    "model", "import", "channel", "table", "param", "transmission", "via", "def", "algorithm", "let", "in",
    "if", "then", "else", "sum", "max", "min", "or", "and", "not", "stages", "stage", "par", "seq", "send",
    "compute", "reduce", "config", "over", "exchange", "where", "div", "xor", "int", "real", "bytes", "time", "cost",
    "bool"} - {"max", "min", "int", "real", "bytes", "time", "cost", "bool"})


#: schedule words that start a construct, and how it is written
_SCHEDULE_WORDS = {"stage": "'stage { … }'", "stages": "'stages k in lo .. hi { … }'",
                   "par": "'par p in lo .. hi: …'", "seq": "'seq p in lo .. hi: …'",
                   "send": "'send src -> dst : size'", "compute": "'compute rank : time'",
                   "exchange": "'exchange a <-> b : size'",
                   "reduce": "'reduce rank : size'"}


def _previous_token(recognizer, token):
    """The token before ``token`` in the parser's stream (None when there is none)."""
    try:
        i = token.tokenIndex
        return recognizer.getInputStream().get(i - 1) if i > 0 else None
    except Exception:  # the lexer, or no stream: no opinion
        return None


def _expects_name(recognizer) -> bool:
    """Whether the parser, where it failed, would have accepted a name (ID)."""
    try:
        return TlopParser.ID in recognizer.getExpectedTokens()
    except Exception:  # the lexer, or no state to ask: no opinion
        return False


def _friendly(msg: str, text) -> str:
    """ANTLR's messages, reworded: token names become what a user typed."""
    msg = msg.replace("<EOF>", "end of file").replace("'\\n'", "end of line")
    if msg.startswith("token recognition error"):
        return f"unexpected character {msg.split('at:', 1)[-1].strip()}"
    if text is not None and msg.startswith("extraneous input"):
        return msg.replace("extraneous input", "unexpected", 1)
    if msg.startswith("mismatched input"):
        return msg.replace("mismatched input", "unexpected", 1)
    if msg.startswith("no viable alternative at input"):
        return f"syntax error near {msg.split('input', 1)[1].strip()}"
    return msg


def _span(source: Source, ctx) -> Span:
    start, stop = ctx.start, ctx.stop
    if stop is None or stop.tokenIndex < start.tokenIndex:
        stop = start
    end_col = stop.column + max(1, len(stop.text or ""))
    return Span(source, start.line, start.column + 1, stop.line, end_col)


def _tok_span(source: Source, tok) -> Span:
    return Span(source, tok.line, tok.column + 1, tok.line, tok.column + max(1, len(tok.text or "")))


def _split_number(text: str):
    i = len(text)
    while i > 0 and (text[i - 1].isalpha() or text[i - 1] == "µ"):
        i -= 1
    # an exponent marker is part of the number, not of the unit: 1e6B → 1e6 + B
    num, unit = text[:i], text[i:]
    return float(num), unit


#: the soft words of a channel declaration: ``within node`` / ``between nodes``; the contention
#: keys after ``contention`` are the names of the one table (:data:`tlop.ir.taulop.contention.KEYS`,
#: imported without numpy)
CHANNEL_PLACEMENTS = {"within": "node", "between": "nodes"}


class _Builder(TlopVisitor):
    """Parse tree → AST.  One method per labelled alternative."""

    def __init__(self, source: Source, sink: DiagnosticSink = None):
        self.source = source
        self.sink = sink if sink is not None else DiagnosticSink()

    def sp(self, ctx):
        return _span(self.source, ctx)

    # ---------------------------------------------------------------- declarations
    def visitProgram(self, ctx):
        decls = tuple(self.visit(d) for d in ctx.decl())
        return A.Module(tuple(d for d in decls if d is not None), span=self.sp(ctx))

    def visitDecl(self, ctx):
        docs = tuple(t.text[3:].strip() for t in ctx.docs)
        node = self.visit(ctx.body)
        if node is None:
            return None
        return type(node)(**{**{f: getattr(node, f) for f in node.__dataclass_fields__}, "docs": docs})

    def visitModelDecl(self, ctx):
        return A.ModelDecl(ctx.name.text, span=self.sp(ctx))

    def visitImportDecl(self, ctx):
        return A.ImportDecl(_unquote(ctx.path.text), span=self.sp(ctx))

    def visitChannelDecl(self, ctx):
        words = list(ctx.attrs)
        placement = contention = None
        i = 0
        while i < len(words):
            w = words[i]
            nxt = words[i + 1] if i + 1 < len(words) else None
            where = _tok_span(self.source, w)
            if w.text in CHANNEL_PLACEMENTS and placement is None:
                if nxt is None or nxt.text != CHANNEL_PLACEMENTS[w.text]:
                    self.sink.error(f"expected '{w.text} {CHANNEL_PLACEMENTS[w.text]}'", where)
                    return A.ChannelDecl(ctx.name.text, span=self.sp(ctx))
                placement = w.text
                i += 2
            elif w.text == "contention" and contention is None:
                if nxt is None or nxt.text not in CONTENTION_KEYS:
                    self.sink.error("'contention' takes one of " + ", ".join(CONTENTION_KEYS),
                                    _tok_span(self.source, nxt) if nxt is not None else where)
                    return A.ChannelDecl(ctx.name.text, span=self.sp(ctx))
                contention = nxt.text
                i += 2
            else:
                self.sink.error(f"unexpected '{w.text}' in a channel declaration; write "
                                f"'channel NAME [within node | between nodes] [contention KEY]'", where)
                return A.ChannelDecl(ctx.name.text, span=self.sp(ctx))
        return A.ChannelDecl(ctx.name.text, placement=placement, contention=contention, span=self.sp(ctx))

    def _channel_param(self, ctx):
        if ctx is None:
            return None
        return A.Param(ctx.name.text, self.visit(ctx.type_), span=self.sp(ctx))

    def visitTableDecl(self, ctx):
        params = self.visit(ctx.paramList()) if ctx.paramList() else ()
        return A.TableDecl(ctx.name.text, self._channel_param(ctx.channelParam()), params,
                           self.visit(ctx.result), span=self.sp(ctx))

    def visitParamDecl(self, ctx):
        return A.ParamDecl(ctx.name.text, self._channel_param(ctx.channelParam()), self.visit(ctx.type_),
                           span=self.sp(ctx))

    def visitTransmissionDecl(self, ctx):
        return A.TransmissionDecl(ctx.name.text, ctx.channel.text, ctx.size.text,
                                  ctx.via.text if ctx.via else None, self.visit(ctx.body),
                                  span=self.sp(ctx), channel_span=_tok_span(self.source, ctx.channel))

    def visitDefDecl(self, ctx):
        params = self.visit(ctx.paramList()) if ctx.paramList() else ()
        return A.DefDecl(ctx.name.text, params, self.visit(ctx.result) if ctx.result else None,
                         self.visit(ctx.body), span=self.sp(ctx))

    def visitAlgorithmDecl(self, ctx):
        params = self.visit(ctx.paramList()) if ctx.paramList() else ()
        over = None
        if ctx.over is not None:
            o = ctx.over
            if o.kind.text != "mapping":
                self.sink.error(f"expected 'mapping' after 'over', found '{o.kind.text}' "
                                f"(write 'over map: mapping' or 'over mapping')", _tok_span(self.source, o.kind))
            over = o.name.text if o.name is not None else "mapping"
        return A.AlgorithmDecl(ctx.name.text, params, self.visit(ctx.result) if ctx.result else None,
                               self.visit(ctx.body), over=over, span=self.sp(ctx),
                               requires=self.visit(ctx.requires) if ctx.requires is not None else None)

    def visitConfigDecl(self, ctx):
        fields = []
        for f in ctx.fields:
            if f.ranks is not None and f.ranks.text != "P":
                self.sink.error(f"a per-process field is written '{f.name.text}: int[P]' (P processes), "
                                f"not [{f.ranks.text}]", _tok_span(self.source, f.ranks))
            fields.append(A.ConfigField(f.name.text, self.visit(f.type_), f.perRank is not None, span=self.sp(f)))
        return A.ConfigDecl(ctx.name.text, tuple(fields), span=self.sp(ctx))

    def visitParamList(self, ctx):
        return tuple(self.visit(p) for p in ctx.param())

    def visitParam(self, ctx):
        op = ctx.op.getText() if ctx.op else None
        bound = self.visit(ctx.bound) if ctx.bound else None
        cspan = _span(self.source, ctx.op).to(self.sp(ctx.bound)) if ctx.op else None
        return A.Param(ctx.name.text, self.visit(ctx.type_), op, bound,
                       self.visit(ctx.default) if ctx.default else None,
                       span=self.sp(ctx), constraint_span=cspan,
                       per_rank=ctx.ranks.text if ctx.perRank else None,
                       per_rank_span=_tok_span(self.source, ctx.ranks) if ctx.perRank else None)

    def visitTypeRef(self, ctx):
        # the type's spelling without blanks: "time/bytes", "bytes^-2" (checked by the elaborator)
        text = self._type_factor(ctx.factors[0])
        for op, factor in zip(ctx.ops, ctx.factors[1:]):
            text += op.text + self._type_factor(factor)
        return A.TypeRef(text, span=self.sp(ctx))

    @staticmethod
    def _type_factor(ctx):
        text = ctx.name.text
        if ctx.exponent is not None:
            text += "^" + ("-" if ctx.neg else "") + ctx.exponent.text
        return text

    # ---------------------------------------------------------------- expressions
    def visitLetExpr(self, ctx):
        return A.LetIn(ctx.name.text, self.visit(ctx.value), self.visit(ctx.body), span=self.sp(ctx),
                       name_span=_tok_span(self.source, ctx.name))

    def visitIfExpr(self, ctx):
        return A.IfThen(self.visit(ctx.test), self.visit(ctx.then), self.visit(ctx.otherwise),
                        span=self.sp(ctx))

    def visitReduceExpr(self, ctx):
        return A.Reduction(ctx.kind.text, ctx.var.text, self.visit(ctx.lo), self.visit(ctx.hi),
                           self.visit(ctx.body), span=self.sp(ctx),
                           var_span=_tok_span(self.source, ctx.var))

    def visitPlainExpr(self, ctx):
        return self.visit(ctx.orExpr())

    def _chain(self, ctx, parts, ops):
        """Left-associative chain ``parts[0] ops[0] parts[1] …``; at most ``MAX_CHAIN_TERMS``
        operands (the error points at the first operator past the limit)."""
        if len(ops) >= MAX_CHAIN_TERMS:
            shown = "/".join(dict.fromkeys(f"'{t.text}'" for t in ops))
            raise TlopError(f"{len(ops) + 1:,} terms joined by {shown} in one expression; at most "
                            f"{MAX_CHAIN_TERMS:,} (split it into defs, or write it as a sum)",
                            _tok_span(self.source, ops[MAX_CHAIN_TERMS - 1]))
        out = self.visit(parts[0])
        for op_tok, rhs_ctx in zip(ops, parts[1:]):
            rhs = self.visit(rhs_ctx)
            out = A.Binary(op_tok.text, out, rhs, span=out.span.to(rhs.span),
                           op_span=_tok_span(self.source, op_tok))
        return out

    def _op_tokens(self, ctx, texts):
        return [c.symbol for c in ctx.getChildren()
                if hasattr(c, "symbol") and c.symbol.text in texts]

    def visitOrExpr(self, ctx):
        return self._chain(ctx, ctx.andExpr(), self._op_tokens(ctx, ("or",)))

    def visitAndExpr(self, ctx):
        return self._chain(ctx, ctx.notExpr(), self._op_tokens(ctx, ("and",)))

    def visitNotOp(self, ctx):
        return A.Unary("not", self.visit(ctx.notExpr()), span=self.sp(ctx))

    def visitNotPass(self, ctx):
        return self.visit(ctx.comparison())

    def visitComparison(self, ctx):
        parts = ctx.bitXor()
        if len(parts) == 1:
            return self.visit(parts[0])
        lhs, rhs = self.visit(parts[0]), self.visit(parts[1])
        op = ctx.compareOp()
        return A.Binary(op.getText(), lhs, rhs, span=lhs.span.to(rhs.span), op_span=self.sp(op))

    def visitBitXor(self, ctx):
        return self._chain(ctx, ctx.bitAnd(), self._op_tokens(ctx, ("xor",)))

    def visitBitAnd(self, ctx):
        return self._chain(ctx, ctx.shift(), self._op_tokens(ctx, ("&",)))

    def visitShift(self, ctx):
        return self._chain(ctx, ctx.additive(), ctx.ops)

    def visitAdditive(self, ctx):
        return self._chain(ctx, ctx.concurrent(), ctx.ops)

    def visitConcurrent(self, ctx):
        return self._chain(ctx, ctx.multiplicative(), self._op_tokens(ctx, ("||",)))

    def visitMultiplicative(self, ctx):
        return self._chain(ctx, ctx.unary(), ctx.ops)

    def visitNegate(self, ctx):
        return A.Unary("-", self.visit(ctx.unary()), span=self.sp(ctx))

    def visitUnaryPass(self, ctx):
        return self.visit(ctx.power())

    def visitPower(self, ctx):
        base = self.visit(ctx.base)
        if ctx.exponent is None:
            return base
        exp = self.visit(ctx.exponent)
        op_tok = self._op_tokens(ctx, ("^",))[0]
        return A.Binary("^", base, exp, span=base.span.to(exp.span), op_span=_tok_span(self.source, op_tok))

    def visitCall(self, ctx):
        args = self.visit(ctx.args) if ctx.args else ()
        return A.Call(ctx.callee.getText(), self.visit(ctx.channel) if ctx.channel else None, args,
                      span=self.sp(ctx), callee_span=self.sp(ctx.callee))

    def visitIndexedName(self, ctx):
        return A.Indexed(ctx.name.text, self.visit(ctx.channel), span=self.sp(ctx))

    def visitConfigAccess(self, ctx):
        return A.ConfigAccess(ctx.config.text, ctx.field.text, self.visit(ctx.index) if ctx.index else None,
                              span=self.sp(ctx))

    def visitAtomPass(self, ctx):
        return self.visit(ctx.atom())

    def visitArgList(self, ctx):
        return tuple(self.visit(a) for a in ctx.arg())

    def visitArg(self, ctx):
        return A.Arg(ctx.name.text if ctx.name else None, self.visit(ctx.value), span=self.sp(ctx))

    def visitNumber(self, ctx):
        value, unit = _split_number(ctx.getText())
        return A.Number(value, unit, span=self.sp(ctx))

    def visitName(self, ctx):
        return A.Name(ctx.getText(), span=self.sp(ctx))

    def visitParen(self, ctx):
        inner = self.visit(ctx.inner)
        return inner

    # ---------------------------------------------------------------- schedules
    def visitStageAtom(self, ctx):
        return A.Stage(tuple(self.visit(i) for i in ctx.items), span=self.sp(ctx))

    def visitStagesAtom(self, ctx):
        return A.Stages(ctx.var.text, self.visit(ctx.lo), self.visit(ctx.hi),
                        tuple(self.visit(i) for i in ctx.items), span=self.sp(ctx),
                        var_span=_tok_span(self.source, ctx.var))

    def _loop(self, kind, ctx):
        return A.LoopItem(kind, ctx.var.text, self.visit(ctx.lo), self.visit(ctx.hi),
                          self.visit(ctx.cond) if ctx.cond is not None else None, self.visit(ctx.body),
                          span=self.sp(ctx), var_span=_tok_span(self.source, ctx.var))

    def visitParItem(self, ctx):
        return self._loop("par", ctx)

    def visitSeqItem(self, ctx):
        return self._loop("seq", ctx)

    def visitSendItem(self, ctx):
        weight = None
        if ctx.kw is not None:
            if ctx.kw.text != "weight":
                self.sink.error(f"unexpected '{ctx.kw.text}' after the size of a send; "
                                f"write 'send SRC -> DST : SIZE' or '… : SIZE weight W'",
                                _tok_span(self.source, ctx.kw))
            weight = self.visit(ctx.weight)
        return A.SendItem(self.visit(ctx.src), self.visit(ctx.dst), self.visit(ctx.size), weight,
                          span=self.sp(ctx))

    def visitExchangeItem(self, ctx):
        combine = False
        if ctx.kw is not None:
            if ctx.kw.text != "combine":
                self.sink.error(f"unexpected '{ctx.kw.text}' after the size of an exchange; "
                                f"write 'exchange A <-> B : SIZE' or '… : SIZE combine'",
                                _tok_span(self.source, ctx.kw))
            combine = True
        return A.ExchangeItem(self.visit(ctx.a), self.visit(ctx.b), self.visit(ctx.size), combine,
                              span=self.sp(ctx))

    def visitComputeItem(self, ctx):
        return A.ComputeItem("compute", self.visit(ctx.rank), self.visit(ctx.cost), span=self.sp(ctx))

    def visitReduceItem(self, ctx):
        return A.ComputeItem("reduce", self.visit(ctx.rank), self.visit(ctx.size), span=self.sp(ctx))

    def visitBlockItem(self, ctx):
        return A.BlockItem(tuple(self.visit(i) for i in ctx.items), span=self.sp(ctx))


def _unquote(s: str) -> str:
    """The text of a string literal: ``\\`` and ``\"`` are escapes, any other backslash is
    kept (a Windows path), and non-ASCII text is left alone."""
    return re.sub(r'\\([\\"])', r"\1", s[1:-1])


def _parser(source: Source, sink: DiagnosticSink):
    """An ANTLR parser over ``source`` whose lexer and parser report into ``sink`` (and never
    print), with its token stream."""
    listener = _Collect(source, sink)
    lexer = TlopLexer(InputStream(source.text))
    lexer.removeErrorListeners()
    lexer.addErrorListener(listener)
    stream = CommonTokenStream(lexer)
    parser = TlopParser(stream)
    parser.removeErrorListeners()
    parser.addErrorListener(listener)
    return parser, stream


_NEST_OPEN = frozenset("([{")
_NEST_CLOSE = frozenset(")]}")
_PREFIX = frozenset(("-", "not"))
_OPERAND_TYPES = frozenset((TlopLexer.NUMBER, TlopLexer.STRING, TlopLexer.ID))


def _nesting(stream):
    """Yield ``(depth, token)`` at every bracket and prefix operator of the token stream: the
    open brackets plus the prefix operators (``-``, ``not``) whose operand has not ended.  A
    ``-`` right after an operand (a name, a number, a string, a closing bracket) is binary."""
    stream.fill()
    stack, pending, prev_operand = [], 0, False
    for tok in stream.tokens:
        if tok.type == Token.EOF:
            break
        if tok.channel != Token.DEFAULT_CHANNEL:
            continue
        text = tok.text
        if text in _NEST_OPEN:
            stack.append(pending)
            pending, prev_operand = 0, False
        elif text in _NEST_CLOSE:
            if stack:
                stack.pop()
            pending, prev_operand = 0, True
            continue
        elif text in _PREFIX and not (text == "-" and prev_operand):
            pending += 1
            prev_operand = False
        else:
            prev_operand = tok.type in _OPERAND_TYPES
            if prev_operand:
                pending = 0
            continue
        yield len(stack) + sum(stack) + pending, tok


def _deepest(stream):
    """``(depth, token)``: the largest nesting (:func:`_nesting`) and the first token at which it
    is reached (``(0, None)`` without any)."""
    best, where = 0, None
    for depth, tok in _nesting(stream):
        if depth > best:
            best, where = depth, tok
    return best, where


def _check_nesting(source: Source, stream) -> None:
    """One limit for every kind of nesting, checked before the recursive parse, at the token
    where it is crossed: :data:`tlop.frontend.limits.MAX_NESTING` levels of brackets and prefix
    operators together."""
    for depth, tok in _nesting(stream):
        if depth > MAX_NESTING:
            deepest, _ = _deepest(stream)
            raise TlopError(f"expression nested too deeply: {deepest:,} levels (brackets and prefix "
                            f"'-'/'not' together); at most {MAX_NESTING:,}", _tok_span(source, tok))


def _guarded(source: Source, run, stream=None):
    """Run a recursive parsing step; too deep a nesting is a user error, not a crash, reported
    at the deepest point of the source (the whole source when the token stream is not known)."""
    span = Span(source, 1, 1, 1, 1)
    if stream is not None:
        _, tok = _deepest(stream)
        if tok is not None:
            span = _tok_span(source, tok)
    with deep("expression", span):
        return run()


def parse_reference(source: Source) -> A.Module:
    """Parse one source with the Python ANTLR parser."""
    sink = DiagnosticSink()
    parser, stream = _parser(source, sink)
    _check_nesting(source, stream)
    tree = _guarded(source, parser.program, stream)
    sink.raise_if_errors()
    module = _guarded(source, lambda: _Builder(source, sink).visit(tree))
    sink.raise_if_errors()
    return module


def parse_expression(source: Source) -> A.Expr:
    """Parse a lone expression (a ``tlop prove`` claim, an ``--assume`` condition)."""
    sink = DiagnosticSink()
    parser, stream = _parser(source, sink)
    _check_nesting(source, stream)
    tree = _guarded(source, parser.expr, stream)
    nxt = stream.LT(1)
    if not sink.has_errors and nxt is not None and nxt.type != Token.EOF:
        sink.error(f"unexpected '{nxt.text}' after the expression", _tok_span(source, nxt))
    sink.raise_if_errors()
    out = _guarded(source, lambda: _Builder(source, sink).visit(tree))
    sink.raise_if_errors()
    return out
