"""The Python API: load a ``.tlop`` module, look up its algorithms, evaluate or compile them.

>>> import tlop
>>> bcast = tlop.load("taulop/bcast")["binomial_bcast"]
>>> t = bcast.evaluate(tlop.default_profile(), P=16, m=1 << 20)        # seconds
>>> ts = bcast.evaluate("metropolis", P=[2, 4, 8], m=[1024, 4096, 65536])   # numpy arrays broadcast

:func:`load` keeps the checked IR of each file in a per-user cache
(``tlop.frontend.checked_cache``), so loading a file a second time parses nothing.  The
front end, numpy and the engines are imported when first needed.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Optional

from time import perf_counter as _clock

from tlop import ir

from tlop.backends.binding import as_mapping as _as_mapping, bind_arguments, bind_mapping
from tlop.backends.dataflow_names import DATAFLOW_FUNCTIONS, DATAFLOW_MODELS
from tlop.runtime.diagnostics import TlopError
from tlop.frontend.limits import deep, gc_paused
from tlop.frontend.loader import resolve_path

__all__ = ["load", "loads", "Module", "AlgorithmHandle", "as_profile"]


def as_profile(profile):
    """A :class:`~tlop.runtime.profile.Profile` from a profile, a bundled name, a path or None
    (the default profile); see :func:`tlop.runtime.profile.as_profile`."""
    from tlop.runtime.profile import as_profile as _as_profile

    return _as_profile(profile)


class AlgorithmHandle:
    """One algorithm of a loaded module: its IR, documentation, and ways to price it."""

    def __init__(self, module: "Module", alg: ir.Algorithm):
        self.module = module
        self.ir = alg
        self._last_entry = None  # the native tier's entry of the last call (tlop.backends.tiering)
        self._names = frozenset(p.name for p in alg.params)

    @property
    def name(self) -> str:
        return self.ir.name

    @property
    def doc(self) -> str:
        """The ``///`` documentation of the algorithm."""
        return self.ir.doc

    @property
    def params(self) -> tuple:
        """The parameters (``tlop.ir.ParamSig``), shown as the signature
        ``(P: int >= 1, m: bytes, c: channel = shm)``."""
        return _Params(self.ir.params, self.module.program)

    def bind(self, args: dict, strings: bool = False) -> dict:
        """Check and complete arguments (defaults, channels, constraints); see ``tlop.backends.binding``."""
        return bind_arguments(self.module.program, self.ir, args, strings=strings)

    def requirements(self) -> dict:
        """What a profile must provide: ``{"tables": {...}, "scalars": {...}}`` by name."""
        tables, scalars = set(), set()
        program = self.module.program
        pending = [self.ir.body] + [p.default for p in self.ir.params if p.default is not None]
        seen_transmissions = set()
        while pending:
            for node in ir.walk(pending.pop()):
                if isinstance(node, ir.Lookup):
                    tables.add(node.table)
                elif isinstance(node, ir.Scalar):
                    scalars.add(node.name)
                elif isinstance(node, ir.Send) and program.model in DATAFLOW_MODELS:
                    # LogGP/pLogP: a send costs the platform's dataflow functions of its size
                    if "%dataflow" not in seen_transmissions:
                        seen_transmissions.add("%dataflow")
                        pending.extend(program.algorithms[f].body for f in DATAFLOW_FUNCTIONS
                                       if f in program.algorithms)
                elif isinstance(node, (ir.Transmit, ir.Xmit, ir.Send)):
                    # a send of a schedule costs the platform's transmission T on its channel
                    name = ir.SEND_TRANSMISSION if isinstance(node, ir.Send) else node.name
                    if name not in seen_transmissions:
                        seen_transmissions.add(name)
                        pending.extend(v.body for v in program.transmissions.get(name, ()))
        return {"tables": tables, "scalars": scalars}

    def channel_reads(self) -> set:
        """``(kind, name, channel)`` for every table (``kind`` "table") and scalar ("scalar")
        this algorithm reads on a channel known without evaluating: a channel constant, a
        ``let`` bound to one (what inlining a call such as ``postal(s, gpu_off_node)`` leaves),
        or a channel parameter's default.  Reads on channels computed otherwise are not listed."""
        program = self.module.program
        env0 = {p.name: int(p.default.value) for p in self.ir.params
                if p.type == "channel" and isinstance(p.default, ir.Num)}
        out: set = set()
        seen: set = set()
        stack = [(self.ir.body, env0)]
        while stack:
            node, env = stack.pop()
            key = (id(node), tuple(sorted(env.items())))
            if key in seen:
                continue
            seen.add(key)
            if isinstance(node, (ir.Scalar, ir.Lookup)) and node.channel is not None:
                ch = node.channel
                idx = int(ch.value) if isinstance(ch, ir.Num) else env.get(ch.name) if isinstance(ch, ir.Var) else None
                if idx is not None and 0 <= idx < len(program.channels):
                    kind, name = ("scalar", node.name) if isinstance(node, ir.Scalar) else ("table", node.table)
                    out.add((kind, name, program.channels[idx]))
            if isinstance(node, ir.Let):
                inner = dict(env)
                for name, value in node.bindings:
                    stack.append((value, env))
                    if isinstance(value, ir.Num):
                        inner[name] = int(value.value)
                    elif isinstance(value, ir.Var) and value.name in env:
                        inner[name] = env[value.name]
                    else:
                        inner.pop(name, None)
                stack.append((node.body, inner))
                continue
            bound = getattr(node, "var", None)
            sub = {k: v for k, v in env.items() if k != bound} if isinstance(bound, str) else env
            stack.extend((c, sub) for c in ir.children(node))
        return out

    def applies_to(self, profile) -> bool:
        """True when ``profile`` has every table and scalar this algorithm reads (on some channel),
        and, for the reads whose channel is known without evaluating (:meth:`channel_reads`), on
        that channel: a postal model reading ``alpha_eager[gpu_off_node]`` does not apply to a
        profile without that path."""
        prof = as_profile(profile)
        req = self.requirements()
        names = set(prof.table_names())
        if getattr(prof, "hloggp", None) is not None:  # its tables, keyed for a configuration when evaluated
            from tlop.runtime.hloggp import TABLES

            names |= set(TABLES.values())
        scalars = set(prof.scalar_names())
        program = self.module.program
        if not (all(t in names or f"{program.tables[t].model}.{t}" in names for t in req["tables"])
                and all(s in scalars or f"{program.scalars[s].model}.{s}" in scalars for s in req["scalars"])):
            return False
        for kind, name, channel in self.channel_reads():
            pch = prof.resolve_channel(channel)
            if pch is None:
                return False
            model = (program.scalars if kind == "scalar" else program.tables)[name].model
            has = prof.has_scalar if kind == "scalar" else prof.has_table
            if not (has(name, pch) or (model and has(f"{model}.{name}", pch))):
                return False
        return True

    @property
    def over(self) -> Optional[str]:
        """The name of the algorithm's process mapping (``over map: mapping``), or None."""
        return self.ir.over

    def evaluate(self, profile=None, *, mapping=None, invalid: str = "raise", **args: Any):
        """The cost in seconds with the reference interpreter.  Arguments may be numpy arrays
        (broadcast together); the result is a float or an array.  ``invalid="nan"`` gives NaN at
        the points whose arguments binding refuses (NaN, a fraction for an ``int``, a violated
        constraint or ``where`` condition) and the cost everywhere else, instead of an error for
        the whole array (``"raise"``, the default).  An algorithm declared
        ``over`` a process mapping needs ``mapping`` (``tlop.sequential(8)``,
        ``tlop.round_robin(8)``, ``tlop.read_layout(path)``, or their text ``"sequential(8)"``),
        one for the whole call; other algorithms ignore it.  Schedule stages are reduced by
        counting (``tlop.backends.schedule_count``), which the tests check against the
        oracle's sort (``Interpreter(…, schedules="sort")``); a τ-Lop schedule evaluated
        with scalar arguments is answered natively when the engine policy says that pays — at
        once for an expensive point, after enough interpreted time for cheap ones, per
        profile and mapping *value* (``tlop.backends.tiering``; the same results to 1e-12).  An
        algorithm of a model-neutral module (``stdlib/coll``) loaded without a model is priced
        in the model the profile provides (``tlop.runtime.profile.default_model``)."""
        if self.module.model_neutral and self.module.model is None:
            target = self.for_profile(profile)
            if target is not self:
                return target.evaluate(profile, mapping=mapping, invalid=invalid, **args)
        if not self._names.issuperset(args):    # a retired name (S, s: now seg), read with a warning
            from tlop.backends.renamed import renamed_arguments

            args = renamed_arguments(args, self._names, self.name)
        e = self._last_entry  # native code for the last (profile, mapping) values (tlop.backends.tiering)
        if e is not None and e.ev is not None and invalid == "raise" and type(profile) is not str \
                and (e.profile is profile or e.profile == profile) and (e.mapping is mapping or e.mapping == mapping):
            for v in args.values():
                if type(v) is not float and type(v) is not int:
                    break
            else:
                return e.ev(**args)
        tier = self.module.native_tier
        entry = None
        if invalid == "raise":
            entry = self._last_entry = tier.entry(self.ir, profile, mapping)
            if entry.ev is not None and tier.scalar(args):
                return entry.ev(**args)
        return self._evaluate_slow(profile, mapping, invalid, args, tier, entry)

    def _evaluate_slow(self, profile, mapping, invalid, args, tier, entry):
        """:meth:`evaluate` without native code yet: bind, maybe tier up, else interpret."""
        args = self._read_strings(args)
        if mapping is not None:  # a configuration's HLogGP parameters (tlop.runtime.hloggp)
            from tlop.runtime.hloggp import for_mapping

            profile = for_mapping(profile, mapping, self.module.program)
        _new_evaluation(profile, mapping if self.ir.over is not None else None, args.get("P"))
        if invalid not in ("raise", "nan"):
            raise TlopError(f"invalid={invalid!r}: expected 'raise' or 'nan'")
        if invalid == "nan":
            return self._evaluate_valid(profile, mapping, args)
        prof = as_profile(profile)
        mapping = _as_mapping(mapping)
        env = bind_mapping(self.ir, self.bind(args), mapping)
        scalar = tier.scalar(args)
        if any(type(v) is not float for v in env.values()):
            import numpy as np

            from tlop.backends.binding import broadcast_shape

            shape = broadcast_shape(self.name, env)
            if 0 in shape:  # an empty grid costs nothing to evaluate
                return np.zeros(shape)
        elif scalar and entry.fresh and entry.tierable:  # the policy's first look at this entry
            ev = tier.first_call(entry, env, prof, mapping)
            if ev is not None:
                return ev(**args)
        from tlop.backends.interp import Interpreter

        t0 = _clock()
        with deep("cost expression", self.ir.span):
            result = Interpreter(self.module.program, prof, mapping, "count").eval(self.ir.body, env)
            result = _check_result(result, self.name, self.module.program, prof, self.ir.body, env, mapping)
        if scalar and entry.tierable:
            tier.interpreted(entry, _clock() - t0, prof, mapping)
        return result

    def for_profile(self, profile=None) -> "AlgorithmHandle":
        """This algorithm as ``profile`` prices it: itself, unless its module is model-neutral and
        was loaded without a model, then the same algorithm loaded for the profile's model."""
        if not self.module.model_neutral or self.module.model is not None:
            return self
        from tlop.runtime.profile import default_model

        model = default_model(as_profile(profile))
        return self if model == "taulop" else self.module.for_model(model)[self.name]

    def _read_strings(self, args: dict) -> dict:
        """``m="1KiB"``, ``c="net"``: string arguments read as the command line reads them (as
        :meth:`grid` does); per-rank arguments and unknown names are left to binding."""
        if not any(isinstance(v, str) for v in args.values()):
            return args
        from tlop.backends.binding import parse_cli_value

        types = {p.name: p.type for p in self.ir.params if p.per_rank is None}
        return {k: parse_cli_value(v, types[k], k, self.module.program) if isinstance(v, str) and k in types else v
                for k, v in args.items()}

    def _evaluate_valid(self, profile, mapping, args):
        """:meth:`evaluate` at the points binding accepts, NaN at the others."""
        import numpy as np

        from tlop.backends.binding import binder_for, broadcast_shape

        per_rank = {p.name for p in self.ir.params if p.per_rank is not None}  # one vector, never an axis
        arrays = {k: v for k, v in args.items() if not isinstance(v, str) and k not in per_rank and np.ndim(v)}
        if not arrays:  # one point: its cost, or NaN when its arguments are refused
            if not binder_for(self.module.program, self.ir).valid_mask(args):
                return math.nan
            return self.evaluate(profile, mapping=mapping, **args)
        shape = broadcast_shape(self.name, arrays)
        ok = np.broadcast_to(binder_for(self.module.program, self.ir).valid_mask(args), shape)
        out = np.full(shape, np.nan)
        if ok.any():
            sub = {k: (np.broadcast_to(np.asarray(v, dtype=float), shape)[ok] if k in arrays else v)
                   for k, v in args.items()}
            out[ok] = self.evaluate(profile, mapping=mapping, **sub)
        return out

    def grid(self, profile=None, *, mapping=None, invalid: str = "nan", **axes: Any) -> "Grid":
        """The cost over the outer product of ``axes`` (``P=[2, 4, 8], m=[1024, 65536]``; a
        scalar or a string with a unit, ``m="1MiB"``, is one value): a :class:`tlop.grid.Grid`,
        shown as an HTML table in Jupyter.  Points whose arguments binding refuses are NaN
        (``invalid="raise"``: an error)."""
        from tlop.grid import evaluate_grid

        from tlop.runtime.hloggp import for_mapping

        target = self.for_profile(profile)
        if target is not self:
            return target.grid(profile, mapping=mapping, invalid=invalid, **axes)
        profile = for_mapping(profile, mapping, self.module.program)
        _new_evaluation(profile, mapping if self.ir.over is not None else None, axes.get("P"))
        with deep("cost expression", self.ir.span):
            return evaluate_grid(self, as_profile(profile), mapping, invalid, axes)

    def compile(self, profile=None, *, mapping=None, **options):
        """A JIT-compiled evaluator for ``profile`` (see ``tlop.backends.jit``); an algorithm
        ``over`` a process mapping is compiled for ``mapping`` (``tlop.sequential(8)`` or its
        text).  Schedules in LogGP and pLogP (dataflow programs) are compiled by the dataflow
        back end of the JIT (``tlop.backends.jit.dataflowgen``); what the JIT refuses raises
        :class:`tlop.backends.jit.NotCompilable` (a TlopError): evaluate it with :meth:`evaluate`."""
        from tlop.backends.jit import compile_algorithm

        from tlop.runtime.hloggp import for_mapping

        target = self.for_profile(profile)
        if target is not self:
            return target.compile(profile, mapping=mapping, **options)
        profile = for_mapping(profile, mapping, self.module.program)
        with deep("cost expression", self.ir.span):  # a deeply nested expression: an error, not a RecursionError
            return compile_algorithm(self.module.program, self.name, as_profile(profile), mapping=mapping, **options)

    def __repr__(self) -> str:
        sig = ", ".join(f"{p.name}: {p.type}" + (f"[{p.per_rank}]" if p.per_rank else "") for p in self.ir.params)
        return f"<tlop algorithm {self.name}({sig})>"

    def _repr_latex_(self):
        try:
            from tlop.backends.notation import format_latex
        except ImportError:
            return None
        return "$" + format_latex(self.ir.body, self.module.program) + "$"


