"""Diagnostics in colour on a terminal.

What it does: decides whether a stream gets colour — ``--color=always|never`` when given (as
pytest and git take it), else a terminal, ``NO_COLOR`` unset or empty (https://no-color.org),
``TERM`` not ``dumb``; ``FORCE_COLOR`` forces it — and colours rendered
diagnostics: the place in bold, ``error`` red, ``warning`` yellow, ``note`` cyan, the caret line
green; :func:`print_error` prints a :class:`~tlop.runtime.diagnostics.TlopError` on stderr that way.
What it does not do: render diagnostics (:mod:`tlop.runtime.diagnostics` does; the text without
colour is byte for byte the same).
"""

from __future__ import annotations

import os
import re
import sys

__all__ = ["wants_colour", "colour_diagnostics", "print_error", "set_mode", "MODES"]

#: the values of ``--color``
MODES = ("auto", "always", "never")
_mode = "auto"


def set_mode(mode: str) -> None:
    """``--color``: ``always`` and ``never`` decide; ``auto`` leaves it to the stream and the
    environment."""
    global _mode
    _mode = mode if mode in MODES else "auto"


_RESET, _BOLD, _RED, _YELLOW, _CYAN, _GREEN = "\033[0m", "\033[1m", "\033[31m", "\033[33m", "\033[36m", "\033[32m"
_SEVERITY = {"error": _RED, "warning": _YELLOW, "note": _CYAN}
_HEAD = re.compile(r"^(?P<where>\S.*?: )?(?P<sev>error|warning|note)(?P<code>\[E\d+\])?(?P<rest>: .*)$")
_CARET = re.compile(r"^(\s+)(\^+)$")


def wants_colour(stream) -> bool:
    if _mode != "auto":
        return _mode == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def colour_diagnostics(text: str) -> str:
    out = []
    for line in text.split("\n"):
        m = _HEAD.match(line.lstrip())
        c = _CARET.match(line)
        if m and not line.startswith("    "):
            indent = line[: len(line) - len(line.lstrip())]
            where = f"{_BOLD}{m['where']}{_RESET}" if m["where"] else ""
            out.append(f"{indent}{where}{_BOLD}{_SEVERITY[m['sev']]}{m['sev']}{m['code'] or ''}{_RESET}{_BOLD}{m['rest']}{_RESET}")
        elif c:
            out.append(f"{c[1]}{_BOLD}{_GREEN}{c[2]}{_RESET}")
        else:
            out.append(line)
    return "\n".join(out)


def print_error(err) -> None:
    """The diagnostics of ``err`` on stderr, in colour on a terminal (not with ``NO_COLOR``)."""
    text = err.render()
    print(colour_diagnostics(text) if wants_colour(sys.stderr) else text, file=sys.stderr)
