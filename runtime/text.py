"""Showing untrusted text safely on a terminal.

What it does: :func:`printable` escapes the characters of a string that a terminal would act on
instead of showing — C0 and C1 control characters (ESC, CR, newline, BEL …), DEL, the Unicode
line and paragraph separators and the bidirectional overrides — as ``\\x1b``, ``\\n``,
``\\u202e`` …, so a profile name, a file path or a ``--name`` value read from input can be put in
a message without moving the cursor, recolouring the terminal or forging extra lines.
:func:`has_control` tells whether a string holds any such character (for fields that refuse
them outright, such as a profile's name).

What it does not do: quote, shorten or otherwise change printable text (a backslash stays a
backslash), or decide where escaping is needed — callers apply it to what came from input.
"""

from __future__ import annotations

import unicodedata

__all__ = ["printable", "has_control"]

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: format characters that reorder or hide text (bidi embeddings, overrides and isolates)
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _unsafe(ch: str) -> bool:
    if ch < " " or "\x7f" <= ch <= "\x9f":
        return True
    if ch < "\u2028":
        return ch in _BIDI
    return ch in ("\u2028", "\u2029") or ch in _BIDI or unicodedata.category(ch) == "Cc"


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    o = ord(ch)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def printable(text, keep: str = "") -> str:
    """``text`` (any object, via ``str``) with every terminal-active character escaped, except
    those in ``keep`` (e.g. ``keep="\\n"`` for a multi-line message)."""
    s = text if isinstance(text, str) else str(text)
    if s.isprintable() and not any(ch in _BIDI for ch in s):   # the common case, fast
        return s
    return "".join(_escape(ch) if _unsafe(ch) and ch not in keep else ch for ch in s)


def has_control(text: str) -> bool:
    """Whether ``text`` holds a character :func:`printable` would escape."""
    return any(_unsafe(ch) for ch in text)