class _Params(tuple):
    """An algorithm's parameters; ``repr`` is its signature as ``tlop show`` writes it."""

    def __new__(cls, params, program):
        out = super().__new__(cls, params)
        out._program = program
        return out

    def __repr__(self) -> str:
        from tlop.display.signature import signature as _signature

        return "(" + ", ".join(_signature(p, self._program) for p in self) + ")"


def _new_evaluation(profile, mapping, P) -> None:
    """One evaluation starts: out-of-grid lookups warn again (once per table), and a mapping
    that needs more than the profile's machine is warned about (:mod:`tlop.runtime.machine`)."""
    from tlop.runtime.machine import check_fits, new_evaluation

    import os

    named = isinstance(profile, (str, os.PathLike))
    if not named:  # a name or path is loaded afresh by the evaluation: its tables have not warned
        prof = as_profile(profile)
        if hasattr(prof, "new_evaluation"):
            prof.new_evaluation()
    new_evaluation()
    if mapping is not None and P is not None and not isinstance(P, str):
        from tlop.backends.binding import as_mapping

        try:
            # a named profile: its metadata without loading the tables again (cached per file state)
            check_fits(_metadata_of(profile) if named else prof, as_mapping(mapping), P)
        except (TypeError, ValueError, TlopError):
            pass  # arguments binding refuses, or the profile cannot be read: their own errors follow


