"""Diff-friendly JSON text for profiles.

What it does: :func:`dumps` writes JSON with two-space indentation for objects, but keeps a list
of numbers or strings on one line and puts each row of a list of such lists on its own line, so
a 30×8 table is 30 readable lines instead of 300.  Floats are written with Python's shortest
round-trip representation, so reading the text back gives the same doubles.

What it does not do: validate (the profile loader does) or write files (``save_profile`` does,
atomically).  Non-finite floats are refused, since JSON has no spelling for them.
"""

from __future__ import annotations

import json

__all__ = ["dumps"]


def _leaf(v) -> str:
    return json.dumps(v, ensure_ascii=False, allow_nan=False)


def _is_flat(v) -> bool:
    return isinstance(v, list) and all(not isinstance(x, (list, dict)) for x in v)


def _write(v, indent: int, out: list) -> None:
    pad = "  " * indent
    if isinstance(v, dict):
        if not v:
            out.append("{}")
            return
        out.append("{\n")
        items = list(v.items())
        for n, (k, x) in enumerate(items):
            out.append(f"{pad}  {_leaf(str(k))}: ")
            _write(x, indent + 1, out)
            out.append(",\n" if n + 1 < len(items) else "\n")
        out.append(pad + "}")
    elif isinstance(v, list):
        if _is_flat(v):
            out.append("[" + ", ".join(_leaf(x) for x in v) + "]")
            return
        out.append("[\n")
        for n, x in enumerate(v):
            out.append(pad + "  ")
            _write(x, indent + 1, out)
            out.append(",\n" if n + 1 < len(v) else "\n")
        out.append(pad + "]")
    else:
        out.append(_leaf(v))


def dumps(v) -> str:
    """The JSON text of ``v`` (dicts, lists, str, int, float, bool, None), ending in a newline."""
    out: list = []
    _write(v, 0, out)
    out.append("\n")
    return "".join(out)
