"""Configurations as data (tlop.runtime.configs): layout, partition and configuration files,
validated with the wrong field's file:line:col; the command-line options; config declarations."""

import json

import pytest

import tlop
from tlop.cli.main import main
from tlop.runtime.configs import (ConfigError, bundled_configs, layout_json, load_config, partition_json,
                                  read_layout_file, read_partition_file)
from tlop.runtime.jsonpos import positions


def test_positions_index_every_value():
    text = '{"a": [1, {"b": "x,]"}, [ ]],\n "c": {"d": null}, "e": {}}'
    idx = positions(text)
    assert idx[("a", 1, "b")] == (1, 17)
    assert idx[("c", "d")] == (2, 13)
    assert idx[("e",)] == (2, 25)


def _write(tmp_path, name, data):
    p = tmp_path / name
    p.write_text(json.dumps(data, indent=1) + "\n")
    return p


PART = {"tlop_partition": 1, "N": 4, "ranks": [{"x": 0, "y": 0, "w": 2, "h": 4}, {"x": 2, "y": 0, "w": 2, "h": 4}]}
LAYOUT = {"tlop_layout": 1, "node_types": {"big": {"cores": 4}}, "nodes": {"a": {"type": "big"}},
          "ranks": [{"node": "a", "kind": "cpu", "cores": 3}, {"node": "a", "kind": "gpu"}]}


def test_valid_files_round_trip(tmp_path):
    lay = read_layout_file(_write(tmp_path, "l.json", LAYOUT))
    part = read_partition_file(_write(tmp_path, "p.json", PART))
    assert lay.P == 2 and lay.cores == (3, 1) and lay.gpu() == (0, 1) and lay.type_names == ("big",)
    assert read_layout_file(_write(tmp_path, "l2.json", layout_json(lay))).node == lay.node
    assert read_partition_file(_write(tmp_path, "p2.json", partition_json(part))) == part


@pytest.mark.parametrize("change, where, message", [
    (lambda d: d["ranks"][1].update(w=3), ('"w": 3', 1), "ranks[1].w: expected a width in blocks between 1 and 2, got 3"),
    (lambda d: d["ranks"][1].update(x=1), ("{", 1), "ranks[1]: rectangle 1 overlaps rectangle 0"),
    (lambda d: d["ranks"][1].update(h=3), ('"ranks": [', 1), "the rectangles cover 14 of the 16 blocks"),
    (lambda d: d["ranks"][0].update(z=1), ('"z": 1', 1), "ranks[0].z: unknown field"),
    (lambda d: d.update(N="4"), ('"N": "4"', 3), "N: expected a matrix size in blocks, got '4'"),
])
def test_partition_errors_name_the_field_and_its_position(tmp_path, change, where, message):
    data = json.loads(json.dumps(PART))
    change(data)
    p = _write(tmp_path, "p.json", data)
    with pytest.raises(ConfigError) as err:
        read_partition_file(p)
    text = str(err.value)
    assert message in text
    d = err.value.diagnostics[0]
    line = p.read_text().splitlines()[d.span.line - 1]
    # the caret is on the offending value, on the line that holds it
    assert where[0] in line and line[d.span.col - 1:].startswith(where[0].split(": ")[-1]), text
    assert "^" in text  # the line quoted with a caret


def test_layout_errors(tmp_path):
    data = json.loads(json.dumps(LAYOUT))
    data["ranks"][1]["cores"] = 2
    with pytest.raises(ConfigError, match="use 5 cores; its type 'big' has 4"):
        read_layout_file(_write(tmp_path, "l.json", data))
    data["ranks"][1]["kind"] = "fpga"
    with pytest.raises(ConfigError, match=r'ranks\[1\].kind: expected "cpu" or "gpu"'):
        read_layout_file(_write(tmp_path, "l.json", data))
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ConfigError, match="not valid JSON"):
        read_layout_file(tmp_path / "bad.json")


def test_bundled_configurations_load():
    assert {"fig8", "fig9"} <= set(bundled_configs())
    cfg = load_config("fig8")
    assert cfg.P == 6 and cfg.select_partition("summa").partition.N == 256
    with pytest.raises(ConfigError, match="did you mean 'fig8'"):
        load_config("fig88")


def test_cli_eval_with_a_configuration(capsys):
    assert main(["eval", "kernels/summa", "summa_step", "k=80", "b=8KiB", "--config", "fig8"]) == 0
    assert "summa_step(P=6, k=80, b=8KiB) over fig8" in capsys.readouterr().out


def test_cli_layout_and_partition_files(tmp_path, capsys):
    lay = _write(tmp_path, "l.json", {"tlop_layout": 1, "ranks": [{"node": 0}, {"node": 1}]})
    part = _write(tmp_path, "p.json", PART)
    assert main(["eval", "kernels/summa", "summa", "b=1KiB", "--layout", str(lay), "--partition", str(part)]) == 0
    assert "summa(P=2, b=1KiB)" in capsys.readouterr().out
    assert main(["eval", "kernels/summa", "summa", "b=1KiB", "--partition", str(part)]) == 1
    assert "--partition needs a layout" in capsys.readouterr().err
    assert main(["eval", "kernels/summa", "summa", "b=1KiB", "--config", "fig8", "--mapping", "sequential(3)"]) == 1
    assert "give one of them" in capsys.readouterr().err


CONFIG_SRC = """import "kernels/platform.tlop"
config partition { N: int, x: int[P], z: int[P] }
algorithm a(P: int, b: bytes) over mapping = partition.x * 1s + partition.q[0] * 1s
"""


def test_config_declarations_are_checked(tmp_path):
    p = tmp_path / "c.tlop"
    p.write_text(CONFIG_SRC)
    with pytest.raises(tlop.TlopError) as err:
        tlop.load(str(p))
    text = str(err.value)
    assert "the configuration's partition has no field 'z'" in text
    assert "partition.x has one value per process: write partition.x[p]" in text
    assert "'partition' has no field 'q'" in text


@pytest.mark.parametrize("argv, message", [
    (["eval", "kernels/summa", "summa", "b=1KiB", "--config", "M10"], "2 partition(s) fit summa; choose one"),
    (["eval", "kernels/summa", "summa", "b=1KiB", "--layout", "nope.json"], "cannot read the layout: no such file"),
    (["explain", "kernels/summa", "summa", "b=1KiB", "--config", "fig8", "--at", "k=x"], "expected VAR=VALUE"),
    (["explain", "kernels/summa", "summa", "b=1KiB", "--config", "fig8", "--at", "q=3"],
     "has no 'sum q in …' to take a term of; its sums: k"),
    (["explain", "kernels/summa", "summa", "b=1KiB", "--config", "fig8", "--at", "k=3", "--unit", "zz"],
     "--unit zz: not a size parameter"),
    (["partition"], "give a configuration"),
])
def test_bad_configuration_arguments_are_one_clear_error(argv, message, capsys):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_layout_without_partition_names_the_missing_option(tmp_path, capsys):
    lay = _write(tmp_path, "l.json", {"tlop_layout": 1, "ranks": [{"node": 0}, {"node": 1}]})
    assert main(["eval", "kernels/summa", "summa_step", "k=0", "b=1KiB", "--layout", str(lay)]) == 1
    err = capsys.readouterr().err
    assert "no partition: give --partition FILE" in err and "summa.tlop:" in err and "^" in err
    assert "tlop: error" not in err.split("\n")[0].split(": error", 1)[1]  # not nested
