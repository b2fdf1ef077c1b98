"""Process mappings (runtime/mapping.py): the placement rules of the reference library, the
command-line forms, and layout files with errors that name the field."""

import json
import re

import numpy as np
import pytest

from tlop.runtime.mapping import (Layout, MappingError, parse_mapping, read_layout, round_robin,
                                  sequential)


def test_sequential_fills_nodes_in_order():
    m = sequential(4)
    assert list(m.node_of(np.arange(10), 10)) == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]
    assert m.nodes(10) == 3 and m.node_of(7, 10) == 1
    by_nodes = sequential(nodes=3)            # Q = ⌈10/3⌉ = 4
    assert list(by_nodes.node_of(np.arange(10), 10)) == list(m.node_of(np.arange(10), 10))


def test_round_robin_deals_ranks_like_the_reference_library():
    # libtaulop: M = max(1, ⌈P/Q⌉), node(p) = p mod M
    m = round_robin(4)
    assert m.nodes(10) == 3
    assert list(m.node_of(np.arange(10), 10)) == [0, 1, 2, 0, 1, 2, 0, 1, 2, 0]
    assert round_robin(8).nodes(4) == 1            # P < Q: everything on node 0
    assert list(round_robin(nodes=2).node_of(np.arange(5), 5)) == [0, 1, 0, 1, 0]


@pytest.mark.parametrize("text, expect", [
    ("sequential(8)", sequential(8)), ("seq(2)", sequential(2)), ("round_robin(8)", round_robin(8)),
    ("rr(3)", round_robin(3)), ("round_robin(nodes=4)", round_robin(nodes=4)),
    (" sequential( Q = 16 ) ", sequential(16)),
])
def test_command_line_forms(text, expect):
    assert parse_mapping(text) == expect


@pytest.mark.parametrize("text, message", [
    ("", "needs a value"), ("sequential(0)", "between 1 and"), ("sequential(x)", "positive whole number"),
    ("blocky(4)", "unknown mapping"), ("round_robin(-1)", "positive whole number"),
    ("nope.json", "no such file"),
])
def test_bad_command_line_forms(text, message):
    with pytest.raises(MappingError, match=message.replace("(", r"\(")):
        parse_mapping(text)


def test_json_layout_with_named_nodes_and_kinds(tmp_path):
    f = tmp_path / "l.json"
    f.write_text(json.dumps({"tlop_layout": 1, "name": "two nodes", "nodes": {"a": {}, "b": {}},
                             "ranks": [{"node": "a", "kind": "cpu"}, {"node": "b", "kind": "gpu"},
                                       {"node": "a", "kind": "cpu"}]}))
    lay = read_layout(f)
    assert isinstance(lay, Layout) and lay.P == 3 and lay.nodes(3) == 2
    assert list(lay.node_of(np.arange(3), 3)) == [0, 1, 0] and lay.kinds == ("cpu", "gpu", "cpu")
    assert parse_mapping(str(f)) == lay


def test_csv_layout(tmp_path):
    f = tmp_path / "l.csv"
    f.write_text("rank,node\n1,0\n0,0\n2,1\n3,1\n")
    lay = read_layout(f)
    assert list(lay.node_of(np.arange(4), 4)) == [0, 0, 1, 1]


@pytest.mark.parametrize("doc, message", [
    ({"ranks": [{"node": 0}]}, "tlop_layout: expected 1"),
    ({"tlop_layout": 1, "ranks": []}, "ranks: expected a non-empty list"),
    ({"tlop_layout": 1, "ranks": [{"node": 0}, {"nod": 1}]}, r"ranks\[1\]: expected an object with a 'node'"),
    ({"tlop_layout": 1, "ranks": [{"node": -1}]}, r"ranks\[0\]\.node: expected a node name or a number"),
    ({"tlop_layout": 1, "ranks": [{"node": 0, "kind": 3}]}, r"ranks\[0\]\.kind"),
    ({"tlop_layout": 1, "ranks": [{"node": 0, "kind": "cpu"}, {"node": 1}]}, r"ranks\[1\]: a kind is given"),
    ({"tlop_layout": 1, "nodes": {"a": {}}, "ranks": [{"node": "b"}]}, "not declared in 'nodes'"),
    ({"tlop_layout": 1, "ranks": [{"node": 0}], "colour": 1}, "unknown field"),
])
def test_layout_errors_name_the_field(tmp_path, doc, message):
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(MappingError, match=message) as err:
        read_layout(f)
    assert str(f) in str(err.value)


