"""Platform profiles: measured tables and parameters of one machine, and how to read them.

What it does: :class:`Profile` is a loaded, validated profile (format version 1, see
docs/profiles.rst): its channels and their transmission kinds, the binding of model channels
(``shm``, ``net`` in a ``.tlop`` platform) to profile channels, its tables (:class:`TableData`,
read through :mod:`tlop.runtime.interpolation`) and scalar parameters, metadata and fits.
:func:`load_profile` reads a bundled profile by name or any ``.json`` file by path (an empty
name is an error, not the default; a file above :data:`MAX_PROFILE_BYTES` is refused unread);
:func:`save_profile` writes one atomically; :func:`profile_from_dict` builds one from decoded
JSON (the only way to build one, so every profile is validated).

What it does not do: measure (``tlop.runtime.measure``), convert libtaulop files
(:mod:`tlop.runtime.convert_taulop`), or know what a model does with a table.  A profile is
immutable; ``with_bindings``, ``with_interpolation``, ``with_reduce_op``, ``with_float32`` and
``with_libtaulop_compat`` return modified copies.

Reductions: a table ``gamma`` (over m) is the cost of one reduction operation; a profile may
also hold one table ``gamma_<op>`` per operation, and ``with_reduce_op(op)`` makes ``gamma``
read ``gamma_<op>`` (``--reduce-op`` on the command line).

Channel lookup rules: a table or scalar entry is found under the profile channel asked for, or
else under ``"*"`` (an entry not indexed by channel applies to every channel); asking with
channel ``None`` finds only ``"*"`` entries.
"""

from __future__ import annotations

import copy
import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Union

import numpy as np

from tlop.runtime import jsonfmt
from tlop.runtime.errors import OutOfGridError, OutOfGridWarning, ProfileError
from tlop.runtime.interpolation import Interpolation, first_outside, lookup_1d, lookup_2d
from tlop.runtime.text import printable
from tlop.runtime.profile_schema import (ANY_CHANNEL, FORMAT_VERSION, PATH_KIND, RawTable, ValidatedProfile,
                             is_channel_name, parse_json, validate)

__all__ = ["as_profile", "models_of", "default_model", 
    "Profile", "TableData", "ChannelInfo", "Interpolation", "ProfileError", "OutOfGridError",
    "OutOfGridWarning", "load_profile", "save_profile", "default_profile", "bundled_profiles",
    "profile_from_dict", "DEFAULT_PROFILE", "MAX_PROFILE_BYTES", "GAMMA_TABLE", "LIBTAULOP_INTERPOLATION",
]

#: the profile :func:`default_profile` loads
DEFAULT_PROFILE = "metropolis"
#: the largest profile file :func:`load_profile` reads (measured profiles are well under 1 MiB)
MAX_PROFILE_BYTES = 64 << 20
#: the table a model's reduction cost reads, and the prefix of the per-operation tables
GAMMA_TABLE = "gamma"
#: the interpolation rules of libtaulop's table reading (libtaulop-semantics.md §2.2)
LIBTAULOP_INTERPOLATION = {"m_below": "clamp", "m_beyond": "chunks", "tau_beyond": "clamp"}


@dataclass(frozen=True)
class ChannelInfo:
    """A profile channel: its name, its transmission kind (shm, tcp, rdma; ``"path"`` for a
    postal/max-rate path, :attr:`is_path`) and a description."""
    name: str
    transmission: str
    description: str = ""

    @property
    def is_path(self) -> bool:
        """A data path of the postal and max-rate models (003), declared ``{"path": true}``: its
        parameters are read like any channel's, but no τ-Lop transmission decomposes on it."""
        return self.transmission == PATH_KIND


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 2**53 else f"{x:.6g}"


