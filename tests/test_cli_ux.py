"""The command line as HPC users expect it (issue 25), in-process, with golden output under
tests/golden/cli_ux/: options between the algorithm and NAME=VALUE, "did you mean", mappings
written as NODESxRANKS or read from MPI host files, ranges that say what they produced, …"""

from pathlib import Path

import pytest

from tlop.cli.main import main

GOLDEN = Path(__file__).parent / "golden" / "cli_ux"


def run(argv, capsys):
    """(exit status, stdout, stderr) of ``tlop argv``."""
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


#: name -> (argv, expected exit status); stdout and stderr are compared with the golden file
CASES = {
    "intermixed_eval": (["eval", "taulop/bcast", "binomial_bcast", "--profile", "lusitania", "P=16",
                         "--engine", "interp", "m=1KiB"], 0),
    "intermixed_sweep": (["sweep", "taulop/bcast", "binomial_bcast", "P=2,4", "--engine", "interp",
                          "m=1KiB", "--profile", "lusitania"], 0),
    "did_you_mean_module": (["eval", "taulop/bcat", "binomial_bcast", "P=16", "m=1KiB"], 1),
    "did_you_mean_algorithm": (["eval", "taulop/bcast", "binomal", "P=16", "m=1KiB"], 1),
    "did_you_mean_unit": (["eval", "taulop/bcast", "binomial_bcast", "P=16", "m=1mb"], 1),
    "did_you_mean_parameter": (["sweep", "taulop/bcast", "binomial_bcast", "p=16", "m=1KiB"], 1),
    "mapping_without_q": (["eval", "taulop/allgather", "ring", "P=8", "m=1KiB", "--mapping", "sequential"], 1),
    "mapping_nodes_x_ranks": (["eval", "taulop/allgather", "ring", "m=1KiB", "--mapping", "4x2",
                               "--engine", "interp"], 0),
}


def test_an_unknown_module_of_a_family_lists_that_family(capsys):
    from tlop.frontend.loader import stdlib_modules

    rc, _, err = run(["eval", "taulop/nope", "binomial_bcast"], capsys)
    head, _, listed = err.partition("; modules of taulop: ")
    assert rc == 1 and head == "tlop: error[E007]: no such file or stdlib module: 'taulop/nope'"
    assert listed.strip().split(", ") == [m for m in stdlib_modules() if m.startswith("taulop/")]


def test_intermixed_options_give_the_same_result_as_options_first(capsys):
    # a first run may note on stderr that it created the cache directory: not this test's subject
    run(["eval", "taulop/bcast", "binomial_bcast", "--profile", "lusitania", "P=16", "m=1KiB"], capsys)
    a = run(["eval", "taulop/bcast", "binomial_bcast", "--profile", "lusitania", "P=16", "m=1KiB"], capsys)
    b = run(["eval", "--profile", "lusitania", "taulop/bcast", "binomial_bcast", "P=16", "m=1KiB"], capsys)
    assert a == b and a[0] == 0 and "lusitania" in a[1]


def test_best_and_explain_take_intermixed_options(capsys):
    rc, out, err = run(["best", "taulop/bcast", "--profile", "lusitania", "P=16", "--only", "binomial_bcast",
                        "m=1KiB"], capsys)
    assert rc == 0 and "on lusitania" in out, err
    rc, out, err = run(["explain", "taulop/allgather", "ring", "--mapping", "sequential(4)", "P=8",
                        "--profile", "lusitania", "m=1KiB"], capsys)
    assert rc == 0 and "over sequential(4) on lusitania" in out, err


def test_a_host_file_is_read_as_a_layout(tmp_path, capsys):
    from tlop.runtime.mapping import parse_mapping

    hydra = tmp_path / "hosts"
    hydra.write_text("# two nodes\nnode0:4\nnode1:4  # second\n")
    ompi = tmp_path / "hostfile.txt"
    ompi.write_text("node0 slots=4\nnode1 slots=4 max_slots=8\n")
    for f in (hydra, ompi):
        lay = parse_mapping(str(f))
        assert lay.node == (0, 0, 0, 0, 1, 1, 1, 1) and lay.node_names == ("node0", "node1")
    import numpy as np

    seq2 = parse_mapping("sequential(2)").node_of(np.arange(8), 8)
    assert parse_mapping("4x2").node == tuple(int(n) for n in seq2) == (0, 0, 1, 1, 2, 2, 3, 3)
    # the host file prices a schedule as the equivalent sequential mapping does
    rc_a, out_a, _ = run(["eval", "taulop/allgather", "ring", "m=1KiB", "--mapping", str(hydra), "--json"], capsys)
    rc_b, out_b, _ = run(["eval", "taulop/allgather", "ring", "P=8", "m=1KiB", "--mapping", "sequential(4)",
                          "--json"], capsys)
    import json

    assert rc_a == rc_b == 0
    assert json.loads(out_a)["seconds"] == json.loads(out_b)["seconds"]
    bad = tmp_path / "bad"
    bad.write_text("node0:4\nnode1:x\n")
    rc, _, err = run(["eval", "taulop/allgather", "ring", "m=1KiB", "--mapping", str(bad)], capsys)
    assert rc == 1 and f"{bad}:2: not a host line: 'node1:x'" in err


