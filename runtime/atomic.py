"""Writing a whole file or nothing: a temporary file in the same directory, then ``os.replace``.

What it does: :func:`write_text_atomic` writes text to a unique temporary file beside the
target, flushes it to disk, gives it the target's permissions (those of the file it replaces,
or ``0o666 & ~umask`` for a new one) and renames it over the target, so that a full disk, a
crash or an interrupted write leaves the previous file as it was — never a partial file.  The
temporary file is removed when anything fails.

What it does not do: lock against concurrent writers (the last rename wins, each file whole),
write through a symbolic link's target (the link itself is replaced), or report errors other
than by raising the ``OSError``.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Union

__all__ = ["write_text_atomic", "open_text_atomic"]


def _mode_for(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextlib.contextmanager
def open_text_atomic(path: Union[str, os.PathLike], encoding: str = "utf-8"):
    """A text file to write in pieces (``with open_text_atomic(p) as f: f.write(...)``) that
    replaces ``path`` only when the block ends without an exception; otherwise the previous
    file is left as it was and the temporary file is removed."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding=encoding, newline="") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
        tmp = None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def write_text_atomic(path: Union[str, os.PathLike], text: str, encoding: str = "utf-8") -> Path:
    """Replace ``path`` by a file holding ``text``, all at once; returns the path."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding=encoding, newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
        tmp = None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return path