class TableData:
    """One measured table of a profile on one channel (``channel`` None for a ``"*"`` table).

    ``m`` and ``tau`` are the grids (``tau`` None for a table of m only) and ``values`` the
    measured values (``values[i]`` or ``values[i][j]``), all read-only float64 arrays; ``policy``
    is the profile's :class:`Interpolation`."""

    __slots__ = ("name", "channel", "m", "tau", "values", "policy", "_warned")

    def __init__(self, name: str, channel: Optional[str], raw: RawTable, policy: Interpolation):
        self.name = name
        self.channel = channel
        self.m = raw.m
        self.tau = raw.tau
        self.values = raw.values
        self.policy = policy
        self._warned = False

    @property
    def label(self) -> str:
        return f"{self.name}[{self.channel}]" if self.channel is not None else self.name

    def __repr__(self) -> str:
        shape = f"{len(self.m)}x{len(self.tau)}" if self.tau is not None else f"{len(self.m)}"
        return f"<TableData {self.label} {shape}>"

    def lookup(self, m, tau=None) -> np.ndarray:
        """The table at ``m`` (and ``tau`` for a table over τ), vectorised with numpy
        broadcasting; see :mod:`tlop.runtime.interpolation` for the exact algorithm.  Points
        outside the measured grid follow the policy's ``out_of_grid`` mode."""
        if self.tau is None:
            if tau is not None:
                raise ProfileError(f"table {self.label} is measured over m only; it takes no tau argument")
            self._check_grid(m, None)
            return lookup_1d(self.m, self.values, m, self.policy)
        if tau is None:
            raise ProfileError(
                f"table {self.label} is measured over m and tau ({_fmt(self.tau[0])} .. "
                f"{_fmt(self.tau[-1])}); a tau argument is required")
        self._check_grid(m, tau)
        return lookup_2d(self.m, self.tau, self.values, m, tau, self.policy)

    def _check_grid(self, m, tau) -> None:
        mode = self.policy.out_of_grid
        if mode == "allow" or (mode == "warn" and self._warned):
            return
        problem = None
        bad = first_outside(self.m, m)
        if bad is not None:
            problem = (f"m = {_fmt(bad)} B is outside the measured grid "
                       f"{_fmt(self.m[0])} .. {_fmt(self.m[-1])} B")
        elif tau is not None:
            bad = first_outside(self.tau, tau)
            if bad is not None:
                problem = (f"tau = {_fmt(bad)} is outside the measured columns "
                           f"{_fmt(self.tau[0])} .. {_fmt(self.tau[-1])}")
        if problem is None:
            return
        where = f"table '{self.name}'" + (f" on channel '{self.channel}'" if self.channel else "")
        message = f"{where}: {problem}"
        if mode == "error":
            raise OutOfGridError(message)
        self._warned = True
        warnings.warn(OutOfGridWarning(message + " (extrapolated; warned once per table and evaluation; "
                                             "--out-of-grid allow, or out_of_grid='allow', silences it)"),
                      stacklevel=3)


