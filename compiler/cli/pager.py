"""Tables taller than the terminal go through a pager, as git's output does.

What it does: :func:`paged` sends standard output to a pager — ``$TLOP_PAGER``, else ``$PAGER``,
else ``less`` (given ``LESS=FRX`` unless ``LESS`` is set: colours kept, the text left on the
screen) — when standard output is a terminal and the output about to be printed, whose height the
caller knows before printing it, is taller than the terminal.  Output to a pipe or a file is
never paged; nor with ``--no-pager``, or ``TLOP_PAGER`` set to ``""`` or ``cat``; a pager that
cannot be found is a warning, and the table is printed without it.  While the pager
runs, what goes to standard error (notes, warnings) is held and printed when it ends, instead
of being drawn over the pager's screen.  Quitting the pager early ends the output quietly.
What it does not do: decide the layout of a table (:mod:`tlop.cli.table`), page a table whose
height is unknown, or page standard error.
"""

from __future__ import annotations

import io
import os
import shlex
import shutil
import subprocess
import sys
from contextlib import contextmanager

from tlop.runtime.text import printable

__all__ = ["paged", "pager_command", "terminal_height"]


def pager_command(environ=None):
    """The pager to run (a shell command), or None for no pager."""
    env = os.environ if environ is None else environ
    for var in ("TLOP_PAGER", "PAGER"):
        if var in env:
            cmd = env[var].strip()
            return None if cmd in ("", "cat") else cmd
    return "less" if shutil.which("less") else None


def terminal_height(stream=None):
    """The number of lines of the terminal ``stream`` (standard output) is, or None when it is
    not a terminal."""
    stream = sys.stdout if stream is None else stream
    try:
        if not stream.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    return shutil.get_terminal_size(fallback=(100, 24)).lines


def _wants_pager(lines: int, enabled: bool):
    if not enabled:
        return None
    height = terminal_height()
    if height is None or lines < height:  # one line is left for the shell's prompt
        return None
    cmd = pager_command()
    if cmd is not None and not _findable(cmd):
        print(f"tlop: warning: the pager {printable(cmd)!r} was not found; printing without it", file=sys.stderr)
        return None
    return cmd


def _findable(cmd: str) -> bool:
    """Whether the program of the pager command can be found (a command using the shell's
    syntax beyond words is trusted to the shell)."""
    try:
        words = shlex.split(cmd)
    except ValueError:
        return False
    if not words or any(c in cmd for c in "|&;<>()$`"):
        return bool(words)
    return shutil.which(words[0]) is not None


@contextmanager
def paged(lines: int, enabled: bool = True):
    """Within the block, standard output goes to the pager if ``lines`` of output are taller than
    the terminal (see the module's docstring); otherwise nothing changes."""
    cmd = _wants_pager(lines, enabled)
    if cmd is None:
        yield
        return
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    out, err = sys.stdout, sys.stderr
    try:
        proc = subprocess.Popen(cmd, shell=True, stdin=subprocess.PIPE, env=env, text=True,
                                encoding=getattr(out, "encoding", None) or "utf-8",
                                errors=getattr(out, "errors", None) or "strict")
    except OSError:
        yield  # the pager cannot start: print as if there were none
        return
    held = io.StringIO()
    sys.stdout, sys.stderr = proc.stdin, held
    try:
        yield
    except BrokenPipeError:
        pass  # the pager was quit before the end: nothing more to show
    finally:
        sys.stdout, sys.stderr = out, err
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
        _wait(proc)
        if held.getvalue():
            err.write(held.getvalue())
            err.flush()


def _wait(proc) -> None:
    """Wait for the pager to end (the reader may still be reading), Ctrl-C included: the pager,
    not tlop, owns the terminal until then."""
    while True:
        try:
            proc.wait()
            return
        except KeyboardInterrupt:
            continue