CASES.update({
    "configs": (["configs"], 0),
    "configs_fig8": (["configs", "fig8"], 0),
    "explain_code_e021": (["explain-code", "E021"], 0),
    "help_unknown_code": (["help", "E999"], 1),
    "best_matrix_cost_and_margin": (["best", "taulop/collectives", "P=2..32:x4", "m=1KiB,1MiB", "seg=8KiB",
                                     "--only", "binomial_bcast", "--only", "linear_bcast", "--only",
                                     "scatter_allgather_bcast", "--engine", "interp"], 0),
    "best_rows_next_best": (["best", "taulop/bcast", "P=8", "m=1KiB..1MiB:x32", "--engine", "interp"], 0),
})


def test_help_code_is_explain_code(capsys):
    assert run(["help", "e21"], capsys) == run(["explain-code", "E021"], capsys)
    rc, out, _ = run(["help", "sweep"], capsys)
    assert rc == 0 and out.startswith("usage: tlop sweep")


def _code_examples():
    from tlop.cli.cmd_info import EXPLANATIONS

    return [(code, ex) for code, (_, _, ex) in sorted(EXPLANATIONS.items()) if ex.startswith("tlop ")]


@pytest.mark.parametrize("code, example", _code_examples())
def test_every_command_example_of_explain_code_raises_its_code(code, example, capsys):
    import shlex

    rc, out, err = run(shlex.split(example)[1:], capsys)
    assert rc == 1 and f"error[{code}]" in err, err


def test_configs_json_lists_every_bundled_configuration(capsys):
    import json

    from tlop.runtime.configs import bundled_configs

    rc, out, _ = run(["configs", "--json"], capsys)
    rows = json.loads(out)["configs"]
    assert rc == 0 and sorted(r["name"] for r in rows) == sorted(bundled_configs())
    fig8 = next(r for r in rows if r["name"] == "fig8")
    assert fig8["P"] == 6 and fig8["nodes"] == 2 and fig8["ranks_per_node"] == [3]


# (last: after every CASES.update above)
@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name, capsys, golden):
    argv, status = CASES[name]
    rc, out, err = run(argv, capsys)
    assert rc == status, err
    golden(GOLDEN / f"{name}.txt", out + ("--- stderr\n" + err if err else ""))


RD = """model taulop
import "taulop/platform"
algorithm rd(P: int >= 1, m: bytes, S: bytes > 0B) where P & (P - 1) == 0 and S <= m =
    (m / S) * o[shm](S) + log2(P) * 1us
"""


def test_sweep_skips_points_its_where_condition_excludes(tmp_path, capsys, golden):
    f = tmp_path / "rd.tlop"
    f.write_text(RD)
    rc, out, err = run(["sweep", str(f), "rd", "P=2..8", "m=256B,1KiB", "S=512", "--engine", "interp"], capsys)
    assert rc == 0
    golden(GOLDEN / "sweep_where_skipped.txt", out + "--- stderr\n" + err)
    rc, out, err = run(["sweep", str(f), "rd", "P=2..8", "m=1KiB", "S=512", "--json"], capsys)
    import json

    points = json.loads(out)["points"]
    assert [p["P"] for p in points if p["seconds"] is None] == [3, 5, 6, 7]
    # best leaves the same points out: its winner there is '-'
    rc, out_b, _ = run(["best", str(f), "P=2..8", "m=1KiB", "S=512", "--csv", "-"], capsys)
    assert rc == 0 and [r.split(",")[0] for r in out_b.splitlines()[1:] if ",-," in r] == ["3", "5", "6", "7"]
    rc, _, err = run(["sweep", str(f), "rd", "P=2..8", "m=1KiB", "S=512", "--invalid", "error"], capsys)
    assert rc == 1 and "error[E010]" in err