class Profile:
    """A validated platform profile.  Build one with :func:`load_profile` or
    :func:`profile_from_dict`."""

    def __init__(self, validated: ValidatedProfile, path: Optional[Path] = None):
        v = validated
        self.name: str = v.name
        self.metadata: dict = v.metadata
        self.path: Optional[Path] = path
        self.fits: dict = v.fits
        #: HLogGP parameters per pair of node types (:mod:`tlop.runtime.hloggp`), or None
        self.hloggp = v.hloggp
        self.interpolation: Interpolation = v.interpolation
        self.channels: dict = {n: ChannelInfo(n, kind, desc) for n, (kind, desc) in v.channels.items()}
        self.bindings: dict = dict(v.bind)
        self._raw = v.tables
        self._scalars: dict = v.scalars
        self._tables = self._build_tables(self.interpolation)
        #: the operation ``gamma`` was switched to by :meth:`with_reduce_op` (None: as stored)
        self.reduce_op: Optional[str] = None

    def _build_tables(self, policy: Interpolation) -> dict:
        return {name: {key: TableData(name, None if key == ANY_CHANNEL else key, raw, policy)
                       for key, raw in per.items()}
                for name, per in self._raw.items()}

    def __repr__(self) -> str:
        return f"<Profile {self.name!r}: channels {list(self.channels)}, tables {self.table_names()}>"

    def new_evaluation(self) -> None:
        """Start a new evaluation: each table warns again about its first lookup outside the
        measured grid (``out_of_grid = "warn"``, the default: once per table and evaluation)."""
        for per in self._tables.values():
            for t in per.values():
                t._warned = False

    # ------------------------------------------------------------------ channels
    def resolve_channel(self, model_channel: str) -> Optional[str]:
        """The profile channel a model channel maps to: its binding, else itself when it is a
        profile channel, else None."""
        if model_channel in self.bindings:
            return self.bindings[model_channel]
        return model_channel if model_channel in self.channels else None

    def transmission_kind(self, channel: str) -> str:
        """The transmission kind (shm, tcp, rdma) of a profile channel; ``"path"`` for a path
        channel (on which no τ-Lop transmission is defined)."""
        info = self.channels.get(channel)
        if info is None:
            raise ProfileError(f"profile '{self.name}' has no channel '{channel}'; "
                               f"channels: {', '.join(self.channels) or '(none)'}")
        return info.transmission

    # ------------------------------------------------------------------ tables and scalars
    @staticmethod
    def _entry(per: Optional[dict], channel: Optional[str]):
        if per is None:
            return None
        if channel is not None and channel in per:
            return per[channel]
        return per.get(ANY_CHANNEL)

    def table_names(self) -> list:
        return sorted(self._tables)

    def scalar_names(self) -> list:
        return sorted(self._scalars)

    def has_table(self, name: str, channel: Optional[str] = None) -> bool:
        return self._entry(self._tables.get(name), channel) is not None

    def table(self, name: str, channel: Optional[str] = None) -> TableData:
        """Table ``name`` on profile channel ``channel`` (or its ``"*"`` entry)."""
        t = self._entry(self._tables.get(name), channel)
        if t is None:
            raise ProfileError(self._missing("table", name, channel, self._tables))
        return t

    def has_scalar(self, name: str, channel: Optional[str] = None) -> bool:
        return self._entry(self._scalars.get(name), channel) is not None

    def scalar(self, name: str, channel: Optional[str] = None) -> float:
        """Scalar parameter ``name`` on profile channel ``channel`` (or its ``"*"`` entry)."""
        x = self._entry(self._scalars.get(name), channel)
        if x is None:
            raise ProfileError(self._missing("parameter", name, channel, self._scalars))
        return x

    def _missing(self, what, name, channel, entries) -> str:
        if name not in entries:
            have = ", ".join(sorted(entries)) or "(none)"
            return f"profile '{self.name}' has no {what} '{name}'; it has: {have}"
        have = ", ".join(entries[name])
        on = f"channel '{channel}'" if channel is not None else "\"*\" (no channel)"
        return f"profile '{self.name}' has no {what} '{name}' for {on}; it has entries for: {have}"

    # ------------------------------------------------------------------ modified copies
    def with_bindings(self, bindings: Mapping[str, str]) -> "Profile":
        """A copy with ``bindings`` (model channel -> profile channel) added or replaced,
        e.g. ``with_bindings({"net": "tcp"})``."""
        new = dict(self.bindings)
        for model_ch, target in bindings.items():
            if not is_channel_name(model_ch):
                raise ProfileError(f"bind {model_ch}={target}: '{model_ch}' is not a channel name")
            if target not in self.channels:
                raise ProfileError(f"bind {model_ch}={target}: profile '{self.name}' has no channel "
                                   f"'{target}'; channels: {', '.join(self.channels) or '(none)'}")
            new[model_ch] = target
        p = copy.copy(self)
        p.bindings = new
        return p

    def with_interpolation(self, **rules) -> "Profile":
        """A copy read under a modified interpolation policy, e.g.
        ``with_interpolation(out_of_grid="error", tau_beyond="clamp")``."""
        unknown = [k for k in rules if k not in Interpolation.keys()]
        if unknown:
            raise ProfileError(f"interpolation.{unknown[0]}: unknown rule name; expected one of "
                               f"{', '.join(Interpolation.keys())}")
        policy = Interpolation(**{**self.interpolation.to_dict(), **rules})
        p = copy.copy(self)
        p.interpolation = policy
        p._tables = p._build_tables(policy)
        return p

    def reduce_ops(self) -> list:
        """The reduction operations the profile has a table for: ``op`` for each
        ``gamma_<op>`` table, in file order."""
        prefix = GAMMA_TABLE + "_"
        return [n[len(prefix):] for n in self._raw if n.startswith(prefix) and len(n) > len(prefix)]

    def with_reduce_op(self, op: str) -> "Profile":
        """A copy whose table ``gamma`` is the table ``gamma_<op>`` (``op`` case-insensitive),
        e.g. ``with_reduce_op("max")``; saving the copy writes those values under ``gamma``."""
        ops = self.reduce_ops()
        key = str(op).strip().lower()
        if key not in ops:
            if not ops:
                raise ProfileError(f"profile '{self.name}' has no per-operation reduction tables "
                                   f"({GAMMA_TABLE}_<op>), so reduction operation '{key}' cannot be chosen")
            raise ProfileError(f"profile '{self.name}' has no reduction operation '{key}' (a table "
                               f"{GAMMA_TABLE}_{key}); it has: {', '.join(ops)}")
        p = copy.copy(self)
        p._raw = {**self._raw, GAMMA_TABLE: self._raw[f"{GAMMA_TABLE}_{key}"]}
        p._tables = p._build_tables(p.interpolation)
        p.reduce_op = key
        return p

    def with_float32(self) -> "Profile":
        """A copy with every table value, grid point and scalar rounded to the nearest IEEE
        float32 (and widened back): how libtaulop reads its files (``stof``)."""
        def rounded(a: np.ndarray, what: str) -> np.ndarray:
            with np.errstate(over="ignore"):
                r = np.asarray(a, dtype=np.float32).astype(np.float64)
            if not np.all(np.isfinite(r)):
                raise ProfileError(f"profile '{self.name}': {what} does not fit in a float32")
            r.flags.writeable = False
            return r

        raw = {}
        for name, per in self._raw.items():
            raw[name] = {}
            for key, t in per.items():
                where = f"table {name}[{key}]"
                m = rounded(t.m, f"a size of {where}")
                tau = None if t.tau is None else rounded(t.tau, f"a tau of {where}")
                for axis, g in (("m", m), ("tau", tau)):
                    if g is not None and np.any(np.diff(g) <= 0):
                        raise ProfileError(f"profile '{self.name}': {where}: two {axis} grid points "
                                           f"round to the same float32")
                raw[name][key] = RawTable(m, tau, rounded(t.values, f"a value of {where}"))
        scalars = {}
        for name, per in self._scalars.items():
            scalars[name] = {k: float(rounded(np.array([x]), f"parameter {name}[{k}]")[0])
                             for k, x in per.items()}
        p = copy.copy(self)
        p._raw, p._scalars = raw, scalars
        p._tables = p._build_tables(p.interpolation)
        return p

    def with_libtaulop_compat(self) -> "Profile":
        """A copy read as libtaulop reads its tables (``--libtaulop-compat``): m below the grid
        clamps, m past it is charged in whole largest-size chunks plus the remainder, τ past the
        largest column clamps (:data:`LIBTAULOP_INTERPOLATION`), and every number is rounded to
        float32 (:meth:`with_float32`)."""
        return self.with_interpolation(**LIBTAULOP_INTERPOLATION).with_float32()

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict:
        """The profile as format-version-1 JSON data (plain dicts, lists, numbers)."""
        tables = {}
        for name, per in self._raw.items():
            tables[name] = {}
            for key, raw in per.items():
                t = {"m": _grid_list(raw.m)}
                if raw.tau is not None:
                    t["tau"] = _grid_list(raw.tau)
                t["values"] = raw.values.tolist()
                tables[name][key] = t
        out = {
            "tlop_profile": FORMAT_VERSION,
            "name": self.name,
            "metadata": copy.deepcopy(self.metadata),
            "interpolation": self.interpolation.to_dict(),
            "channels": {n: ({"path": True, "description": c.description} if c.is_path else
                             {"transmission": c.transmission, "description": c.description})
                         for n, c in self.channels.items()},
            "bind": dict(self.bindings),
            "tables": tables,
            "scalars": {n: dict(per) for n, per in self._scalars.items()},
            "fits": copy.deepcopy(self.fits),
        }
        if self.hloggp is not None:
            out["hloggp"] = self.hloggp.to_dict()
        return out

    def fingerprint(self) -> str:
        """A sha256 hex digest of everything that affects a cost (channels, bindings,
        interpolation, tables, scalars; not metadata or fits): a cache key for compiled
        evaluators.  Equal digests mean equal prices."""
        d = self.to_dict()
        for k in ("name", "metadata", "fits"):
            d.pop(k)
        import hashlib

        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()

    def to_json(self) -> str:
        """The profile as JSON text (what :func:`save_profile` writes)."""
        return jsonfmt.dumps(self.to_dict())


