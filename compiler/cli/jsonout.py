"""Machine-readable output of the command line (``--json`` on every command).

What it does: prints one JSON document (UTF-8, 2-space indent, keys in insertion order, no
``NaN``/``Infinity``: non-finite floats become ``null``); turns a :class:`TlopError` into a list of
diagnostics ``{file, line, column, end_line, end_column, severity, code, message, notes}``
(the schema is ``docs/_static/diagnostics.schema.json``).
What it does not do: choose what a command reports (each command builds its own object).
"""

from __future__ import annotations

import json
import math
import sys

from tlop.runtime.codes import code_of

__all__ = ["emit", "emit_stream", "diagnostic_json", "diagnostics_json"]


def _clean(obj):
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalars
        return _clean(obj.item())
    return obj


def emit(obj, file=None) -> None:
    """Print ``obj`` as one JSON document."""
    print(json.dumps(_clean(obj), indent=2, ensure_ascii=False, allow_nan=False), file=file or sys.stdout)


def diagnostic_json(d) -> dict:
    """One :class:`~tlop.runtime.diagnostics.Diagnostic` as a JSON object (positions 1-based,
    ``end_column`` inclusive; null when the diagnostic has no place in a file)."""
    s = d.span
    return {
        "file": s.file if s else None,
        "line": s.line if s else None,
        "column": s.col if s else None,
        "end_line": s.end_line if s else None,
        "end_column": s.end_col if s else None,
        "severity": d.severity,
        "code": code_of(d),
        "message": d.message,
        "notes": list(d.notes),
    }


def diagnostics_json(err) -> list:
    return [diagnostic_json(d) for d in err.diagnostics]


def emit_stream(head: dict, key: str, items, tail=None, file=None) -> None:
    """Print one JSON document ``{**head, key: [items…], **tail}`` writing the items as they come
    (a grid of any size in bounded memory); ``tail`` may be a callable, called after the items
    (for what is known only then).  The same layout as :func:`emit`, one item a line."""
    out = file or sys.stdout

    def value(v) -> str:
        return json.dumps(_clean(v), indent=2, ensure_ascii=False, allow_nan=False).replace("\n", "\n  ")

    out.write("{\n")
    for k, v in head.items():
        out.write(f"  {json.dumps(str(k), ensure_ascii=False)}: {value(v)},\n")
    out.write(f"  {json.dumps(key)}: [")
    first = True
    for item in items:
        out.write(("\n" if first else ",\n") + "    "
                  + json.dumps(_clean(item), ensure_ascii=False, allow_nan=False))
        first = False
    out.write("]" if first else "\n  ]")
    for k, v in ((tail() if callable(tail) else tail) or {}).items():
        out.write(f",\n  {json.dumps(str(k), ensure_ascii=False)}: {value(v)}")
    out.write("\n}\n")
