"""Reading and validating the profile format, version 1 (docs/profiles.rst is its reference).

What it does: turns JSON text (:func:`parse_json`) or an already-decoded object
(:func:`validate`) into a :class:`ValidatedProfile` of plain Python and numpy values, checking
every field on the way.  The first problem found raises :class:`ProfileError` naming the file
and the exact field, e.g.::

    profile.json: tables.L.shm.values[3]: expected 8 numbers (one per tau), got 7
    profile.json: channels.ib.transmission: unknown kind 'rdmaa'; expected one of shm, tcp, rdma

A JSON syntax error (or a duplicated key) is reported as ``file:line:col``, and so is JSON
nested deeper than :data:`MAX_DEPTH` (checked by a linear scan before decoding, so neither the
decoder nor the checker can run out of stack).  An integer that no double can hold (10³⁰⁹ or
more, or more digits than Python converts) is kept as a marker by the decoder and reported with
its field; a profile's name may not hold control characters.  File names in messages are shown
with control characters escaped (:func:`tlop.runtime.text.printable`).

What it does not do: build :class:`tlop.runtime.profile.Profile` objects, interpolate, or
write files; it never mutates its input.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from tlop.runtime.diagnostics import Diagnostic, Source, Span

from tlop.runtime.errors import ProfileError
from tlop.runtime.interpolation import Interpolation, _CHOICES
from tlop.runtime.text import has_control, printable

__all__ = [
    "FORMAT_VERSION", "TRANSMISSION_KINDS", "PATH_KIND", "ANY_CHANNEL", "ValidatedProfile", "RawTable",
    "parse_json", "validate", "field_path", "is_channel_name", "MAX_DEPTH",
]

#: the only version of the format this module reads
FORMAT_VERSION = 1
#: how a channel's transmission decomposes into transfers (``via`` in a .tlop file)
TRANSMISSION_KINDS = ("shm", "tcp", "rdma")
#: the table/scalar key of an entry not indexed by channel
ANY_CHANNEL = "*"

_TOP_KEYS = ("tlop_profile", "name", "metadata", "interpolation", "channels", "bind", "tables",
             "scalars", "fits", "hloggp")
_CHANNEL_KEYS = ("transmission", "path", "description")
#: the kind a path channel reports (a channel ``{"path": true}``: a data path of the postal and
#: max-rate models, 003, that is not a τ-Lop transmission channel; no transmission decomposes on it)
PATH_KIND = "path"
_TABLE_KEYS = ("m", "tau", "values")
_METADATA_STRINGS = ("machine", "description", "date", "method", "source", "notes")
_MPI_KEYS = ("library", "version")
#: the machine a profile describes, when known: evaluations over a mapping that needs more nodes,
#: or more ranks on one node than it has cores, are warned about (:mod:`tlop.runtime.machine`)
_METADATA_COUNTS = ("nodes", "cores_per_node")
#: deepest nesting of JSON arrays and objects a profile may have (real ones nest about 6 deep)
MAX_DEPTH = 200
#: an integer literal with more digits than this cannot be a finite double
_MAX_INT_DIGITS = 309
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_QUALIFIED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")


def is_channel_name(name: Any) -> bool:
    """Channel names (model or profile) are identifiers."""
    return isinstance(name, str) and bool(_IDENT.match(name))


@dataclass(frozen=True)
class RawTable:
    """One validated table: float64 grids and values (read-only arrays)."""
    m: np.ndarray
    tau: Optional[np.ndarray]
    values: np.ndarray


@dataclass
class ValidatedProfile:
    """Every field of a valid profile, with defaults filled in."""
    name: str
    metadata: dict
    interpolation: Interpolation
    channels: dict            # name -> (transmission kind or PATH_KIND, description)
    bind: dict                # model channel -> profile channel
    tables: dict              # table name -> {channel key -> RawTable}
    scalars: dict             # scalar name -> {channel key -> float}
    fits: dict = field(default_factory=dict)
    hloggp: Any = None        # HLogGP parameters per pair of node types (tlop.runtime.hloggp), or None


def field_path(path) -> str:
    """``("tables", "L", "shm", "values", 3)`` → ``tables.L.shm.values[3]``; keys that are not
    identifiers (other than ``*``) are quoted: ``tables["loggp.L"]``."""
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        elif _IDENT.match(p) or p == ANY_CHANNEL:
            out += f".{p}" if out else p
        else:
            out += f"[{json.dumps(p)}]"
    return out


class _DupDict(dict):
    """A JSON object that remembers its duplicated keys (checked during validation)."""
    duplicates: tuple = ()


def _pairs_hook(pairs):
    d = _DupDict()
    dups = []
    for k, v in pairs:
        if k in d:
            dups.append(k)
        d[k] = v
    if dups:
        d.duplicates = tuple(dups)
    return d


class HugeInt:
    """An integer literal too large for a double (and maybe for Python's int conversion), as
    the decoder leaves it: the validator reports it with its field."""

    __slots__ = ("digits",)

    def __init__(self, digits: str):
        self.digits = digits

    def __repr__(self) -> str:
        return f"<integer of {len(self.digits.lstrip('-'))} digits>"


def _parse_int(digits: str):
    return HugeInt(digits) if len(digits.lstrip("-")) > _MAX_INT_DIGITS else int(digits)


_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _too_deep(text: str) -> Optional[int]:
    """The offset of the first ``[`` or ``{`` nested deeper than :data:`MAX_DEPTH`, or None
    (brackets inside strings do not count)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    depth = 0
    for tok in _TOKENS.finditer(text):
        c = tok.group()
        if c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return tok.start()
        elif c in "]}":
            depth -= 1
    return None


def _span_at(src: Source, offset: int) -> Span:
    line = src.text.count("\n", 0, offset) + 1
    col = offset - (src.text.rfind("\n", 0, offset) + 1) + 1
    return Span(src, line, col, line, col)


def parse_json(text: str, source: str) -> Any:
    """Decode JSON text; a syntax error, or nesting deeper than :data:`MAX_DEPTH`, raises
    ProfileError at ``source:line:col``."""
    src = Source(source, text)
    deep = _too_deep(text)
    if deep is not None:
        raise ProfileError(Diagnostic(f"JSON nested more than {MAX_DEPTH} levels deep; a profile "
                                      f"nests a few levels", _span_at(src, deep)))
    try:
        return json.loads(text, object_pairs_hook=_pairs_hook, parse_int=_parse_int)
    except json.JSONDecodeError as err:
        span = Span(src, err.lineno, err.colno, err.lineno, err.colno)
        raise ProfileError(Diagnostic(f"invalid JSON: {err.msg}", span)) from None
    except (RecursionError, MemoryError) as err:     # not expected after the depth scan
        raise ProfileError(f"{printable(source)}: cannot decode the JSON ({type(err).__name__})") from None


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _describe(v) -> str:
    if isinstance(v, HugeInt):
        return f"an integer of {len(v.digits.lstrip('-'))} digits"
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10 ** _MAX_INT_DIGITS:
        return f"an integer of {int(math.log10(abs(v))) + 1} digits"
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "a list" if v else "an empty list"
    if isinstance(v, str):
        return repr(v) if len(v) <= 60 else repr(v[:57]) + "…"
    return str(v)


class _Checker:
    """Walks a decoded profile, raising at the first bad field."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, path, message: str):
        where = field_path(path)
        if len(where) > 200:
            where = where[:200] + "…"
        src = printable(self.source)
        prefix = f"{src}: {where}: " if where else f"{src}: "
        raise ProfileError(prefix + message)

    # ------------------------------------------------------------------ primitives
    def obj(self, v, path, keys=None, required=()) -> dict:
        if not isinstance(v, dict):
            self.fail(path, f"expected an object, got {_describe(v)}")
        dups = getattr(v, "duplicates", ())
        if dups:
            self.fail(list(path) + [dups[0]], "duplicate key")
        if keys is not None:
            for k in v:
                if k not in keys:
                    self.fail(list(path) + [k], f"unknown key; expected one of {', '.join(keys)}")
        for k in required:
            if k not in v:
                self.fail(path, f"missing required key '{k}'")
        return v

    def string(self, v, path, nonempty=False) -> str:
        if not isinstance(v, str):
            self.fail(path, f"expected a string, got {_describe(v)}")
        if nonempty and not v.strip():
            self.fail(path, "must not be empty")
        return v

    def number(self, v, path) -> float:
        if _is_number(v):
            try:
                x = float(v)
            except OverflowError:           # an int beyond the largest double
                x = math.inf
            if math.isfinite(x):
                return x
        self.fail(path, f"expected a finite number, got {_describe(v)}")

    def number_list(self, v, path, what: str, expected: Optional[int] = None) -> list:
        if not isinstance(v, list):
            self.fail(path, f"expected a list of numbers, got {_describe(v)}")
        if expected is not None and len(v) != expected:
            self.fail(path, f"expected {expected} numbers ({what}), got {len(v)}")
        return [self.number(x, list(path) + [i]) for i, x in enumerate(v)]

    def grid(self, v, path, axis: str, minimum: float) -> np.ndarray:
        if not isinstance(v, list) or not v:
            self.fail(path, f"expected a non-empty list of numbers, got {_describe(v)}")
        xs = self.number_list(v, path, "grid points")
        for i, x in enumerate(xs):
            if x < minimum:
                what = "sizes" if axis == "m" else "concurrencies"
                self.fail(list(path) + [i], f"{what} must be >= {minimum:g}, got {x:g}")
            if i and x <= xs[i - 1]:
                self.fail(list(path) + [i], f"grid must be strictly increasing: {x:g} after {xs[i - 1]:g}")
        return _frozen(np.array(xs, dtype=np.float64))

    # ------------------------------------------------------------------ sections
    def profile(self, d) -> ValidatedProfile:
        if not isinstance(d, dict):
            self.fail((), f"expected a JSON object at the top level, got {_describe(d)}")
        if "tlop_profile" not in d:
            self.fail(("tlop_profile",), "missing; a tlop profile starts with \"tlop_profile\": 1")
        self.obj(d, (), _TOP_KEYS)
        version = d["tlop_profile"]
        if not _is_number(version) or version != FORMAT_VERSION:
            self.fail(("tlop_profile",),
                      f"unsupported version {_describe(version)}; this tlop reads version {FORMAT_VERSION}")
        if "name" not in d:
            self.fail(("name",), "missing; every profile has a name")
        name = self.string(d["name"], ("name",), nonempty=True)
        if has_control(name):
            self.fail(("name",), f"must not contain control characters, got '{printable(name)}'")
        metadata = self.metadata(d.get("metadata", {}))
        interpolation = self.interpolation(d.get("interpolation", {}))
        channels = self.channels(d.get("channels", {}))
        bind = self.bind(d.get("bind", {}), channels)
        tables = self.tables(d.get("tables", {}), channels)
        scalars = self.scalars(d.get("scalars", {}), channels)
        fits = self.obj(d.get("fits", {}), ("fits",))
        hloggp = None
        if "hloggp" in d:
            from tlop.runtime.hloggp import check_section

            hloggp = check_section(self, d["hloggp"])
        return ValidatedProfile(name, self.plain(metadata, ["metadata"]), interpolation, channels,
                                bind, tables, scalars, self.plain(fits, ["fits"]), hloggp)

    def plain(self, v, path: list):
        """Deep copy of free-form JSON (metadata, fits) into plain dicts and lists, refusing
        what JSON text cannot hold or the loader cannot walk: integers too large for a double,
        non-string keys, nesting deeper than :data:`MAX_DEPTH`."""
        if len(path) > MAX_DEPTH:
            self.fail(path, f"nested more than {MAX_DEPTH} levels deep")
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                if not isinstance(k, str):
                    self.fail(path, f"keys must be strings, got {_describe(k)}")
                out[k] = self.plain(x, path + [k])
            return out
        if isinstance(v, (list, tuple)):
            return [self.plain(x, path + [i]) for i, x in enumerate(v)]
        if isinstance(v, HugeInt) or (isinstance(v, int) and not isinstance(v, bool)
                                      and abs(v) >= 10 ** _MAX_INT_DIGITS):
            self.fail(path, f"{_describe(v)} is too large for a profile (numbers must fit a double)")
        if isinstance(v, float) and not math.isfinite(v):
            self.fail(path, f"{_describe(v)} is not a JSON number")
        if v is None or isinstance(v, (str, bool, int, float)):
            return v
        self.fail(path, f"not a JSON value: {type(v).__name__}")

    def metadata(self, v) -> dict:
        path = ("metadata",)
        self.obj(v, path)
        for k in _METADATA_STRINGS:
            if k in v:
                self.string(v[k], path + (k,))
        if "date" in v:
            try:
                if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", v["date"]):
                    raise ValueError
                datetime.date.fromisoformat(v["date"])
            except ValueError:
                self.fail(path + ("date",), f"expected a date YYYY-MM-DD, got {v['date']!r}")
        for k in _METADATA_COUNTS:  # the machine's size (out-of-machine warnings)
            if k in v and not (type(v[k]) is int and v[k] >= 1):
                self.fail(path + (k,), f"expected a whole number >= 1, got {_describe(v[k])}")
        if "mpi" in v:
            self.obj(v["mpi"], path + ("mpi",), _MPI_KEYS)
            for k in _MPI_KEYS:
                if k in v["mpi"]:
                    self.string(v["mpi"][k], path + ("mpi", k))
        return v

    def interpolation(self, v) -> Interpolation:
        path = ("interpolation",)
        self.obj(v, path, Interpolation.keys())
        for k, choices in _CHOICES.items():
            if k in v and v[k] not in choices:
                self.fail(path + (k,), f"unknown rule {_describe(v[k])}; expected one of {', '.join(choices)}")
        if "nonnegative" in v and not isinstance(v["nonnegative"], bool):
            self.fail(path + ("nonnegative",), f"expected true or false, got {_describe(v['nonnegative'])}")
        return Interpolation(**v)

    def channels(self, v) -> dict:
        self.obj(v, ("channels",))
        out = {}
        for name, ch in v.items():
            path = ("channels", name)
            if not is_channel_name(name):
                self.fail(path, "a channel name must be an identifier (letters, digits, _)")
            self.obj(ch, path, _CHANNEL_KEYS)
            if "path" in ch:
                if "transmission" in ch:
                    self.fail(path, "a channel has either 'transmission' (a τ-Lop channel) or "
                                    "'path': true (a postal/max-rate path), not both")
                if ch["path"] is not True:
                    self.fail(path + ("path",), f"expected true, got {_describe(ch['path'])} (a channel "
                                                f"that is not a path has a 'transmission' instead)")
                desc = self.string(ch.get("description", ""), path + ("description",))
                out[name] = (PATH_KIND, desc)
                continue
            if "transmission" not in ch:
                self.fail(path, "missing required key 'transmission' (or 'path': true for a "
                                "postal/max-rate path that is not a τ-Lop channel)")
            kind = ch["transmission"]
            if kind not in TRANSMISSION_KINDS:
                self.fail(path + ("transmission",),
                          f"unknown kind {_describe(kind)}; expected one of {', '.join(TRANSMISSION_KINDS)}")
            desc = self.string(ch.get("description", ""), path + ("description",))
            out[name] = (kind, desc)
        return out

    def bind(self, v, channels) -> dict:
        self.obj(v, ("bind",))
        for model_ch, target in v.items():
            path = ("bind", model_ch)
            if not is_channel_name(model_ch):
                self.fail(path, "a model channel name must be an identifier (letters, digits, _)")
            self.string(target, path)
            if target not in channels:
                self.fail(path, f"unknown profile channel {target!r}; channels: {_names(channels)}")
        return dict(v)

    def channel_key(self, key, path, channels):
        if key != ANY_CHANNEL and key not in channels:
            self.fail(path, f"no channel {key!r} in channels ({_names(channels)}); "
                            f"use \"*\" for an entry not indexed by channel")

    def entry_name(self, name, path):
        if not isinstance(name, str) or not _QUALIFIED.match(name):
            self.fail(path, "a table or parameter name must be an identifier, optionally "
                            "qualified by a model name (e.g. loggp.L)")

    def tables(self, v, channels) -> dict:
        self.obj(v, ("tables",))
        out = {}
        for name, per_channel in v.items():
            self.entry_name(name, ("tables", name))
            self.obj(per_channel, ("tables", name))
            if not per_channel:
                self.fail(("tables", name), "a table needs at least one channel entry")
            out[name] = {}
            for key, t in per_channel.items():
                path = ("tables", name, key)
                self.channel_key(key, path, channels)
                out[name][key] = self.table(t, path)
        return out

    def table(self, t, path) -> RawTable:
        self.obj(t, path, _TABLE_KEYS, required=("m", "values"))
        m = self.grid(t["m"], path + ("m",), "m", 0.0)
        values = t["values"]
        vpath = path + ("values",)
        if "tau" not in t:
            row = self.number_list(values, vpath, "one per m", expected=len(m))
            self.nonnegative(row, vpath)
            return RawTable(m, None, _frozen(np.array(row, dtype=np.float64)))
        tau = self.grid(t["tau"], path + ("tau",), "tau", 1.0)
        if not isinstance(values, list):
            self.fail(vpath, f"expected a list of rows, got {_describe(values)}")
        if len(values) != len(m):
            self.fail(vpath, f"expected {len(m)} rows (one per m), got {len(values)}")
        rows = [self.number_list(r, vpath + (i,), "one per tau", expected=len(tau))
                for i, r in enumerate(values)]
        for i, r in enumerate(rows):
            self.nonnegative(r, vpath + (i,))
        return RawTable(m, tau, _frozen(np.array(rows, dtype=np.float64).reshape(len(m), len(tau))))

    def nonnegative(self, xs, path):
        """Table values are measured times (or rates): a negative one is a broken profile."""
        for i, x in enumerate(xs):
            if x < 0:
                self.fail(list(path) + [i], f"table values cannot be negative, got {x:g}")

    def scalars(self, v, channels) -> dict:
        self.obj(v, ("scalars",))
        out = {}
        for name, per_channel in v.items():
            self.entry_name(name, ("scalars", name))
            self.obj(per_channel, ("scalars", name))
            if not per_channel:
                self.fail(("scalars", name), "a parameter needs at least one channel entry")
            out[name] = {}
            for key, x in per_channel.items():
                path = ("scalars", name, key)
                self.channel_key(key, path, channels)
                out[name][key] = self.number(x, path)
        return out


def _names(channels) -> str:
    return ", ".join(channels) if channels else "(none)"


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _surrogate_path(v, path: list, depth: int = 0):
    """The path of the first string (or key) of ``v`` holding a lone surrogate (JSON lets
    ``"\\ud800"`` through; no text can be printed or encoded with one), else None."""
    if depth > MAX_DEPTH:
        return None  # the checker reports the depth
    if isinstance(v, str):
        return path if _SURROGATE.search(v) else None
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(k, str) and _SURROGATE.search(k):
                return path + [printable(k)]
            got = _surrogate_path(x, path + [k], depth + 1)
            if got is not None:
                return got
    elif isinstance(v, list):
        for i, x in enumerate(v):
            got = _surrogate_path(x, path + [i], depth + 1)
            if got is not None:
                return got
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def validate(data: Any, source: str) -> ValidatedProfile:
    """Validate a decoded profile; ``source`` names it in error messages."""
    checker = _Checker(source)
    bad = _surrogate_path(data, [])
    if bad is not None:
        checker.fail(bad, "a string holds a lone surrogate (a \\uD800-\\uDFFF escape without its pair): "
                          "not Unicode text")
    return checker.profile(data)
