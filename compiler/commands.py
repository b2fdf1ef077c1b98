"""The command line's ``best``, ``explain``, ``show`` and ``tune`` from Python (notebooks).

What it does: each function builds the command line the CLI would take (``P=[2, 4, 8]`` becomes
``P=2,4,8``; ``m="1KiB..1MiB:x4"`` passes as written), runs the CLI's own command with ``--json``
in-process, and returns a :class:`Result` holding that JSON (``.data``), the command's text
output (``repr``), an HTML view for Jupyter, and ``to_pandas()``.
Errors are raised as :class:`tlop.TlopError` with the CLI's diagnostics.
What it does not do: price anything itself, or differ from the command line (one semantics:
the same code runs).  ``tune`` writes no library files (``tlop tune --openmpi/--mpich`` does).
"""

from __future__ import annotations

import html
import io
import json
from contextlib import redirect_stdout
from typing import Any, Iterable, Optional, Union

__all__ = ["best", "explain", "show", "tune", "Result", "TuneResult"]


def _value_text(v) -> str:
    """A Python value as the command line writes it: ``[2, 4]`` → ``2,4``, ``1024.0`` → ``1024``."""
    import numpy as np

    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple, range)) or (hasattr(v, "ndim") and np.ndim(v) > 0):
        return ",".join(_value_text(x) for x in np.ravel(np.asarray(list(v) if isinstance(v, range) else v,
                                                                     dtype=object)))
    f = float(v)
    return str(int(f)) if f.is_integer() else repr(f)


def _options(profile=None, mapping=None, config=None, **flags) -> list:
    out = []
    for opt, v in (("--profile", profile), ("--mapping", mapping), ("--config", config)):
        if v is None:
            continue
        if not isinstance(v, str):  # a Profile by its file, a layout by its source, a mapping by its text
            from pathlib import Path

            from tlop.runtime.diagnostics import TlopError

            found = getattr(v, "path", None) or getattr(v, "source", None) or (str(v) if opt == "--mapping" else None)
            if found is None:
                raise TlopError(f"{opt[2:]}={v!r}: give a name or a path (this object has no file)")
            v = str(Path(found)) if opt == "--profile" else str(found)
        out += [opt, v]
    for k, v in flags.items():
        if v is True:
            out.append("--" + k.replace("_", "-"))
        elif v not in (None, False):
            for x in (v if isinstance(v, (list, tuple)) else [v]):
                out += ["--" + k.replace("_", "-"), str(x)]
    return out


def _run(command: str, argv: list) -> str:
    """The standard output of ``tlop COMMAND argv`` run in-process; TlopError propagates (with
    its diagnostics), a usage error becomes a TlopError too."""
    import warnings

    from tlop.cli.main import build_parser
    from tlop.runtime.diagnostics import TlopError

    parser = build_parser(command)
    err = io.StringIO()
    try:
        from contextlib import redirect_stderr

        with redirect_stderr(err):
            args = parser.parse_args([command] + argv)
    except SystemExit:
        usage = err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else "bad arguments"
        raise TlopError(f"give valid arguments to tlop {command}: {usage}") from None
    out = io.StringIO()
    with redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("default")
        args.run(args)
    return out.getvalue()


class Result:
    """What a command printed: ``data`` (its ``--json`` document), ``text`` (its table, as the
    terminal shows it), ``to_pandas()`` and an HTML view in Jupyter."""

    def __init__(self, command: str, argv: list, data: dict, rows_key: Optional[str] = None):
        self.command, self.argv, self.data, self._rows_key = command, argv, data, rows_key
        self._text = None

    @property
    def text(self) -> str:
        """The command's text output (computed on first use: the same command without --json)."""
        if self._text is None:
            argv = list(self.argv)
            if argv[-2:] == ["--json", "-"]:  # tlop tune: --json takes a file
                argv = argv[:-2]
            self._text = _run(self.command, [a for a in argv if a != "--json"])
        return self._text

    def rows(self) -> list:
        """The result's table as a list of dicts (best: one per point; explain: one per stage)."""
        if self._rows_key is None:
            return []
        out = []
        for r in self.data.get(self._rows_key, []):
            flat = {}
            for k, v in r.items():
                if isinstance(v, dict):  # best's costs per algorithm: one column each
                    flat.update({f"{k}.{kk}": vv for kk, vv in v.items()})
                else:
                    flat[k] = v
            out.append(flat)
        return out

    def to_pandas(self):
        """The rows as a pandas DataFrame (pandas is optional: an ImportError says how to get it)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_pandas() needs pandas: pip install pandas") from None
        return pd.DataFrame(self.rows())

    def __getitem__(self, key):
        return self.data[key]

    def __repr__(self) -> str:
        return self.text.rstrip("\n")

    def _repr_html_(self) -> str:
        return f"<pre class=\"tlop-{html.escape(self.command)}\">{html.escape(self.text)}</pre>"


class BestResult(Result):
    """:func:`best`'s result: ``winners`` is ``[(point, algorithm), …]`` in grid order."""

    @property
    def winners(self) -> list:
        names = self.data.get("parameters", [])
        return [({k: p[k] for k in names}, p.get("best")) for p in self.data.get("points", [])]

    @property
    def excluded(self) -> dict:
        """Algorithm -> why it was not compared."""
        return {e["algorithm"]: e["reason"] for e in self.data.get("excluded", [])}


