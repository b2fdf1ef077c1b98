"""The package layout is the pipeline: no import cycles between packages, and ``runtime`` (profiles,
units, errors, measurement) never imports the compiler."""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: the packages of the import namespace ``tlop`` and the folders that hold them
PACKAGES = {
    "tlop": "compiler",  # the public API (api.py) and the package's __init__
    "tlop.frontend": "compiler/frontend",
    "tlop.ir": "compiler/ir",
    "tlop.analysis": "compiler/analysis",
    "tlop.backends": "compiler/backends",
    "tlop.cli": "compiler/cli",
    "tlop.runtime": "runtime",
    "tlop.runtime.measure": "runtime/measure",
}


def _module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT)
    parts = list(rel.with_suffix("").parts)
    head = {"compiler": ["tlop"], "runtime": ["tlop", "runtime"]}[parts[0]]
    parts = head + parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _package_of(module: str) -> str | None:
    """The most specific package of :data:`PACKAGES` that holds ``module``."""
    best = None
    for pkg in PACKAGES:
        if module == pkg or module.startswith(pkg + "."):
            if best is None or len(pkg) > len(best):
                best = pkg
    return best


def _imports(path: pathlib.Path) -> set:
    """Every ``tlop`` module ``path`` imports, at module level or inside functions."""
    mod = _module_name(path)
    pkg = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            subs = {f"{target}.{a.name}" for a in node.names}
            known_subs = {m for m in subs if _known(m)}
            out.update(known_subs)  # ``from tlop import ir`` imports tlop.ir
            if len(known_subs) < len(subs) or target != "tlop":
                out.add(target)
    return {m for m in out if m == "tlop" or m.startswith("tlop.")}


def _modules():
    for folder in ("compiler", "runtime"):
        for path in (ROOT / folder).rglob("*.py"):
            if "_antlr" not in path.parts:
                yield path


def _known(module: str) -> bool:
    """Whether ``module`` names a module or package (not a name imported from one)."""
    rel = module.split(".")[1:]
    if rel[:1] == ["runtime"]:
        base = ROOT / "runtime" / pathlib.Path(*rel[1:]) if rel[1:] else ROOT / "runtime"
    elif rel[:1] in (["stdlib"], ["_antlr"]):
        return False
    else:
        base = ROOT / "compiler" / pathlib.Path(*rel) if rel else ROOT / "compiler"
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def package_graph() -> dict:
    graph: dict = {pkg: set() for pkg in PACKAGES}
    for path in _modules():
        src_pkg = _package_of(_module_name(path))
        for target in _imports(path):
            if not _known(target):
                continue
            dst = _package_of(target)
            if dst and dst != src_pkg and not src_pkg.startswith(dst + ".") or (dst and dst.startswith(src_pkg + ".")):
                if dst != src_pkg:
                    graph[src_pkg].add(dst)
    return graph


def _cycle(graph: dict):
    colour: dict = {}
    stack: list = []

    def visit(n):
        colour[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if colour.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in colour:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        colour[n] = 2
        return None

    for n in sorted(graph):
        if n not in colour:
            found = visit(n)
            if found:
                return found
    return None


def test_every_module_belongs_to_a_package():
    for path in _modules():
        assert _package_of(_module_name(path)) is not None, path


def test_package_import_graph_has_no_cycle():
    cycle = _cycle(package_graph())
    assert cycle is None, " -> ".join(cycle)


def test_runtime_imports_nothing_from_the_compiler():
    offenders = []
    for path in _modules():
        if path.relative_to(ROOT).parts[0] != "runtime":
            continue
        for target in _imports(path):
            if _known(target) and not target.startswith("tlop.runtime"):
                offenders.append(f"{path.relative_to(ROOT)} imports {target}")
    assert offenders == []


def test_measure_depends_only_on_runtime():
    for path in (ROOT / "runtime" / "measure").rglob("*.py"):
        for target in _imports(path):
            if _known(target):
                assert target.startswith("tlop.runtime"), f"{path.name} imports {target}"


def test_the_checker_sees_a_cycle():
    """The cycle finder is not vacuous: it reports a planted cycle."""
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) is not None
    assert _cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("module", sorted(PACKAGES))
def test_package_imports(module):
    import importlib

    importlib.import_module(module)
