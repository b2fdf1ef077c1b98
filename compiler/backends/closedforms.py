"""The hook through which the JIT finds closed forms of schedules.

What it does: holds one *provider*, a function ``(program, algorithm, mapping kind) ->
derivation`` (an object with ``ok``, ``expr``, ``conditions`` and ``q``, as
:func:`tlop.analysis.closedform.derive` returns), which :func:`tlop.backends.jit.evaluator.closed_variant`
asks for the closed form of a schedule under a sequential or round-robin mapping.  The Python API
(:mod:`tlop.api`) registers :func:`tlop.analysis.closedform.derive` when it is imported.

Why a hook: the back ends come before the analyses in the package pipeline (``tlop.analysis``
imports ``tlop.backends``, never the reverse; ``tests/test_architecture.py``).

What it does not do: derive anything itself.  Without a provider (the JIT used on its own,
without :mod:`tlop.api`) schedules are always enumerated natively.
"""

from __future__ import annotations

from typing import Callable, Optional

__all__ = ["register", "provider", "KINDS"]

#: the mapping kinds closed forms are asked for
KINDS = ("sequential", "round_robin")
_PROVIDER: Optional[Callable] = None


def register(fn: Optional[Callable]) -> None:
    """Use ``fn`` to derive closed forms (None: none)."""
    global _PROVIDER
    _PROVIDER = fn


def provider() -> Optional[Callable]:
    """The registered provider, or None."""
    return _PROVIDER