def _grid_list(a: np.ndarray) -> list:
    return [int(x) if float(x).is_integer() and abs(x) < 2**53 else float(x) for x in a]


def profile_from_dict(data, source: str = "<profile>", path: Optional[Path] = None) -> Profile:
    """Validate decoded profile JSON and build a :class:`Profile`; ``source`` names it in
    error messages."""
    return Profile(validate(data, source), path)


def _bundled_dir() -> Path:
    import tlop.stdlib

    where = getattr(tlop.stdlib, "__file__", None)
    if where:  # a package on disk: its directory (importlib.resources would import tempfile, zipfile)
        return Path(where).parent / "profiles"
    from importlib import resources

    return Path(str(resources.files("tlop.stdlib") / "profiles"))


def bundled_profiles() -> dict:
    """The profiles shipped with tlop: name -> path of its JSON file."""
    d = _bundled_dir()
    return {p.stem: p for p in sorted(d.glob("*.json"))} if d.is_dir() else {}


def load_profile(spec: Union[str, os.PathLike]) -> Profile:
    """Load a bundled profile by name (``"metropolis"``), an example shipped with tlop
    (``"examples/fermi-hloggp"``), or a profile file by path."""
    s = os.fspath(spec)
    if not isinstance(s, str):
        s = os.fsdecode(s)
    if not s.strip():
        raise ProfileError(f"an empty profile name; give a bundled profile "
                           f"({', '.join(bundled_profiles()) or 'none installed'}) or a path to a .json file")
    shown = printable(s)
    bundled = bundled_profiles()
    looks_like_path = (isinstance(spec, os.PathLike) or s.endswith(".json") or os.sep in s
                       or bool(os.altsep and os.altsep in s))
    if not looks_like_path and s in bundled:
        path = bundled[s]
    else:
        path = Path(s)
        example = _bundled_dir() / "examples" / f"{s[len('examples/'):]}.json"
        if not path.is_file() and s.startswith("examples/") and example.is_file():
            path = example  # an example profile shipped with tlop: examples/fermi-hloggp
        if not path.is_file():
            if looks_like_path or not bundled:
                reason = ("is a directory" if path.is_dir() else
                          "not a regular file" if path.exists() else "no such file")
                hint = (f" (the bundled profile is named '{path.stem}', without .json)"
                        if path.stem in bundled and not path.exists() else "")
                raise ProfileError(f"{shown}: cannot load profile: {reason}{hint}")
            raise ProfileError(f"unknown profile '{shown}': not a bundled profile "
                               f"({', '.join(bundled)}) and not a file")
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_PROFILE_BYTES:
                raise ProfileError(f"{shown}: not a profile: {size} bytes, more than the "
                                   f"{MAX_PROFILE_BYTES >> 20} MiB a profile may have")
            text = f.read(MAX_PROFILE_BYTES + 1).decode("utf-8")
    except UnicodeDecodeError:
        raise ProfileError(f"{shown}: not a profile: the file is not UTF-8 text") from None
    except OSError as err:
        raise ProfileError(f"{shown}: cannot read profile: {err.strerror or err}") from None
    return Profile(validate(parse_json(text, s), s), path.resolve())