def _axes(axes: dict) -> list:
    return [f"{k}={_value_text(v)}" for k, v in axes.items()]


def best(files: Union[str, Iterable[str]], profile=None, *, only=None, mapping=None, config=None,
         **axes: Any) -> BestResult:
    """Which algorithm of ``files`` is cheapest at each point: ``tlop.best("taulop/bcast",
    P=[2, 8, 32], m="1KiB..1MiB:x4")``.  ``only`` narrows the candidates (a name or a list)."""
    files = [files] if isinstance(files, str) else list(files)
    argv = files + _axes(axes) + _options(profile, mapping, config, only=only) + ["--json"]
    return BestResult("best", argv, json.loads(_run("best", argv)), "points")


def explain(file: str, algorithm: str, profile=None, *, mapping=None, config=None, **point: Any) -> Result:
    """An algorithm's derivation, or with a point (``P=16, m="1KiB"``) and a ``mapping`` a
    schedule stage by stage (``data["stages"]``; ``to_pandas()`` one row per stage)."""
    argv = [file, algorithm] + _axes(point) + _options(profile, mapping, config)
    if point:
        argv.append("--json")
        return Result("explain", argv, json.loads(_run("explain", argv)), "stages")
    text = _run("explain", argv)
    r = Result("explain", argv, {"text": text})
    r._text = text
    return r


def show(file: str, algorithm: Optional[str] = None) -> Result:
    """An algorithm's (or every algorithm's) cost in the papers' notation: ``data["algorithms"]``
    with ``text``, ``latex``, ``signature``; ``to_pandas()`` one row per algorithm."""
    argv = [file] + ([algorithm] if algorithm else []) + ["--json"]
    r = Result("show", argv, json.loads(_run("show", argv)), "algorithms")
    return r


class TuneResult(Result):
    """:func:`tune`'s decision tables (``data["tables"]``: per library and collective, a cell per
    (P, m) with the chosen algorithm, its cost, the runner-up, the margin and the library's
    default); ``to_pandas()`` one row per cell."""

    def rows(self) -> list:
        out = []
        for t in self.data.get("tables", []):
            for c in t["cells"]:
                chosen, runner, default = c.get("chosen") or {}, c.get("runner_up") or {}, c.get("default") or {}
                out.append({"library": t["library"], "collective": t["collective"], "P": c["P"], "m": c["m"],
                            "algorithm": chosen.get("algorithm"), "params": chosen.get("params"),
                            "seconds": chosen.get("cost_s"), "runner_up": runner.get("algorithm"),
                            "margin": c.get("margin"), "default": default.get("algorithm"), "gain": c.get("gain"),
                            "note": c.get("note")})
        return out

    def winner(self, library: str, collective: str, P: int, m: float):
        """(algorithm, its parameters, predicted seconds) the table chooses at (P, m), or None."""
        for r in self.rows():
            if (r["library"], r["collective"], r["P"], float(r["m"])) == (library, collective, int(P), float(m)):
                return (r["algorithm"], r["params"], r["seconds"]) if r["algorithm"] else None
        return None


def tune(collective: Union[str, Iterable[str]], profile=None, *, P, m, mapping=None, library=None, model=None,
         only=None, min_gain=None) -> TuneResult:
    """What ``tlop tune`` decides — per MPI library, which of its own algorithms to run for
    ``collective`` at each (P, m) — as its ``--json -`` tables (no library files written).
    ``P`` and ``m`` are lists or range text (``"2..64:x2"``)."""
    collectives = [collective] if isinstance(collective, str) else list(collective)
    argv = [f"P={_value_text(P)}", f"m={_value_text(m)}"] + _options(
        profile, mapping, None, collective=",".join(collectives), library=library, model=model, only=only,
        min_gain=min_gain) + ["--json", "-"]
    return TuneResult("tune", argv, json.loads(_run("tune", argv)))
