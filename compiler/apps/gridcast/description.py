"""A grid description file: the pLogP measurements of 001 §4.1.3 for an inter-cluster broadcast.

What it does: :func:`read_grid` reads a JSON file naming the subnets of a grid (as Lowekamp's
clustering found them), the pLogP profile measured inside each subnet, and the pLogP profile
measured between the coordinators of each pair of subnets — what 001 acquires with at most
C·(C − 1) + C experiments (half the links when they are symmetric)::

    {"tlop_grid": 1,
     "subnets": [{"name": "orsay", "machines": 31, "profile": "orsay.json"},
                 {"name": "toulouse", "machines": 20, "profile": "toulouse.json"}],
     "links": [{"between": ["orsay", "toulouse"], "profile": "orsay-toulouse.json"}],
     "root": "orsay"}

A profile is a bundled profile's name or a path relative to the description's directory.  A
link given one way serves both ways; every pair of subnets needs one.  :func:`grid_problem`
turns a description into the :class:`~.problem.Problem` of an m-byte broadcast: g_ij(m) and
L_ij from each link's profile at m, T_j the cheapest stdlib pLogP broadcast inside subnet j.

What it does not do: measure, or cluster (the subnets are given).  Errors name the file and the
field (``links[2].between``); a JSON syntax error is shown at its line and column.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from tlop.runtime.diagnostics import Diagnostic, Source, Span, TlopError

__all__ = ["GridError", "Grid", "read_grid", "grid_from_dict", "grid_problem"]

#: the largest grid description read (a description names files; it is small)
MAX_BYTES = 1 << 20


class GridError(TlopError):
    """A grid description file is malformed or names a profile that cannot be loaded."""

    code = "E020"


@dataclass(frozen=True)
class Grid:
    """Subnet names, machines per subnet, the profile spec of each subnet, the profile spec of
    each link ``{(i, j): spec}`` as given (one direction), the root subnet, the file."""
    names: tuple
    machines: tuple
    intra: tuple
    links: dict
    root: int
    source: str
    base: Path


def read_grid(path) -> Grid:
    """The grid description in the JSON file ``path``."""
    p = Path(path)
    name = str(path)
    if not p.is_file():
        raise GridError(f"{name}: cannot read the grid description: "
                        f"{'is a directory' if p.is_dir() else 'no such file'}")
    if p.stat().st_size > MAX_BYTES:
        raise GridError(f"{name}: not a grid description: more than {MAX_BYTES >> 10} KiB")
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise GridError(f"{name}: not a grid description: the file is not UTF-8 text") from None
    except OSError as err:
        raise GridError(f"{name}: cannot read the grid description: {err.strerror or err}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        span = Span(Source(name, text), err.lineno, err.colno, err.lineno, err.colno)
        raise GridError(Diagnostic(f"invalid JSON in the grid description: {err.msg}", span)) from None
    except (RecursionError, ValueError) as err:
        raise GridError(f"{name}: not a grid description: {err}") from None
    return grid_from_dict(data, name, p.parent)


def _fail(source, where, what):
    raise GridError(f"{source}: {where}: {what}")


def _text(v) -> bool:
    return isinstance(v, str) and v.strip() != ""


def grid_from_dict(data, source: str = "<grid>", base=".") -> Grid:
    """Validate a grid description given as parsed JSON (see the module's docstring)."""
    if not isinstance(data, dict):
        raise GridError(f"{source}: a grid description is a JSON object with 'subnets' and 'links'")
    if data.get("tlop_grid") != 1:
        _fail(source, "tlop_grid", f"expected 1 (the grid description format version), got {data.get('tlop_grid')!r}")
    unknown = set(data) - {"tlop_grid", "name", "description", "subnets", "links", "root"}
    if unknown:
        _fail(source, ", ".join(sorted(map(str, unknown))),
              "unknown field(s); a grid description has tlop_grid, name, description, subnets, links, root")
    subnets = data.get("subnets")
    if not isinstance(subnets, list) or len(subnets) < 2:
        _fail(source, "subnets", "expected a list of at least two subnets")
    names, machines, intra = [], [], []
    for k, s in enumerate(subnets):
        where = f"subnets[{k}]"
        if not isinstance(s, dict) or set(s) - {"name", "machines", "profile"}:
            _fail(source, where, 'expected {"name": …, "machines": N, "profile": …}')
        if not _text(s.get("name")):
            _fail(source, f"{where}.name", "expected a non-empty name")
        if s["name"] in names:
            _fail(source, f"{where}.name", f"'{s['name']}' is the name of subnets[{names.index(s['name'])}] too")
        n = s.get("machines")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            _fail(source, f"{where}.machines", f"expected a whole number of machines >= 1, got {n!r}")
        if not _text(s.get("profile")):
            _fail(source, f"{where}.profile", "expected the pLogP profile measured inside the subnet (a name or a path)")
        names.append(s["name"])
        machines.append(n)
        intra.append(s["profile"])
    links_in = data.get("links")
    if not isinstance(links_in, list):
        _fail(source, "links", "expected a list of links between subnets")
    links: dict = {}
    for k, e in enumerate(links_in):
        where = f"links[{k}]"
        if not isinstance(e, dict) or set(e) - {"between", "profile"}:
            _fail(source, where, 'expected {"between": [A, B], "profile": …}')
        ends = e.get("between")
        if not isinstance(ends, list) or len(ends) != 2 or not all(isinstance(x, str) for x in ends):
            _fail(source, f"{where}.between", "expected the names of two subnets")
        for x in ends:
            if x not in names:
                _fail(source, f"{where}.between", f"unknown subnet '{x}' (subnets: {', '.join(names)})")
        i, j = names.index(ends[0]), names.index(ends[1])
        if i == j:
            _fail(source, f"{where}.between", "a link joins two different subnets")
        if (i, j) in links or (j, i) in links:
            _fail(source, f"{where}.between", f"the link between '{ends[0]}' and '{ends[1]}' is given twice")
        if not _text(e.get("profile")):
            _fail(source, f"{where}.profile", "expected the pLogP profile measured on the link (a name or a path)")
        links[(i, j)] = e["profile"]
    absent = [(a, b) for a in range(len(names)) for b in range(a + 1, len(names))
              if (a, b) not in links and (b, a) not in links]
    if absent:
        a, b = absent[0]
        _fail(source, "links", f"no link between '{names[a]}' and '{names[b]}'"
                               + (f" (and {len(absent) - 1} more pair(s))" if len(absent) > 1 else "")
                               + "; every pair of subnets needs the pLogP profile measured between them")
    root = data.get("root", names[0])
    if root not in names:
        _fail(source, "root", f"unknown subnet {root!r} (subnets: {', '.join(names)})")
    return Grid(tuple(names), tuple(machines), tuple(intra), links, names.index(root), source, Path(base))


def _load(grid: Grid, spec: str, where: str):
    from tlop.runtime.profile import bundled_profiles, load_profile

    target = spec if spec in bundled_profiles() and not spec.endswith(".json") else str(grid.base / spec)
    try:
        return load_profile(target)
    except TlopError as err:
        raise GridError(f"{grid.source}: {where}: {err.diagnostics[0].message}") from None


def grid_problem(grid: Grid, m: float) -> tuple:
    """``(problem, chosen)`` of an m-byte broadcast on ``grid`` (:func:`.problem.measured_problem`),
    each profile loaded once; a profile without pLogP g(m) and L is an error naming its field."""
    from tlop.apps.gridcast.problem import _link_module, link_parameters, measured_problem

    cache: dict = {}

    def get(spec, where):
        if spec not in cache:
            prof = _load(grid, spec, where)
            if not _link_module()["gap"].applies_to(prof) or not _link_module()["latency"].applies_to(prof):
                raise GridError(f"{grid.source}: {where}: profile '{prof.name}' has no pLogP g(m) and L")
            cache[spec] = prof
        return cache[spec]

    intra = [get(s, f"subnets[{k}].profile") for k, s in enumerate(grid.intra)]
    links = {ij: get(s, f"links[{k}].profile") for k, (ij, s) in enumerate(grid.links.items())}
    for k, prof in enumerate(links.values()):
        for what, v in zip(("g(m)", "L"), link_parameters(prof, m)):
            if not math.isfinite(v) or v < 0:
                raise GridError(f"{grid.source}: links[{k}].profile: pLogP {what} of profile '{prof.name}' is "
                                f"{v!r} at m = {m:g} B; a gap and a latency are finite and >= 0")
    try:
        return measured_problem(m, grid.machines, intra, links, grid.root, grid.names)
    except ValueError as err:      # e.g. a negative intra-subnet time from a bad profile
        raise GridError(f"{grid.source}: {err}") from None