def test_ranges_say_what_they_produced(capsys, golden):
    rc, out, err = run(["sweep", "taulop/bcast", "binomial_bcast", "P=2..64:x4", "m=8KiB..1MiB:x4", "--csv", "-"],
                       capsys)
    assert rc == 0 and len(out.splitlines()) == 1 + 3 * 4
    rc, out2, err2 = run(["sweep", "taulop/bcast", "binomial_bcast", "P=2..64:2", "m=1KiB", "--csv", "-"], capsys)
    assert rc == 0 and len(out2.splitlines()) == 1 + 32
    rc, out3, err3 = run(["sweep", "taulop/bcast", "binomial_bcast", "P=2..64:x2", "m=1KiB..4MiB:x4", "--csv", "-"],
                         capsys)
    assert rc == 0 and "does not land" not in err3 and "the step" not in err3  # the bounds are reached: no note
    assert out3.splitlines()[-1].startswith("64,4194304")  # the bound included
    notes = [ln for ln in (err + err2).splitlines() if ": warning: P=" in ln or ": warning: m=" in ln]
    golden(GOLDEN / "range_notes.txt", "\n".join(notes) + "\n")  # (not the profile's out-of-grid warnings)


def test_the_suggestion_test_is_the_languages():
    """One 'did you mean' rule: the elaborator's is runtime/suggest.close itself (the runtime
    cannot import the front end, so the front end imports it), and it means one edit apart."""
    from tlop.frontend.elaborate import _close
    from tlop.runtime.suggest import close

    assert _close is close
    assert close("binomal", "binomial") and close("rng", "ring") and not close("rign", "ring") and close("mb", "MB")
    assert not close("ring", "ring") and not close("P", "seg") and not close("bnomia", "binomial")


@pytest.fixture(scope="module")
def bash_script(tmp_path_factory):
    from tlop.cli.completion import completion_script

    path = tmp_path_factory.mktemp("completion") / "tlop.bash"
    path.write_text(completion_script("bash"))
    return path


def _complete(script, *words):
    import shutil
    import subprocess

    if shutil.which("bash") is None:
        pytest.skip("needs bash")
    words_sh = " ".join(f"'{w}'" for w in words)
    out = subprocess.run(["bash", "-c", f"source '{script}'; COMP_WORDS=({words_sh}); COMP_CWORD={len(words) - 1}; "
                          f"_tlop; printf '%s\\n' \"${{COMPREPLY[@]}}\""], capture_output=True, text=True, check=True)
    return [w for w in out.stdout.splitlines() if w]


def test_bash_completes_algorithms_of_a_stdlib_module_and_configurations(bash_script):
    assert _complete(bash_script, "tlop", "eval", "taulop/bcast", "binomial_") == ["binomial_openmpi",
                                                                                  "binomial_bcast"]
    assert "ring" in _complete(bash_script, "tlop", "explain", "taulop/allgather", "ri")
    assert "fig8" in _complete(bash_script, "tlop", "sweep", "--config", "f")
    assert _complete(bash_script, "tlop", "eval", "taulop/bc") == ["taulop/bcast"]  # modules still


