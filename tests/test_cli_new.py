"""tlop new NAME writes a starter that checks and runs as its comments say; tlop show --source/--path."""

import re
import shlex

from tlop.cli.main import main
from tlop.frontend.loader import STDLIB_DIR


def test_the_starter_checks_and_every_command_in_it_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["new", "coll"]) == 0
    assert capsys.readouterr().out == "wrote coll.tlop; try: tlop check coll.tlop\n"
    text = (tmp_path / "coll.tlop").read_text()
    commands = [c.strip() for c in re.findall(r"(?:Try:|^///\s{5,})\s*(tlop .*)$", text, re.M)]
    commands += re.findall(r"Check it: (tlop .*)$", text, re.M)
    assert len(commands) >= 5
    for c in commands:
        assert main(shlex.split(c)[1:]) == 0, c
    capsys.readouterr()
    assert main(["new", "coll.tlop"]) == 1  # never overwrites
    assert "coll.tlop exists; tlop new never overwrites a file" in capsys.readouterr().err
    assert (tmp_path / "coll.tlop").read_text() == text


def test_show_source_and_path_of_a_stdlib_module(capsys):
    assert main(["show", "taulop/p2p", "--path"]) == 0
    assert capsys.readouterr().out == f"{STDLIB_DIR / 'taulop' / 'p2p.tlop'}\n"
    assert main(["show", "taulop/p2p", "--source"]) == 0
    assert capsys.readouterr().out == (STDLIB_DIR / "taulop" / "p2p.tlop").read_text()
    assert main(["show", "taulop/nope", "--source"]) == 1
    assert "no such file or stdlib module" in capsys.readouterr().err
