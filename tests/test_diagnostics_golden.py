"""Golden diagnostics: every kind of user error prints file:line:col, the line and a caret.

Each ``tests/golden/diagnostics/NAME.tlop`` is run through the CLI in-process (``tlop check FILE``,
or the command in a first-line ``# args:`` comment); stderr must equal ``NAME.txt``.  Rewrite the
expected files with ``pytest --update-golden`` and review the diff.
"""

import re
import shlex
from pathlib import Path

import pytest

from tlop.cli.main import main
from conftest import check_golden

GOLDEN = Path(__file__).parent / "golden" / "diagnostics"
CASES = sorted(p for p in GOLDEN.glob("*.tlop") if not p.name.startswith("import_cycle_b"))


def run_case(path: Path, capsys, monkeypatch):
    monkeypatch.chdir(GOLDEN)
    first = path.read_text().splitlines()[0]
    m = re.match(r"#\s*args:\s*(.*)", first)
    argv = shlex.split(m.group(1).format(file=path.name)) if m else ["check", path.name]
    status = main(argv)
    out = capsys.readouterr()
    return status, out.err


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_diagnostic(path, capsys, monkeypatch, update_golden):
    status, err = run_case(path, capsys, monkeypatch)
    assert status == 1, f"expected a user error, got status {status}"
    assert "Traceback" not in err
    check_golden(path.with_suffix(".txt"), err, update_golden)


def test_enough_kinds_of_error():
    assert len(CASES) >= 15


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_every_diagnostic_has_location_and_caret(path):
    if path.name.startswith("cli_"):
        pytest.skip("command-line errors have no source location")
    text = path.with_suffix(".txt").read_text()
    first = text.splitlines()[0]
    assert re.match(r"^[\w./-]+:\d+:\d+: error\[E\d{3}\]: ", first), first
    assert re.search(r"^ +\^+$", text, re.M), "no caret line"
