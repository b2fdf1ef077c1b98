"""Recursion depth for the tree-walking passes.

The front end, the elaborator and the interpreter walk trees recursively.  CPython 3.11+ does not
use the C stack for Python-to-Python calls, so a limit well above the default 1000 is safe; past
it, a too-deeply nested program is reported as a user error instead of crashing.
"""

from __future__ import annotations

import contextlib
import gc
import sys

from tlop.runtime.diagnostics import TlopError

__all__ = ["deep", "gc_paused", "keep_loaded_objects", "keep_alive", "exit_without_teardown", "RECURSION_LIMIT",
           "MAX_CHAIN_TERMS", "MAX_NESTING"]

#: about 12 frames per level of parentheses in the ANTLR parser, 3 per operator elsewhere
RECURSION_LIMIT = 30000

#: the deepest nesting of brackets and prefix operators (``-``, ``not``) together that the parser
#: accepts, checked on the tokens before parsing and reported where it is crossed: one limit for
#: both (about 600 levels of brackets exhaust the ANTLR parser's recursion; 3,000 negations did
#: not, which made the limits inconsistent)
MAX_NESTING = 500

#: the most operands of one flat chain of a binary operator (``a + b + … ``): the chain becomes a
#: left-nested tree, one level an operand, that every later pass (elaboration, the JIT) walks
#: recursively; 5,000 is well within what all of them handle
MAX_CHAIN_TERMS = 5000


@contextlib.contextmanager
def deep(what: str = "expression", span=None):
    """Raise the recursion limit for a tree walk; RecursionError becomes a TlopError."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, RECURSION_LIMIT))
    try:
        yield
    except RecursionError:
        raise TlopError(f"{what} nested too deeply to process (thousands of levels)", span) from None
    finally:
        sys.setrecursionlimit(old)


_freeze = False


def keep_loaded_objects() -> None:
    """For a process that keeps what it loads until it exits (a ``tlop`` command): at the end of
    each :func:`gc_paused` pass, move every object alive to the collector's permanent generation
    (``gc.freeze``) before the collector is enabled again.  Without it the first collection after
    the pass walks the whole AST and IR once more (0.5 s for 10⁴ declarations); with it, garbage
    cycles made during the pass (the Python ANTLR parse trees) are only freed at exit."""
    global _freeze
    _freeze = True


#: what a ``tlop`` command loaded, kept until the process ends (see :func:`exit_without_teardown`)
_kept: list = []


def keep_alive(obj) -> None:
    """In a process that keeps what it loads (:func:`keep_loaded_objects`), hold ``obj`` until
    the process exits, so that the command returning does not free it object by object."""
    if _freeze:
        _kept.append(obj)


def exit_without_teardown(rc: int) -> int:
    """End a ``tlop`` command without freeing what it loaded: freeing the AST and IR of a file
    of 10⁵ declarations object by object takes about half a second, for memory the operating
    system takes back at once.  Only in a process that keeps what it loads, and only when
    nothing is left to run at exit (no ``atexit`` function, no other thread): then the standard
    streams are flushed and the process ends with ``os._exit(rc)``; otherwise ``rc`` is returned
    for a normal exit."""
    import atexit
    import os
    import threading

    if not _freeze or atexit._ncallbacks() or threading.active_count() > 1:
        return rc
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader gone away (| head), a closed stream
            pass
    os._exit(rc)


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while the front end builds its trees: they are
    millions of small objects that are all alive until the pass ends, and each full collection
    walks all of them (a third of the time of checking a file of 10⁴ declarations).  Reference
    counting still frees everything acyclic; the cycles left (parse trees with parent links)
    are collected at the next collection after the pass."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if _freeze:
                gc.freeze()
            gc.enable()
