"""Finding and reading ``.tlop`` files: stdlib short names, imports, cycles.

What it does: turns a path or a stdlib short name (``taulop/bcast``) into a file, parses it, and
follows its ``import "…"`` declarations — relative to the importing file first, then the folders of ``$TLOP_PATH``, then the stdlib
directory — returning every module once, imports before importers.  Reports missing files and
import cycles with the span of the offending ``import``.

What it does not do: look at names or types (that is :mod:`tlop.frontend.elaborate`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tlop.runtime.diagnostics import Diagnostic, DiagnosticSink, Source, TlopError

__all__ = ["STDLIB_DIR", "LoadedModule", "resolve_path", "load_tree", "stdlib_modules"]

import tlop.stdlib as _stdlib_pkg  # noqa: E402  (data package: the .tlop files and profiles)

STDLIB_DIR = Path(_stdlib_pkg.__file__).resolve().parent


@dataclass(frozen=True)
class LoadedModule:
    path: Path
    source: Source
    module: "A.Module"  # tlop.frontend.ast.Module


def search_path() -> list[Path]:
    """Where imports and short names are looked up after the importing file's folder: the
    folders of ``$TLOP_PATH`` (separated by ``os.pathsep``), then the stdlib."""
    extra = [Path(p) for p in os.environ.get("TLOP_PATH", "").split(os.pathsep) if p]
    return extra + [STDLIB_DIR]


def stdlib_modules() -> list[str]:
    """Short names of every stdlib module, e.g. ``taulop/bcast``."""
    out = []
    for p in sorted(STDLIB_DIR.rglob("*.tlop")):
        out.append(p.relative_to(STDLIB_DIR).with_suffix("").as_posix())
    return out


def resolve_path(name: str) -> Path:
    """A path on disk for a file path or a stdlib short name; TlopError if neither exists."""
    p = Path(name)
    if p.is_file():
        return p.resolve()
    for base in search_path():
        for candidate in (base / name, base / (name + ".tlop")):
            if candidate.is_file():
                return candidate.resolve()
    known = ", ".join(stdlib_modules()) or "(none)"
    raise TlopError(f"no such file or stdlib module: '{name}'; stdlib modules: {known}")


def _display_name(path: Path) -> str:
    """How a file is named in diagnostics: relative to the stdlib or the working directory."""
    try:
        return "stdlib/" + path.relative_to(STDLIB_DIR).as_posix()
    except ValueError:
        pass
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def read_source(path: Path) -> Source:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise TlopError(f"{_display_name(path)}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise TlopError(f"cannot read {_display_name(path)}: {e.strerror}") from None
    return Source(_display_name(path), text)


def load_tree(root: Path, text: str | None = None) -> list[LoadedModule]:
    """The root module and everything it imports, in dependency order (imports first).

    ``text`` overrides the root file's content (the Python API's ``loads``)."""
    from tlop.frontend import ast as A  # the parser (ANTLR) is imported only when parsing
    from tlop.frontend.parse import parse_source

    sink = DiagnosticSink()
    order: list[LoadedModule] = []
    done: dict[Path, LoadedModule] = {}
    errors: list[Diagnostic] = []

    def visit(path: Path, chain: tuple, source: Source | None = None):
        if path in done:
            return
        source = source or read_source(path)
        try:
            module = parse_source(source)
        except TlopError as e:
            errors.extend(e.diagnostics)
            done[path] = None  # type: ignore[assignment]
            return
        for d in module.decls:
            if not isinstance(d, A.ImportDecl):
                continue
            target = _find_import(path, d.path)
            if target is None:
                sink.error(f"cannot find imported file '{d.path}' (looked beside {source.name}, in $TLOP_PATH and in the stdlib)",
                           d.span)
                continue
            if target in chain or target == path:
                cycle = " -> ".join(_display_name(p) for p in chain[chain.index(target):] + (path, target)) \
                    if target in chain else f"{_display_name(path)} -> {_display_name(path)}"
                sink.error(f"import cycle: {cycle}", d.span)
                continue
            visit(target, chain + (path,))
        lm = LoadedModule(path, source, module)
        done[path] = lm
        order.append(lm)

    visit(root, (), Source(_display_name(root), text) if text is not None else None)
    all_errors = errors + sink.items
    if all_errors:
        raise TlopError(all_errors)
    return order


def _find_import(importer: Path, rel: str) -> Path | None:
    for base in [importer.parent] + search_path():
        p = (base / rel)
        if p.is_file():
            return p.resolve()
        if not rel.endswith(".tlop") and (base / (rel + ".tlop")).is_file():
            return (base / (rel + ".tlop")).resolve()
    return None
