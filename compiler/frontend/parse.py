"""Parsing: source text → AST with spans.

What it does: runs the ANTLR-generated lexer and parser (``tlop._antlr``) with ANTLR's console
listeners removed, collects every syntax error as a :class:`~tlop.runtime.diagnostics.Diagnostic` with a
span, and builds :mod:`tlop.ast` nodes from the parse tree.  Number literals are split into value
and unit here (an unknown unit is reported later by the checker, which knows the context).

What it does not do: resolve imports or names, or check types.
"""

from __future__ import annotations

import re

from antlr4 import CommonTokenStream, InputStream, Token
from antlr4.error.ErrorListener import ErrorListener
from antlr4.error.ErrorStrategy import BailErrorStrategy, DefaultErrorStrategy  # noqa: F401

from tlop.frontend import ast as A
from tlop.runtime.diagnostics import DiagnosticSink, Source, Span, TlopError  # noqa: F401
from tlop.frontend.limits import deep
from tlop._antlr.TlopLexer import TlopLexer
from tlop._antlr.TlopParser import TlopParser
from tlop._antlr.TlopVisitor import TlopVisitor

__all__ = ["parse_source", "parse_text"]


class _Collect(ErrorListener):
    """Turns ANTLR syntax errors into diagnostics instead of printing them."""

    def __init__(self, source: Source, sink: DiagnosticSink):
        self.source = source
        self.sink = sink

    def syntaxError(self, recognizer, offendingSymbol, line, column, msg, e):  # noqa: N802 (ANTLR API)
        width = 1
        text = None
        if offendingSymbol is not None and getattr(offendingSymbol, "text", None) not in (None, "<EOF>"):
            text = offendingSymbol.text
            width = max(1, len(text))
        span = Span(self.source, line, column + 1, line, column + width)
        self.sink.error(_friendly(msg, text), span)


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


class _Builder(TlopVisitor):
    """Parse tree → AST.  One method per labelled alternative."""

    def __init__(self, source: Source):
        self.source = source

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
        return A.ChannelDecl(ctx.name.text, span=self.sp(ctx))

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
        return A.AlgorithmDecl(ctx.name.text, params, self.visit(ctx.result) if ctx.result else None,
                               self.visit(ctx.body), span=self.sp(ctx))

    def visitParamList(self, ctx):
        return tuple(self.visit(p) for p in ctx.param())

    def visitParam(self, ctx):
        op = ctx.op.getText() if ctx.op else None
        bound = self.visit(ctx.bound) if ctx.bound else None
        cspan = _span(self.source, ctx.op).to(self.sp(ctx.bound)) if ctx.op else None
        return A.Param(ctx.name.text, self.visit(ctx.type_), op, bound,
                       self.visit(ctx.default) if ctx.default else None,
                       span=self.sp(ctx), constraint_span=cspan)

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
        """Left-associative chain ``parts[0] ops[0] parts[1] …``."""
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
        parts = ctx.additive()
        if len(parts) == 1:
            return self.visit(parts[0])
        lhs, rhs = self.visit(parts[0]), self.visit(parts[1])
        op = ctx.compareOp()
        return A.Binary(op.getText(), lhs, rhs, span=lhs.span.to(rhs.span), op_span=self.sp(op))

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


def _guarded(source: Source, run):
    """Run a recursive parsing step; too deep a nesting is a user error, not a crash."""
    with deep("expression", Span(source, 1, 1, 1, 1)):
        return run()


def parse_source(source: Source) -> A.Module:
    """Parse one source; raises :class:`TlopError` with every syntax error found."""
    sink = DiagnosticSink()
    parser, _ = _parser(source, sink)
    tree = _guarded(source, parser.program)
    sink.raise_if_errors()
    return _guarded(source, lambda: _Builder(source).visit(tree))


def parse_expression(source: Source) -> A.Expr:
    """Parse a lone expression (a ``tlop prove`` claim, an ``--assume`` condition)."""
    sink = DiagnosticSink()
    parser, stream = _parser(source, sink)
    tree = _guarded(source, parser.expr)
    nxt = stream.LT(1)
    if not sink.has_errors and nxt is not None and nxt.type != Token.EOF:
        sink.error(f"unexpected '{nxt.text}' after the expression", _tok_span(source, nxt))
    sink.raise_if_errors()
    return _guarded(source, lambda: _Builder(source).visit(tree))


def parse_text(text: str, name: str = "<input>") -> A.Module:
    """Parse a string (tests, the Python API)."""
    return parse_source(Source(name, text))
