"""Stable codes of diagnostics (``E001`` … ``E099``), documented in ``docs/cli.rst``.

What it does: gives every diagnostic a code — the one it was raised with
(``Diagnostic.code``), else the first entry of :data:`CODES` whose pattern matches its message.
The codes and their meanings never change once published; a new kind of error gets a new code.
What it does not do: change a message or its rendering (the code is part of the JSON output).
"""

from __future__ import annotations

import re

__all__ = ["CODES", "code_of"]

#: (code, title, pattern on the message), tried in order; E099 matches everything
CODES = (
    ("E002", "a reserved word used as a name", r"is a reserved word"),
    ("E010", "an argument violates a parameter's constraint or the algorithm's where condition",
     r"violates the constraint|violate its condition"),
    ("E001", "syntax error", r"^(unexpected|expected |extraneous|no viable|mismatched|token recognition|\d[\d,]* terms joined|"
                             r"missing '|unterminated|invalid character|number too large)"),
    ("E007", "import or file not found, import cycle",
     r"^(cannot find imported|import cycle|cannot import|no such file or stdlib module|cannot read )"),
    ("E004", "unknown type or unit", r"^unknown (type|unit)\b"),
    ("E003", "unknown name (parameter, table, channel, function, algorithm)",
     r"^(unknown|no algorithm|no such algorithm)\b|has no parameter"),
    ("E006", "duplicate definition", r"^duplicate"),
    ("E008", "recursive definition", r"^recursive call"),
    ("E011", "a constant is required", r"must be a constant"),
    ("E030", "bad command-line value (NAME=VALUE, range, option)", r"^(--[\w-]+ |'?[\w]+=)"),
    ("E021", "process mapping or layout", r"\b(layout|mapping)\b"),
    ("E020", "platform profile (missing table, malformed file)", r"\bprofile\b|^invalid JSON"),
    ("E022", "schedule (send, stage, model meaning)", r"^send |\bschedule\b|\bstage\b"),
    ("E009", "wrong arguments in a call", r"^missing argument|takes \d+ arguments?|positional"),
    ("E005", "type or dimension mismatch",
     r"^cannot (add|subtract|compare|take|multiply|divide)|must be|needs|found |different types|indexed by|"
     r"cannot read the platform"),
    ("E040", "evaluation produced no finite number", r"\bNaN\b|not finite|overflow|infinite"),
    ("E099", "other error", r""),
)

_COMPILED = tuple((code, re.compile(pattern)) for code, _, pattern in CODES)


def code_of(diagnostic) -> str:
    """The code of a diagnostic (its own, else classified from its message)."""
    own = getattr(diagnostic, "code", None)
    if own:
        return own
    for code, pattern in _COMPILED:
        if pattern.search(diagnostic.message):
            return code
    return "E099"
