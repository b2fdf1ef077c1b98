"""tlop: a compiler for communication-cost models of parallel algorithms.

Write an algorithm's cost in a ``.tlop`` file (τ-Lop, LogGP, pLogP, postal, max-rate), then::

    import tlop
    alg = tlop.load("taulop/bcast")["binomial_bcast"]
    alg.evaluate(tlop.default_profile(), P=16, m=2**20)

See the documentation (docs/) for the language, the models and the platform profiles.
"""

__version__ = "0.1.0"

from .api import AlgorithmHandle, Module, load, loads  # noqa: E402
from .diagnostics import TlopError  # noqa: E402


def load_profile(name_or_path):
    """A platform profile by bundled name (``"metropolis"``) or path to a JSON file."""
    from tlop.runtime.profile import load_profile as _load

    return _load(name_or_path)


def default_profile():
    """The bundled default profile (metropolis, measured by the τ-Lop authors)."""
    from tlop.runtime.profile import default_profile as _default

    return _default()


__all__ = ["load", "loads", "Module", "AlgorithmHandle", "TlopError", "load_profile", "default_profile",
           "__version__"]
