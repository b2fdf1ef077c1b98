"""Finding and reading ``.tlop`` files: stdlib short names, imports, cycles.

What it does: turns a path or a stdlib short name (``taulop/bcast``) into a file, parses it, and
follows its ``import "…"`` declarations — relative to the importing file first, then the folders of ``$TLOP_PATH``, then the stdlib
directory — returning every module once, imports before importers.  Reports missing files and
import cycles with the span of the offending ``import``.  Only ``.tlop`` sources are imported (an
``import "/etc/shadow"`` is refused before anything is read); an import that cannot be read is an
error at its ``import``, bytes that are not UTF-8 an error at their line and column, and a UTF-8
byte order mark at the start of a file is accepted.

Model-neutral modules: an ``import "@model/platform.tlop"`` names the platform of the model the
module is loaded for (``load_tree(…, model="loggp")``: ``stdlib/loggp/platform.tlop``; taulop when
none is given), so one schedule text is priced by τ-Lop's rules or as a LogGP/pLogP dataflow
program (the collectives of ``stdlib/coll``).

What it does not do: look at names or types (that is :mod:`tlop.frontend.elaborate`), or choose
the model (the caller does: :func:`tlop.api.load`, from a profile or ``--model``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tlop.runtime.diagnostics import Diagnostic, DiagnosticSink, Source, Span, TlopError

__all__ = ["STDLIB_DIR", "LoadedModule", "resolve_path", "load_tree", "stdlib_modules", "SCHEDULE_MODELS",
           "MODEL_PREFIX", "is_model_neutral"]

import tlop.stdlib as _stdlib_pkg  # noqa: E402  (data package: the .tlop files and profiles)

STDLIB_DIR = Path(_stdlib_pkg.__file__).resolve().parent


#: the models a model-neutral module can be loaded for: those that price schedules
SCHEDULE_MODELS = ("taulop", "loggp", "plogp")
#: how a model-neutral module names the chosen model's folder of the stdlib in an import
MODEL_PREFIX = "@model/"


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
    if p.exists():  # there, but not a regular file: say what it is rather than "no such file"
        import stat

        mode = p.stat().st_mode
        what = ("a directory" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
                else "a socket" if stat.S_ISSOCK(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "not a regular file")
        raise TlopError(f"cannot read '{name}': it is {what}, not a source file (tlop reads regular .tlop files)")
    from tlop.runtime.suggest import hint

    modules = stdlib_modules()
    near = hint(name, modules)
    if near:  # the module meant, not the whole list
        raise TlopError(f"no such file or stdlib module: '{name}'{near}")
    family = [m for m in modules if m.split("/")[0] == name.split("/")[0]] if "/" in name else []
    known = ", ".join(family or modules) or "(none)"
    raise TlopError(f"no such file or stdlib module: '{name}'; "
                    f"{'modules of ' + name.split('/')[0] if family else 'stdlib modules'}: {known}")


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


def read_source(path: Path, imported_at: Span | None = None) -> Source:
    """The text of ``path``: UTF-8, a byte order mark at the start dropped.  A file that cannot
    be read is an error at ``imported_at`` (the ``import`` that names it) when given; bytes that
    are not UTF-8 are an error at their own line and column."""
    shown = _display_name(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise TlopError(f"cannot read {shown}: {e.strerror or e}", imported_at) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        start = data.rfind(b"\n", 0, e.start) + 1
        line = data.count(b"\n", 0, e.start) + 1
        col = len(data[start:e.start].decode("utf-8", "replace")) + 1
        span = Span(Source(shown, data.decode("utf-8", "replace")), line, col, line, col)
        notes = (f"imported at {imported_at}",) if imported_at is not None else ()
        raise TlopError(Diagnostic(f"not UTF-8 text: byte 0x{data[e.start]:02x} ({e.reason}); .tlop files are "
                                   f"UTF-8", span, notes=notes)) from None
    if text.startswith("\ufeff"):  # a byte order mark (some editors write one): not part of the text
        text = text[1:]
    return Source(shown, text)


def load_tree(root: Path, text: str | None = None, model: str | None = None) -> list[LoadedModule]:
    """The root module and everything it imports, in dependency order (imports first).

    ``text`` overrides the root file's content (the Python API's ``loads``); ``model`` is the
    model an ``import "@model/…"`` names (default taulop; one of :data:`SCHEDULE_MODELS`)."""
    if model is not None and model not in SCHEDULE_MODELS:
        raise TlopError(f"unknown model '{model}' for a model-neutral module; the models that price "
                        f"schedules are {', '.join(SCHEDULE_MODELS)}")
    from tlop.frontend import ast as A  # the parser (ANTLR) is imported only when parsing
    from tlop.frontend.parse import parse_source

    sink = DiagnosticSink()
    order: list[LoadedModule] = []
    done: dict[Path, LoadedModule] = {}
    errors: list[Diagnostic] = []

    def visit(path: Path, chain: tuple, source: Source | None = None, imported_at: Span | None = None):
        if path in done:
            return
        if source is None:
            try:
                source = read_source(path, imported_at)
            except TlopError as e:
                errors.extend(e.diagnostics)
                done[path] = None  # type: ignore[assignment]
                return
        try:
            module = parse_source(source)
        except TlopError as e:
            errors.extend(e.diagnostics)
            done[path] = None  # type: ignore[assignment]
            return
        for d in module.decls:
            if not isinstance(d, A.ImportDecl):
                continue
            try:
                target = _find_import(path, d.path, model)
                other = _non_source(path, d.path) if target is None else None
            except OSError as e:  # a name the file system refuses (too long, a bad byte): at the import
                shown = d.path if len(d.path) <= 80 else d.path[:77] + "…"
                sink.error(f"cannot import '{shown}': {e.strerror or e} ({len(d.path):,} characters)", d.span)
                continue
            if target is None:
                if other is not None:
                    sink.error(f"cannot import '{d.path}': {other} is not a .tlop source (only .tlop files are "
                               f"imported; it was not read)", d.span)
                else:
                    sink.error(f"cannot find imported file '{d.path}' (looked beside {source.name}, in $TLOP_PATH "
                               f"and in the stdlib)", d.span)
                continue
            if target in chain or target == path:
                cycle = " -> ".join(_display_name(p) for p in chain[chain.index(target):] + (path, target)) \
                    if target in chain else f"{_display_name(path)} -> {_display_name(path)}"
                sink.error(f"import cycle: {cycle}", d.span)
                continue
            visit(target, chain + (path,), imported_at=d.span)
        lm = LoadedModule(path, source, module)
        done[path] = lm
        order.append(lm)

    visit(root, (), Source(_display_name(root), text) if text is not None else None)
    all_errors = errors + sink.items
    if all_errors:
        raise TlopError(all_errors)
    return order


def is_model_neutral(modules: list) -> bool:
    """Whether any of the loaded modules imports ``@model/…`` (its meaning depends on the model)."""
    from tlop.frontend import ast as A

    return any(isinstance(d, A.ImportDecl) and d.path.startswith(MODEL_PREFIX)
               for lm in modules for d in lm.module.decls)


def _candidates(importer: Path, rel: str):
    for base in [importer.parent] + search_path():
        yield base / rel
        if not rel.endswith(".tlop"):
            yield base / (rel + ".tlop")


def _is_source(p: Path) -> bool:
    """A regular ``.tlop`` file, also after following links (``x.tlop`` linking to
    ``/etc/shadow`` is not one)."""
    return p.name.endswith(".tlop") and p.is_file() and p.resolve().name.endswith(".tlop")


def _find_import(importer: Path, rel: str, model: str | None = None) -> Path | None:
    """The ``.tlop`` file ``import "rel"`` of ``importer`` names (beside it, then on the
    search path; ``@model/x`` the stdlib's ``<model>/x``), or None.  Only ``.tlop`` sources are
    ever returned: an import of any other file is refused before it is read."""
    if rel.startswith(MODEL_PREFIX):
        rest = rel[len(MODEL_PREFIX):]
        p = STDLIB_DIR / (model or "taulop") / rest
        if ".." in Path(rest).parts or not _is_source(p):
            return None
        return p.resolve()
    for p in _candidates(importer, rel):
        if _is_source(p):
            return p.resolve()
    return None


def _non_source(importer: Path, rel: str) -> str | None:
    """How to name the file ``import "rel"`` would have reached if it were a ``.tlop`` source
    (for the error message), or None when there is no such file."""
    for p in _candidates(importer, rel):
        if p.exists() and not p.is_dir():
            r = p.resolve()
            return f"'{r}'" if r != p.absolute() else f"'{p}'"
    return None
