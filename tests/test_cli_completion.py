"""tlop completion bash|zsh: the generated function completes commands, options, their choices,
stdlib modules and profiles (run in a real bash)."""

import shutil
import subprocess

import pytest

from tlop.cli.main import COMMANDS, main

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    from tlop.cli.completion import completion_script

    path = tmp_path_factory.mktemp("completion") / "tlop.bash"
    path.write_text(completion_script("bash"))
    return path


def complete(script, *words):
    """COMPREPLY for the command line ``words`` (the last one is being typed)."""
    words_sh = " ".join(f"'{w}'" for w in words)
    out = subprocess.run(["bash", "-c", f"source '{script}'; COMP_WORDS=({words_sh}); COMP_CWORD={len(words) - 1}; "
                          f"_tlop; printf '%s\\n' \"${{COMPREPLY[@]}}\""], capture_output=True, text=True, check=True)
    return [w for w in out.stdout.splitlines() if w]


def test_commands(script):
    assert complete(script, "tlop", "") == list(COMMANDS) + ["--help", "--version"]
    assert complete(script, "tlop", "sw") == ["sweep"]


def test_options_and_their_choices(script):
    assert complete(script, "tlop", "eval", "f.tlop", "alg", "--engine", "") == ["auto", "jit", "interp"]
    assert complete(script, "tlop", "sweep", "--un") == ["--unit"]
    assert "ms" in complete(script, "tlop", "best", "x", "--unit", "")
    assert complete(script, "tlop", "prove", "--time") == ["--timeout"]


def test_modules_and_profiles(script):
    assert complete(script, "tlop", "show", "taulop/bc") == ["taulop/bcast"]
    assert complete(script, "tlop", "eval", "--profile", "metr") == ["metropolis"]


def test_the_scripts_are_valid_shell(tmp_path, capsys):
    for shell in ("bash", "zsh"):
        assert main(["completion", shell]) == 0
        text = capsys.readouterr().out
        f = tmp_path / f"c.{shell}"
        f.write_text(text)
        assert text.rstrip().endswith("complete -o filenames -F _tlop tlop")
        subprocess.run(["bash", "-n", str(f)], check=True)
