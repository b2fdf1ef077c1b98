"""Every stdlib file parses, checks, prints and re-parses to an equal AST, with spans everywhere."""

import pytest

import tlop
from tlop.frontend import ast as A
from tlop.frontend.loader import resolve_path, stdlib_modules
from tlop.frontend.parse import parse_text
from tlop.frontend.unparse import unparse

MODULES = stdlib_modules()


def test_stdlib_is_not_empty():
    assert {"taulop/platform", "taulop/bcast", "taulop/allgather", "plogp/bcast", "plogp/scatter",
            "loggp/p2p"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_round_trip(name):
    text = resolve_path(name).read_text()
    m1 = parse_text(text, name)
    printed = unparse(m1)
    m2 = parse_text(printed, name)
    assert m1 == m2
    assert unparse(m2) == printed  # the formatter is idempotent


@pytest.mark.parametrize("name", MODULES)
def test_every_node_has_a_span(name):
    m = parse_text(resolve_path(name).read_text(), name)
    for node in A.iter_nodes(m):
        assert node.span is not None, node
        assert node.span.line >= 1 and node.span.col >= 1


@pytest.mark.parametrize("name", MODULES)
def test_checks(name):
    module = tlop.load(name)
    for alg in module.own_algorithms:
        assert module[alg].doc, f"{name}:{alg} has no doc comment citing its source"


def test_every_declaration_is_documented():
    for name in MODULES:
        m = parse_text(resolve_path(name).read_text(), name)
        for d in m.decls:
            if isinstance(d, (A.AlgorithmDecl, A.TableDecl, A.ParamDecl, A.TransmissionDecl, A.ChannelDecl)):
                assert d.docs, f"{name}: {d.name} has no /// doc comment"
