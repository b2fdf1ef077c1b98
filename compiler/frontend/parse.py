"""Parsing: source text → AST with spans, by the one parser: ANTLR 4's Python runtime.

What it does: gives a source to the ANTLR parser generated from ``grammar/Tlop.g4``
(:mod:`tlop.frontend.reference_parser`), which builds the AST or reports every syntax error with
its span.  The parser module, and ANTLR with it, is imported only when a source is parsed: a
``tlop`` command whose files are all answered by the checked-IR cache
(:mod:`tlop.frontend.checked_cache`) never imports it.

What it does not do: resolve imports or names, or check types.
"""

from __future__ import annotations

from tlop.frontend import ast as A
from tlop.runtime.diagnostics import Source

__all__ = ["parse_source", "parse_reference", "parse_expression", "parse_text", "PARSER"]

#: what ``tlop --version`` says reads sources
PARSER = "parser: ANTLR 4.13.2 (Python runtime), generated from grammar/Tlop.g4"


def parse_source(source: Source) -> A.Module:
    """Parse one source; raises :class:`TlopError` with every syntax error found."""
    from tlop.frontend import reference_parser

    return reference_parser.parse_reference(source)


#: the same function under its older name (the ANTLR parser was once the reference of a second one)
parse_reference = parse_source


def parse_expression(source: Source) -> A.Expr:
    """Parse a lone expression (a ``tlop prove`` claim, an ``--assume`` condition)."""
    from tlop.frontend import reference_parser

    return reference_parser.parse_expression(source)


def parse_text(text: str, name: str = "<input>") -> A.Module:
    """Parse a string (tests, the Python API)."""
    return parse_source(Source(name, text))
