"""Where each value of a JSON document starts: a path → (line, column) index.

What it does: :func:`positions` scans JSON text that :func:`json.loads` has already accepted and
returns, for every value, its path (a tuple of object keys and list indices, ``("ranks", 3,
"node")``) mapped to the 1-based line and column of its first character; :func:`span_of` turns a
path into a :class:`tlop.runtime.diagnostics.Span` (the nearest enclosing value when the path is
absent, e.g. a missing key), so that a validator can report ``file:line:col`` with a caret.

What it does not do: validate or decode (the text must be valid JSON — decode it with
:func:`json.loads` first; on invalid text the index is incomplete, never wrong), or keep the
position of keys apart from their values.
"""

from __future__ import annotations

import re

from tlop.runtime.diagnostics import Source, Span

__all__ = ["positions", "span_of"]

_WS = re.compile(r"[ \t\r\n]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_SCALAR = re.compile(r"-?[0-9][0-9.eE+\-]*|true|false|null|NaN|-?Infinity")


def positions(text: str) -> dict:
    """``{path: (line, col)}`` for every value of the JSON document ``text`` (the root is ``()``)."""
    out: dict = {}
    starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def where(i: int) -> tuple:
        lo, hi = 0, len(starts) - 1
        while lo < hi:  # the last line start <= i
            mid = (lo + hi + 1) // 2
            if starts[mid] <= i:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, i - starts[lo] + 1

    def skip(i: int) -> int:
        return _WS.match(text, i).end()

    # an explicit stack instead of recursion: deep documents cannot exhaust Python's stack
    i = skip(0)
    stack: list = []  # (kind, path, next index or None)
    path: tuple = ()
    while i < len(text):
        out[path] = where(i)
        c = text[i]
        if c in "{[":
            i = skip(i + 1)
            if text[i:i + 1] in ("}", "]"):
                i += 1
            else:
                if c == "{":
                    m = _STRING.match(text, i)
                    key = _unquote(m.group())
                    i = skip(m.end())
                    i = skip(i + 1)  # ':'
                    stack.append(("{", path))
                    path = path + (key,)
                else:
                    stack.append(("[", path))
                    path = path + (0,)
                continue
        elif c == '"':
            i = _STRING.match(text, i).end()
        else:
            m = _SCALAR.match(text, i)
            if not m:
                return out
            i = m.end()
        # after a value: close containers, or move to the next member
        while True:
            i = skip(i)
            if not stack:
                return out
            kind, parent = stack[-1]
            if i < len(text) and text[i] == ",":
                i = skip(i + 1)
                if kind == "{":
                    m = _STRING.match(text, i)
                    if not m:
                        return out
                    key = _unquote(m.group())
                    i = skip(m.end())
                    i = skip(i + 1)
                    path = parent + (key,)
                else:
                    path = parent + (path[-1] + 1,)
                break
            if i < len(text) and text[i] in "}]":
                i += 1
                stack.pop()
                path = parent
                continue
            return out
    return out


def _unquote(token: str) -> str:
    import json

    try:
        return json.loads(token)
    except ValueError:
        return token[1:-1]


def span_of(source: Source, index: dict, path) -> Span:
    """The span of the value at ``path`` (a 1-character span at its start); the nearest
    enclosing value when ``path`` is not in ``index`` (a missing key: its object)."""
    path = tuple(path)
    while path and path not in index:
        path = path[:-1]
    line, col = index.get(path, (1, 1))
    return Span(source, line, col, line, col)
