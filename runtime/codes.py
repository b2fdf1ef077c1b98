"""Stable codes of diagnostics (``E001`` … ``E099``), documented in ``docs/cli.rst``.

What it does: gives every diagnostic a code — the one it was raised with
(``Diagnostic.code``), else the first entry of :data:`CODES` whose pattern matches its message.
The codes and their meanings never change once published; a new kind of error gets a new code.
What it does not do: change a message or its rendering (the code is part of the JSON output).
"""

from __future__ import annotations

import re

__all__ = ["CODES", "code_of"]

#: (code, title, pattern on the message), tried in order; E099 matches everything; a pattern
#: ``(?!)`` never matches (the code is only ever given by its raiser or its error class)
CODES = (
    ("E002", "a reserved word used as a name", r"is a reserved word"),
    ("E050", "a missing optional dependency (mpi4py, matplotlib, llvmlite)",
     r"needs \w+, which is not installed|is not available in this installation"),
    ("E090", "an internal error of tlop (a bug: please report it)",
     r"^internal error|': (evaluation error|invalid argument) at "),
    ("E010", "an argument violates a parameter's constraint or the algorithm's where condition",
     r"violates the constraint|violate its condition"),
    ("E001", "syntax error", r"^(unexpected|expected |extraneous|no viable|mismatched|token recognition|\d[\d,]* terms joined|"
                             r"missing '|unterminated|invalid character|number too large|not UTF-8 text)"),
    ("E007", "import or file not found, import cycle",
     r"^(cannot find imported|import cycle|cannot import|no such file or stdlib module|cannot read )|"
     r"no \.tlop files under"),
    ("E060", "a file cannot be read or written (an operating-system error)",
     r"cannot (write|create)\b|cannot read the (samples file|latency matrix)|never overwrites a file"),
    ("E070", "tlop measure: the MPI job, its samples file, another run writing the same output",
     r"\bMPI\b|\bmpiexec found\b|samples file|lock file|another tlop measure|nothing was measured|"
     r"did not finish within|^cannot start |earlier run's samples|edited by hand"),
    ("E004", "unknown type or unit", r"^unknown (type|unit)\b"),
    ("E080", "a claim or assumption of tlop prove (malformed, untyped, not encodable for the solver)",
     r"^a claim |^cannot tell the type|^cannot encode|at the counterexample|is passed as .+ and as "),
    ("E024", "a per-rank parameter or argument (counts: bytes[P]): its declaration, its number of values",
     r"\bper-rank\b"),
    ("E023", "process configuration (a configuration table, its fields, per-process values, partitions)",
     r"configuration|per-process|one value per process|is one value|its fields: |fields are int|"
     r"\]: the index is outside|is declared '|^not valid JSON"),
    ("E003", "unknown name (parameter, table, channel, function, algorithm)",
     r"^(unknown|no algorithm|no such algorithm)\b|has no parameter|^no value for|is not defined on channel|"
     r"is not a channel of this program|^no candidate algorithm has|^no rules in family|no algorithm to compare"),
    ("E006", "duplicate definition", r"^duplicate|is a built-in name and cannot be redefined"),
    ("E008", "recursive definition", r"^recursive call|cannot recurse|in terms of itself"),
    ("E011", "a constant is required", r"must be a constant"),
    ("E040", "evaluation produced no finite number",
     r"\bNaN\b|not (a )?finite|overflow|infinite|is negative or not a number"),
    ("E041", "a value outside its domain during evaluation (a negative size, a concurrency that is not "
             "positive, a rank outside 0 … P−1, an empty range)",
     r"size is negative|concurrency must be positive|over an empty range|the rank is outside|"
     r"weight \S+ must be a positive"),
    ("E042", "a size limit (terms of a sum, points of a grid, the expansion of a definition, nesting depth)",
     r"longer than tlop evaluates|more than tlop (evaluates|explains)|points; at most|expands to [\d,]+ nodes|"
     r"beyond ±2\^53|nested too deeply|too large to check by unrolling"),
    ("E030", "bad argument value on the command line or in the Python API (NAME=VALUE, range, option)",
     r"^(--?[\w-]+[ :]|'?[\w]+=)|arguments are NAME=VALUE|is given twice \(|^argument \S+: |"
     r"is not a channel index|too large for a double|do not broadcast together|is given twice$|^give |"
     r"^which \w+\? give|^tlop \w+ --plot|takes ranges of|give schedules as"),
    ("E021", "process mapping or layout", r"\b(layout|mapping)\b"),
    ("E020", "platform profile (missing table, malformed file)",
     r"\bprofile\b|^invalid JSON|expected numbers separated by"),
    ("E022", "schedule (send, stage, model meaning)", r"^send |\bschedule\b|\bstage\b|sends from .+ outside ranks|"
     r"must take the message size m|must all take a channel or none do"),
    ("E009", "wrong arguments in a call",
     r"^missing argument|takes \d+ arguments?|positional|takes (no channel index|two or more arguments|\S+ arguments?)|"
     r"argument '?\w+'? given twice"),
    ("E005", "type or dimension mismatch",
     r"^cannot (add|subtract|compare|take|multiply|divide)|must be|needs|found |different types|indexed by|"
     r"cannot read the platform|is not allowed here|must cost a time|not something to call|call it with arguments|"
     r"must take (exactly )?one|a concurrent transmission item outside|is not a channel-indexed|"
     r"in one algorithm and .+ in another"),
    ("E031", "tlop tune, audit, tune-check: a library's catalogue, its defaults, a tuning file or a traced MPI run",
     r"takes the ranges P=… and m=… only|prices the libraries' own algorithms|^'.*': give ranges as P=RANGE|"
     r"is not in tlop's catalogue|cannot read the tuning file|MPICH reads a JSON selection|"
     r"the trace log lacks the markers|the traced MPICH run failed|^.+: no such file$"),
    ("E099", "other error", r""),
)

_COMPILED: tuple = ()  # (code, compiled pattern), made on first use (start-up does not pay for it)


def code_of(diagnostic) -> str:
    """The code of a diagnostic (its own, else classified from its message)."""
    own = getattr(diagnostic, "code", None)
    if own:
        return own
    global _COMPILED
    if not _COMPILED:
        _COMPILED = tuple((code, re.compile(pattern)) for code, _, pattern in CODES)
    for code, pattern in _COMPILED:
        if pattern.search(diagnostic.message):
            return code
    return "E099"