def _metadata_of(spec):
    """A stand-in with the ``name`` and ``metadata`` of the profile named ``spec`` (loaded once
    per file state: :func:`tlop.backends.tiering._content_key`)."""
    from types import SimpleNamespace

    from tlop.backends.tiering import _content_key

    key = (str(spec), _content_key(spec))
    got = _METADATA.get(key)
    if got is None:
        prof = as_profile(spec)
        got = SimpleNamespace(name=prof.name, metadata=dict(prof.metadata))
        if len(_METADATA) > 64:
            _METADATA.clear()
        _METADATA[key] = got
    return got


_METADATA: dict = {}


def _check_result(result, name, program, profile, expr, env, mapping=None):
    """``result`` when finite everywhere; a non-finite cost is an error naming the operation
    that produced it (:func:`tlop.backends.nonfinite.check_finite`)."""
    if type(result) is float and result - result == 0:
        return result
    from tlop.backends.nonfinite import check_finite

    return check_finite(result, name, program, profile, expr, env, mapping=mapping)


class Module:
    """A loaded and checked ``.tlop`` module with its imports.

    A module loaded from the checked-IR cache has its program but not yet the elaborator's
    full result (declarations, ASTs): ``elaborated`` computes it on first access."""

    def __init__(self, path: Path, elaborated, *, program: Optional[ir.Program] = None,
                 root_algorithms: Optional[tuple] = None, model: Optional[str] = None,
                 model_neutral: bool = False):
        self.path = path
        #: the model an ``import "@model/…"`` was loaded for (None: not chosen, taulop used)
        self.model = model
        #: whether the module imports ``@model/…``: one text, priced in the model a profile has
        self.model_neutral = model_neutral
        self._by_model: dict = {}
        self._elaborated = elaborated
        self.program: ir.Program = elaborated.program if elaborated is not None else program
        self._root_algorithms = (tuple(elaborated.root_algorithms) if elaborated is not None
                                 else tuple(root_algorithms or ()))
        self._handles: dict = {}  # made on first use, then the same object (a file may declare 10⁵)

    @property
    def native_tier(self):
        """When this module's schedules are evaluated natively (:mod:`tlop.backends.tiering`)."""
        tier = self.__dict__.get("_native_tier")
        if tier is None:
            from tlop.backends.tiering import NativeTier

            tier = self._native_tier = NativeTier(self.program)
        return tier

    @property
    def elaborated(self):
        """The elaborator's result (:class:`tlop.frontend.elaborate.Elaborated`)."""
        if self._elaborated is None:
            from tlop.frontend.elaborate import elaborate
            from tlop.frontend.loader import load_tree

            with deep():
                self._elaborated = elaborate(load_tree(self.path, model=self.model))
        return self._elaborated

    def for_model(self, model: str) -> "Module":
        """This module loaded for ``model`` (itself when it is not model-neutral or already is)."""
        if not self.model_neutral or model == (self.model or "taulop"):
            return self
        other = self._by_model.get(model)
        if other is None:
            other = self._by_model[model] = load(self.path, model=model)
        return other

    @property
    def algorithms(self) -> list[str]:
        """Names of the algorithms this file itself declares (then those of its imports)."""
        return list(self.program.algorithms)

    @property
    def own_algorithms(self) -> list[str]:
        return list(self._root_algorithms)

    def __getitem__(self, name: str) -> AlgorithmHandle:
        handle = self._handles.get(name)
        if handle is None:
            alg = self.program.algorithms.get(name) if isinstance(name, str) else None
            if alg is None:
                from tlop.runtime.suggest import hint

                known = ", ".join(self.program.algorithms) or "(none)"
                near = hint(str(name), self.program.algorithms)
                raise TlopError(f"no algorithm '{name}' in {self.path.name}{near}{' ' if near else '; '}algorithms: {known}")
            handle = self._handles[name] = AlgorithmHandle(self, alg)
        return handle

    def __contains__(self, name: str) -> bool:
        return name in self.program.algorithms

    def __iter__(self):
        return (self[name] for name in self.program.algorithms)

    def __repr__(self) -> str:
        return f"<tlop module {self.path} with {len(self.program.algorithms)} algorithms>"