def save_profile(profile: Profile, path: Union[str, os.PathLike]) -> Path:
    """Write ``profile`` to ``path`` atomically (a temporary file in the same directory, then
    ``os.replace``), so a crash never leaves a half-written profile.  Returns the path."""
    path = Path(path)
    text = profile.to_json()
    directory = path.parent if str(path.parent) else Path(".")
    tmp = None
    try:
        import tempfile

        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _file_mode(path))
        os.replace(tmp, path)
        tmp = None
    except OSError as err:
        raise ProfileError(f"{printable(path)}: cannot write profile: {err.strerror or err}") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    return path


def _file_mode(path: Path) -> int:
    """Keep an existing file's permissions; a new file gets the usual 0o666 & ~umask (mkstemp
    alone would leave it private to the owner)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def default_profile() -> Profile:
    """The bundled profile used when none is given (``metropolis``)."""
    return load_profile(DEFAULT_PROFILE)


def as_profile(profile):
    """A Profile from a Profile, a bundled name, a path, or None (the default profile)."""
    if profile is None:
        return default_profile()
    if isinstance(profile, (str, os.PathLike)):
        return load_profile(str(profile))
    return profile


def models_of(profile: "Profile") -> list:
    """The models whose schedules ``profile`` can price, in the order a model-neutral module
    prefers them: ``taulop`` (tables ``o`` and ``L``), ``loggp`` (scalars ``loggp.*``),
    ``plogp`` (tables or scalars ``plogp.*``)."""
    tables, scalars = set(profile.table_names()), set(profile.scalar_names())
    out = []
    if {"o", "L"} <= tables:
        out.append("taulop")
    for model in ("loggp", "plogp"):
        if any(n.startswith(model + ".") for n in tables | scalars):
            out.append(model)
    return out


def default_model(profile: "Profile") -> str:
    """The model a model-neutral schedule is priced in on ``profile``: the first of
    :func:`models_of` (τ-Lop when the profile has its tables), taulop when it has none (the
    error then names the missing tables)."""
    models = models_of(profile)
    return models[0] if models else "taulop"
