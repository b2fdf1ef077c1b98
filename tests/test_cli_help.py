"""Every subcommand's --help has a one-line description and examples, and every example parses."""

import shlex

import pytest

from tlop.cli.helptext import HELP
from tlop.cli.main import COMMANDS, build_parser, main


def test_every_command_has_help_text():
    assert set(HELP) == set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_description_and_examples(command, capsys):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    description, examples = HELP[command]
    assert description in out.replace("\n", " ") or description[:60] in out
    assert "examples:\n" in out
    for e in examples:
        assert f"  {e}\n" in out


@pytest.mark.parametrize("command, example", [(c, e) for c, (_, es) in HELP.items() for e in es])
def test_every_example_is_a_valid_command_line(command, example):
    argv = shlex.split(example)
    assert argv[0] == "tlop" and argv[1] == command
    args = build_parser(command).parse_args(argv[1:])  # exits (SystemExit) on a usage error
    assert args.command == command