def test_fish_completion_names_commands_options_modules_and_algorithms(capsys):
    from tlop.cli.completion import stdlib_algorithms
    from tlop.cli.main import COMMANDS

    assert main(["completion", "fish"]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    for cmd in COMMANDS:
        assert any(ln.startswith(f"complete -c tlop -n __fish_use_subcommand -a '{cmd}' -d ") for ln in lines), cmd
    assert "complete -c tlop -n '__fish_seen_subcommand_from eval' -l engine -x -a 'auto jit interp'" \
        in "\n".join(lines)
    assert "complete -c tlop -n '__fish_seen_subcommand_from sweep' -l profile -r -F -a '" in text
    algs = stdlib_algorithms()
    assert algs["taulop/bcast"] == tlop_own("taulop/bcast")
    i = lines.index("        case 'taulop/bcast'")
    assert lines[i + 1] == "            printf '%s\\n' " + " ".join(f"'{a}'" for a in algs["taulop/bcast"])
    # quotes balanced on every line (fish would refuse the file otherwise)
    assert all(ln.replace("\\'", "").count("'") % 2 == 0 for ln in lines)


def tlop_own(module):
    import tlop

    return tlop.load(module).own_algorithms


@pytest.mark.parametrize("argv, coloured", [
    (["--color=always", "eval", "taulop/bcast", "binomal"], True),
    (["eval", "taulop/bcast", "binomal", "--color", "always"], True),
    (["--color", "always", "eval", "taulop/bcast", "binomal"], True),
    (["eval", "taulop/bcast", "binomal", "--color=never"], False),
    (["eval", "taulop/bcast", "binomal"], False),  # auto: captured stderr is not a terminal
])
def test_color_option(argv, coloured, capsys, monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")  # always wins over NO_COLOR, as an explicit flag does
    rc, _, err = run(argv, capsys)
    assert rc == 1 and "did you mean 'binomial'" in err
    assert ("\033[31merror[E003]" in err) == coloured


def test_color_never_wins_over_force_color(capsys, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\033[" in run(["eval", "taulop/bcast", "binomal"], capsys)[2]
    assert "\033[" not in run(["eval", "taulop/bcast", "binomal", "--color=never"], capsys)[2]


def test_json_records_the_mapping_and_a_user_profile_by_path_and_hash(tmp_path, capsys):
    import hashlib
    import json
    import shutil

    from tlop.runtime.profile import bundled_profiles

    mine = tmp_path / "mine.json"
    shutil.copy(bundled_profiles()["lusitania"], mine)
    digest = hashlib.sha256(mine.read_bytes()).hexdigest()
    for argv in (["eval", "taulop/bcast", "binomial_bcast", "P=4", "m=1KiB"],
                 ["sweep", "taulop/bcast", "binomial_bcast", "P=4,8", "m=1KiB"],
                 ["best", "taulop/bcast", "P=4,8", "m=1KiB"]):
        rc, out, _ = run(argv + ["--profile", str(mine), "--json"], capsys)
        data = json.loads(out)
        assert rc == 0 and data["profile_path"] == str(mine.resolve()) and data["profile_sha256"] == digest
        rc, out, _ = run(argv + ["--json"], capsys)  # a bundled profile: its name says it all
        assert "profile_path" not in json.loads(out)
    rc, out, _ = run(["sweep", "taulop/allgather", "ring", "P=8", "m=1KiB,2KiB", "--mapping", "sequential(4)",
                      "--json"], capsys)
    assert json.loads(out)["mapping"] == "sequential(4)"
    rc, out, _ = run(["best", "taulop/bcast", "P=8", "m=1KiB", "--mapping", "4x2", "--json"], capsys)
    assert json.loads(out)["mapping"] == "layout 4x2 (8 ranks on 4 nodes)"


def test_export_markdown_writes_the_printed_table(tmp_path, capsys, golden):
    md = tmp_path / "sweep.md"
    rc, out, err = run(["sweep", "taulop/bcast", "binomial_bcast", "P=2..8:x2", "m=1KiB,1MiB", "--engine", "interp",
                        "--export-markdown", str(md)], capsys)
    assert rc == 0 and err == f"wrote {md}\n"
    text = md.read_text()
    # the same cells as the printed table
    printed = [ln.split("  ") for ln in out.splitlines()[2:]]
    assert [[c.strip() for c in r if c.strip()] for r in printed] == \
        [[c.strip() for c in ln.strip("|").split("|")] for ln in text.splitlines()[2:]]
    mb = tmp_path / "best.md"
    rc, out, err = run(["best", "taulop/bcast", "P=8", "m=1KiB..1MiB:x32", "--engine", "interp",
                        "--export-markdown", str(mb)], capsys)
    assert rc == 0
    golden(GOLDEN / "export_markdown.md", text + "\n" + mb.read_text())


@pytest.mark.parametrize("opt, value", [("--mapping", "sequential(4)"), ("--config", "fig8"),
                                        ("--layout", "x.json")])
def test_demo_refuses_the_options_it_cannot_honour(opt, value, capsys):
    rc, out, err = run(["demo", opt, value], capsys)
    assert rc == 1 and out == "" and f"error[E030]: {opt}: tlop demo prices closed forms that take no mapping" in err


def test_a_mapping_a_closed_form_ignores_or_contradicts_is_said(capsys):
    rc, out, err = run(["eval", "taulop/allgather", "ring_allgather_seq", "P=16", "m=1KiB", "Q=8",
                        "--mapping", "sequential(4)"], capsys)
    assert rc == 0 and err == ("tlop: warning: --mapping sequential(4): 'ring_allgather_seq' is a closed form, not "
                               "over a process mapping; the mapping is not used, and Q=8 contradicts it: it places "
                               "4 ranks per node at P=16\n")
    rc, out, err = run(["eval", "taulop/allgather", "ring_allgather_seq", "P=16", "m=1KiB", "Q=4",
                        "--mapping", "4x4"], capsys)
    assert rc == 0 and "the mapping is not used\n" in err and "contradicts" not in err
    rc, out, err = run(["eval", "taulop/allgather", "ring", "P=8", "m=1KiB", "--mapping", "sequential(4)"], capsys)
    assert rc == 0 and err == ""  # a schedule over the mapping uses it
