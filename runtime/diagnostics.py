"""One error family for the whole project: spans, diagnostics, and their rendering.

Every user-facing failure — a syntax error, an unknown name, a malformed profile, a failed
measurement — is a :class:`TlopError` carrying one or more :class:`Diagnostic`.  The CLI prints
``str(error)`` and exits with status 1; nothing else ever reaches the user, and never a Python
traceback.  A diagnostic with a :class:`Span` renders as::

    bcast.tlop:4:31: error[E003]: unknown table 'T2'; tables in scope: o, L, T
        sum i in 0 .. ceil(log2(P)) - 1: 2^i || T2[c](m)
                                                ^^

The code in brackets is the diagnostic's stable code (:mod:`tlop.runtime.codes`, the table in
``docs/cli.rst``), the same as the ``code`` of its ``--json`` form.

Rendering escapes the control characters of everything it shows (:func:`tlop.runtime.text.printable`):
a file name, a message quoting input, or a source line holding ESC or CR cannot drive the
terminal; a message keeps its own newlines and tabs, and carets stay under the escaped text.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional

from tlop.runtime.codes import code_of
from tlop.runtime.text import printable

__all__ = ["Source", "Span", "Diagnostic", "TlopError", "DiagnosticSink", "MAX_SHOWN"]

#: the most diagnostics one error prints (a file with thousands of errors shows the first ones)
MAX_SHOWN = 20

#: characters a message may use for its layout; every other control character is escaped
_LAYOUT = "\n\t"


@dataclass(frozen=True)
class Source:
    """The text of one input file and the name it is reported under."""
    name: str
    text: str = field(repr=False)

    def line(self, n: int) -> str:
        """Line ``n`` (1-based) without its line ending, or '' past the end.  Lines end at
        ``\n`` only, as the lexer (ANTLR) and JSON count them — not at a lone CR, U+2028, NEL, VT
        or FF, where :meth:`str.splitlines` would also split and quote another line.  The text is
        split once per source (thousands of diagnostics in one file once split it each time)."""
        lines = self.__dict__.get("_lines")
        if lines is None:
            lines = [ln[:-1] if ln.endswith("\r") else ln for ln in self.text.split("\n")]
            if lines and lines[-1] == "" and self.text.endswith("\n"):
                lines.pop()
            self.__dict__["_lines"] = lines  # a cache, not a field: frozen, equality unchanged
        return lines[n - 1] if 1 <= n <= len(lines) else ""

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_lines", None)  # not pickled (the checked-IR cache stores sources)
        return state


@dataclass(slots=True, unsafe_hash=True)
class Span:
    """A region of a source: 1-based line and column of its first and last character
    (``end_col`` inclusive).

    A value: nothing assigns to a span's fields once it is made (spans are shared by the AST
    and the IR).  It has ``__slots__`` (a file of 10⁵ declarations has millions of spans) and is
    not a frozen dataclass only so that :mod:`pickle` restores its slots directly, without a
    Python ``__setstate__`` per span (the checked-IR cache holds a million of them)."""
    source: Source = field(repr=False, compare=False)
    line: int
    col: int
    end_line: int
    end_col: int

    @property
    def file(self) -> str:
        return self.source.name

    def __str__(self) -> str:
        return f"{printable(self.source.name)}:{self.line}:{self.col}"

    def to(self, other: "Span") -> "Span":
        """The span from the start of ``self`` to the end of ``other``."""
        return Span(self.source, self.line, self.col, other.end_line, other.end_col)


@dataclass(frozen=True)
class Diagnostic:
    """One message: severity ('error', 'warning' or 'note'), text, and where; ``code`` is its
    stable code (``E0xx``, :mod:`tlop.runtime.codes`) when the raiser names one, else it is
    classified from the message."""
    message: str
    span: Optional[Span] = None
    severity: str = "error"
    notes: tuple = ()
    code: Optional[str] = None

    def render(self) -> str:
        # control characters from input (ESC, CR …) are shown escaped, never sent to the terminal
        head = f"{self.severity}[{code_of(self)}]: {printable(self.message, keep=_LAYOUT)}"
        if self.span is None:
            out = [f"tlop: {head}"]
        else:
            out = [f"{self.span}: {head}"]
            text = self.span.source.line(self.span.line)
            if text:

                def shown(s: str) -> str:
                    return printable(s, keep="\t").expandtabs(4)

                expanded = shown(text)
                # caret columns must follow the escaping and tab expansion of the prefix
                start = len(shown(text[: self.span.col - 1]))
                if self.span.end_line == self.span.line:
                    width = len(shown(text[: self.span.end_col])) - start
                else:
                    width = len(expanded) - start
                expanded, start, width = _window(expanded.rstrip(), start, max(1, width))
                out.append("    " + expanded)
                out.append("    " + " " * start + "^" * width)
        for note in self.notes:
            out.append(f"  note: {printable(note, keep=_LAYOUT)}")
        return "\n".join(out)


#: the longest source line quoted in full; a longer one is cut to a window around the span
_MAX_QUOTE = 160


def _window(line: str, start: int, width: int) -> tuple:
    """(quoted line, caret start, caret width): a line longer than :data:`_MAX_QUOTE` (minified
    JSON, generated code) is cut to the part around the span, with ``…`` marking the cuts."""
    if len(line) <= _MAX_QUOTE:
        return line, start, width
    width = min(width, _MAX_QUOTE // 2)
    lo = max(0, min(start - _MAX_QUOTE // 4, len(line) - _MAX_QUOTE))
    hi = min(len(line), lo + _MAX_QUOTE)
    head = "…" if lo > 0 else ""
    tail = "…" if hi < len(line) else ""
    return head + line[lo:hi] + tail, start - lo + len(head), width


class TlopError(Exception):
    """The project's one exception type for user errors: carries diagnostics with spans.

    A subclass may set :attr:`code` (a profile error is ``E020`` whatever its wording): it is
    given to each of its diagnostics that has none of its own."""

    #: the code of this kind of error, or None to classify each diagnostic by its message
    code: Optional[str] = None

    def __init__(self, diagnostics, span: Optional[Span] = None):
        if isinstance(diagnostics, str):
            diagnostics = [Diagnostic(diagnostics, span)]
        elif isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        if self.code is not None:
            diagnostics = [d if d.code else replace(d, code=self.code) for d in diagnostics]
        self.diagnostics = list(diagnostics)
        super().__init__(self.render())

    @property
    def span(self) -> Optional[Span]:
        return self.diagnostics[0].span if self.diagnostics else None

    def render(self) -> str:
        """The first :data:`MAX_SHOWN` diagnostics, then how many more there are (all of them
        stay in :attr:`diagnostics`)."""
        shown = [d.render() for d in self.diagnostics[:MAX_SHOWN]]
        more = len(self.diagnostics) - MAX_SHOWN
        if more > 0:
            shown.append(f"…and {more:,} more error{'s' if more > 1 else ''}")
        return "\n".join(shown)

    def __str__(self) -> str:
        return self.render()


class DiagnosticSink:
    """Collects diagnostics from a pass; :meth:`raise_if_errors` turns them into a TlopError.

    Errors are de-duplicated by (span, message) so one bad expression reported twice by
    different checks shows once."""

    def __init__(self):
        self.items: list[Diagnostic] = []
        self._seen: set = set()

    def error(self, message: str, span: Optional[Span] = None, notes=()) -> None:
        key = (message, (span.source.name, span.line, span.col) if span else None)
        if key in self._seen:
            return
        self._seen.add(key)
        self.items.append(Diagnostic(message, span, "error", tuple(notes)))

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.items)

    def raise_if_errors(self) -> None:
        if self.has_errors:
            ordered = sorted(
                self.items,
                key=lambda d: (d.span.source.name, d.span.line, d.span.col) if d.span else ("", 0, 0),
            )
            raise TlopError(ordered)