@pytest.mark.parametrize("text, message", [
    ("rank,nodes\n0,0\n", "expected the header"), ("rank,node\n0,0\n0,1\n", "placed twice"),
    ("rank,node\n0,0\n2,1\n", "rank 1 is missing"), ("rank,node\nx,0\n", ":2: rank"),
    ("rank,node\n0\n", ":2: expected 2 fields"),
])
def test_csv_layout_errors_name_the_line(tmp_path, text, message):
    f = tmp_path / "bad.csv"
    f.write_text(text)
    with pytest.raises(MappingError, match=message):
        read_layout(f)


def test_layout_with_the_wrong_number_of_ranks():
    lay = Layout(node=(0, 0, 1, 1), source="four.json")
    with pytest.raises(MappingError, match="places 4 ranks, but the algorithm is evaluated with P=8"):
        lay.node_of(np.arange(8), 8)


def test_json_syntax_error_has_a_position(tmp_path):
    f = tmp_path / "broken.json"
    f.write_text('{"tlop_layout": 1,\n "ranks": [}')
    with pytest.raises(MappingError, match=r"broken.json:2:\d+: not valid JSON"):
        read_layout(f)


@pytest.mark.parametrize("m", [sequential(8, rack=4), round_robin(8, rack=1), sequential(nodes=6, rack=2),
                               round_robin(nodes=5, rack=3), sequential(8), round_robin(nodes=2)])
def test_racks_are_part_of_the_mapping_and_its_text_round_trips(m):
    again = parse_mapping(str(m))
    assert again == m and hash(again) == hash(m) and again.rack == m.rack
    assert (sequential(8, rack=4) == sequential(8)) is False   # racks change the mapping


def test_rack_of_a_node():
    m = sequential(2, rack=3)                     # nodes 0,1,2 rack 0; 3,4,5 rack 1; …
    nodes = m.node_of(np.arange(14), 14)
    assert list(m.rack_of(nodes)) == [0] * 6 + [1] * 6 + [2] * 2
    assert list(round_robin(nodes=4, rack=2).rack_of(np.arange(4))) == [0, 0, 1, 1]
    assert list(sequential(2).rack_of(nodes)) == [0] * 14 and sequential(2).rack_of(5) == 0  # no racks: one
    assert Layout(node=(0, 1)).rack is None


@pytest.mark.parametrize("text, message", [
    ("sequential(8, rack=0)", "rack (nodes per rack) must be a whole number between 1 and"),
    ("round_robin(8, rack=-2)", "rack (nodes per rack) must be a whole number >= 1"),
    ("rr(nodes=4, rack=x)", "rack (nodes per rack) must be a whole number >= 1"),
    ("seq(8, rack=2.5)", "must be a whole number >= 1"), ("sequential(8, 4)", "unknown mapping"),
    ("sequential(8, rack=)", "must be a whole number >= 1"),
])
def test_bad_racks_are_clear_errors(text, message):
    with pytest.raises(MappingError, match=re.escape(message)):
        parse_mapping(text)


@pytest.mark.parametrize("rack", [0, -1, 2.0, True, "4"])
def test_bad_racks_in_the_api(rack):
    with pytest.raises(MappingError, match=r"rack \(nodes per rack\)"):
        sequential(8, rack=rack)
    with pytest.raises(MappingError, match=r"rack \(nodes per rack\)"):
        round_robin(nodes=3, rack=rack)
