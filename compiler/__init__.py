"""tlop: a compiler for communication-cost models of parallel algorithms.

Write an algorithm's cost in a ``.tlop`` file (τ-Lop, LogGP, pLogP, postal, max-rate), then::

    import tlop
    alg = tlop.load("taulop/bcast")["binomial_bcast"]
    alg.evaluate(tlop.default_profile(), P=16, m=2**20)
    ring = tlop.load("taulop/allgather")["ring"]          # a schedule, over a process mapping
    ring.evaluate("lusitania", P=64, m=2**20, mapping=tlop.sequential(8))

See the documentation (docs/) for the language, the models and the platform profiles.

The package's folders are the pipeline: :mod:`tlop.frontend` (parse, check, lower),
:mod:`tlop.ir` (the typed cost IR and the passes that define its meaning once),
:mod:`tlop.analysis` (rules proved with Z3, simplifier, proofs), :mod:`tlop.backends`
(interpreter, LLVM JIT, printers), :mod:`tlop.cli`; :mod:`tlop.runtime` (profiles, units,
errors, measurement) does not depend on any of them.  Names are imported lazily, so that
``import tlop`` and the command line start fast.
"""

__version__ = "0.1.0"

_LAZY = {
    "load": ("tlop.api", "load"), "loads": ("tlop.api", "loads"), "Module": ("tlop.api", "Module"),
    "AlgorithmHandle": ("tlop.api", "AlgorithmHandle"),
    "TlopError": ("tlop.runtime.diagnostics", "TlopError"),
    "sequential": ("tlop.runtime.mapping", "sequential"), "round_robin": ("tlop.runtime.mapping", "round_robin"),
    "read_layout": ("tlop.runtime.mapping", "read_layout"),
    "per_rank": ("tlop.runtime.per_rank", "per_rank"),
    "estimate_contention_ratio": ("tlop.apps.contention", "estimate_contention_ratio"),
    "best": ("tlop.commands", "best"), "explain": ("tlop.commands", "explain"), "show": ("tlop.commands", "show"),
    "tune": ("tlop.commands", "tune"), "Grid": ("tlop.grid", "Grid"),
    "load_config": ("tlop.runtime.configs", "load_config"), "configuration": ("tlop.runtime.configs", "configuration"),
    "bundled_configs": ("tlop.runtime.configs", "bundled_configs"),
    "bundled_profiles": ("tlop.runtime.profile", "bundled_profiles"),
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        mod, attr = _LAZY[name]
        value = getattr(importlib.import_module(mod), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tlop' has no attribute {name!r}")


def __dir__():
    """The module's names with the lazy ones (Tab completion offers ``tlop.load`` before it is used)."""
    return sorted(set(globals()) | set(_LAZY))


def load_profile(name_or_path):
    """A platform profile by bundled name (``"metropolis"``) or path to a JSON file."""
    from tlop.runtime.profile import load_profile as _load

    return _load(name_or_path)


def default_profile():
    """The bundled default profile (metropolis, measured by the τ-Lop authors)."""
    from tlop.runtime.profile import default_profile as _default

    return _default()


__all__ = ["load", "loads", "Module", "AlgorithmHandle", "TlopError", "load_profile", "default_profile",
           "sequential", "round_robin", "read_layout", "per_rank", "estimate_contention_ratio", "best", "explain",
           "show", "tune", "Grid", "load_config", "configuration", "bundled_configs", "bundled_profiles",
           "__version__"]
