"""Parsing: source text → AST with spans, by the native parser or the reference one.

What it does: gives a source to the native parser (:mod:`tlop.frontend.native`, when built) and,
whatever that one does not answer (every source with an error, or any source when it is not
built), to the reference parser (:mod:`tlop.frontend.reference_parser`, the Python ANTLR
runtime), which reports the errors.  The reference parser, and ANTLR with it, is imported only
when it is needed: a ``tlop`` command on valid files with the native parser never imports it
(about 40 ms of start-up).

What it does not do: resolve imports or names, or check types.
"""

from __future__ import annotations

from tlop.frontend import ast as A
from tlop.runtime.diagnostics import Source

__all__ = ["parse_source", "parse_reference", "parse_expression", "parse_text"]


def parse_source(source: Source) -> A.Module:
    """Parse one source; raises :class:`TlopError` with every syntax error found.  The native
    parser (:mod:`tlop.frontend.native`, when built) parses it first; the ANTLR parser is the
    reference, and parses whatever the native one does not (every source with an error)."""
    from tlop.frontend import native

    module = native.parse(source)
    if module is not None:
        return module
    return parse_reference(source)


def parse_reference(source: Source) -> A.Module:
    """Parse one source with the Python ANTLR parser (the reference of the native one)."""
    from tlop.frontend import reference_parser

    return reference_parser.parse_reference(source)


def parse_expression(source: Source) -> A.Expr:
    """Parse a lone expression (a ``tlop prove`` claim, an ``--assume`` condition)."""
    from tlop.frontend import reference_parser

    return reference_parser.parse_expression(source)


def parse_text(text: str, name: str = "<input>") -> A.Module:
    """Parse a string (tests, the Python API)."""
    return parse_source(Source(name, text))