def load(name_or_path: str | Path, model: Optional[str] = None) -> Module:
    """Load, check and lower a ``.tlop`` file or a stdlib module (``"taulop/bcast"``).

    ``model`` (``"taulop"``, ``"loggp"``, ``"plogp"``) is the model a model-neutral module
    (one that imports ``"@model/platform.tlop"``, as ``coll/bcast`` does) is loaded for; without
    it such a module is checked as τ-Lop and its algorithms are priced in the model of the
    profile they are evaluated on.  The checked IR comes from the per-user cache when the file,
    its imports and the compiler are unchanged (``tlop.frontend.checked_cache``)."""
    from tlop.frontend import checked_cache

    path = resolve_path(str(name_or_path))
    with deep(), gc_paused():
        hit = checked_cache.get(path, model)
        if hit is not None:
            return Module(path, None, program=hit.program, root_algorithms=hit.root_algorithms, model=model,
                          model_neutral=hit.model_neutral)
        from tlop.frontend.elaborate import elaborate
        from tlop.frontend.loader import is_model_neutral, load_tree

        modules = load_tree(path, model=model)
        elaborated = elaborate(modules)
        checked_cache.put(path, modules, elaborated, model)
        return Module(path, elaborated, model=model, model_neutral=is_model_neutral(modules))


def loads(text: str, name: str = "<string>.tlop", base: str | Path = ".") -> Module:
    """Load a module from a string; imports resolve relative to ``base``, then the stdlib."""
    from tlop.frontend.elaborate import elaborate
    from tlop.frontend.loader import is_model_neutral, load_tree

    path = (Path(base) / name).resolve()
    with deep(), gc_paused():
        modules = load_tree(path, text)
        return Module(path, elaborate(modules), model_neutral=is_model_neutral(modules))
