"""A Pygments lexer for ``.tlop`` files (registered as the ``pygments.lexers`` entry point
``tlop``; the Sphinx docs highlight their examples with it).

What it does: splits ``.tlop`` text into Pygments tokens — doc comments, comments, strings,
declaration keywords (with the declared name), keywords, the schedule words, word operators,
types, built-in functions, numbers with their units, operators, punctuation, names.  It never
emits an error token (any other character is plain text), so Sphinx never refuses a block.
What it does not do: parse (``grammar/Tlop.g4`` is the language; a test checks that every keyword
of the grammar is highlighted as one here).
"""

from __future__ import annotations

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import (Comment, Keyword, Name, Number, Operator, Punctuation, String, Text,
                            Whitespace)

__all__ = ["TlopLexer", "DECLARATIONS", "KEYWORDS", "SCHEDULE", "WORD_OPERATORS", "TYPES", "BUILTINS"]

DECLARATIONS = ("model", "import", "channel", "table", "param", "transmission", "def", "algorithm")
KEYWORDS = ("let", "in", "if", "then", "else", "sum", "over", "where", "via")
SCHEDULE = ("stages", "stage", "par", "seq", "send", "exchange", "compute", "reduce", "config")
WORD_OPERATORS = ("and", "or", "not", "div", "xor")
TYPES = ("int", "real", "bool", "bytes", "time", "cost", "channel", "mapping")
BUILTINS = ("ceil", "floor", "log2", "abs", "sqrt", "exp", "ln", "max", "min")


class TlopLexer(RegexLexer):
    name = "tlop"
    aliases = ["tlop", "tau-lop"]
    filenames = ["*.tlop"]
    mimetypes = ["text/x-tlop"]
    url = "https://github.com/tlop"

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"///[^\n]*", String.Doc),
            (r"#[^\n]*", Comment.Single),
            (r'"(?:[^"\\\n]|\\.)*"', String.Double),
            (r"(algorithm|def|table|transmission|param|channel|model)(\s+)([A-Za-z_][A-Za-z_0-9]*)",
             bygroups(Keyword.Declaration, Whitespace, Name.Function)),
            (words(DECLARATIONS, suffix=r"\b"), Keyword.Declaration),
            (words(SCHEDULE, suffix=r"\b"), Keyword.Reserved),
            (words(KEYWORDS, suffix=r"\b"), Keyword),
            (words(WORD_OPERATORS, suffix=r"\b"), Operator.Word),
            (words(TYPES, suffix=r"\b"), Keyword.Type),
            (words(BUILTINS, suffix=r"\b(?=\s*\()"), Name.Builtin),
            (r"(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)([A-Za-zµ]+)", bygroups(Number.Float, Keyword.Constant)),
            (r"\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+", Number.Float),
            (r"\d+", Number.Integer),
            (r"->|\|\||‖|\.\.|<<|>>|<=|>=|==|!=|[-+*/%^<>=&·×−]", Operator),
            (r"[()\[\]{},:;…]", Punctuation),
            (r"[A-Za-z_][A-Za-z_0-9]*", Name),
            (r".", Text),  # anything else: plain text, never an error token
        ],
    }
