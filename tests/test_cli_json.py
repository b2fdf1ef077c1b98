"""--json on every command, stable diagnostic codes, tlop check DIR, colour, tlop profiles NAME."""

import io
import json
import re
from pathlib import Path

import jsonschema
import pytest

from tlop.cli.colour import colour_diagnostics, wants_colour
from tlop.cli.main import main
from tlop.runtime.codes import CODES, code_of
from tlop.runtime.diagnostics import Diagnostic

ROOT = Path(__file__).parent.parent
SCHEMA = json.loads((ROOT / "docs" / "_static" / "check.schema.json").read_text())
GOLDEN = Path(__file__).parent / "golden" / "cli_json"


def run_json(argv, capsys, status=0):
    assert main(argv + ["--json"]) == status
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / ".hidden").mkdir()
    (tmp_path / "a.tlop").write_text("model taulop\nalgorithm a(P: int) = 1us\n")
    (tmp_path / "sub" / "b.tlop").write_text("model taulop\nalgorithm b(P: int) = 1us + 1B\n")
    (tmp_path / "sub" / "c.tlop").write_text("model taulop\nalgorithm c(m: bytes) = T2[shm](m)\n")
    (tmp_path / ".hidden" / "skip.tlop").write_text("this is not checked\n")
    return tmp_path


def test_check_dir_checks_every_file_and_continues_after_errors(tree, capsys):
    assert main(["check", str(tree)]) == 1
    cap = capsys.readouterr()
    assert cap.out.splitlines() == [f"{tree / 'a.tlop'}: ok (1 algorithm)",
                                    "3 files checked: 1 ok, 2 with errors"]
    assert "cannot add time (s) and size (B)" in cap.err and "unknown" in cap.err and "skip.tlop" not in cap.err
    assert "\033[" not in cap.err  # not a terminal: no colour


def test_check_json_validates_against_the_documented_schema(tree, capsys):
    out = run_json(["check", str(tree)], capsys, status=1)
    jsonschema.validate(out, SCHEMA)
    assert out["ok"] is False
    assert [(Path(f["file"]).name, f["ok"]) for f in out["files"]] == [("a.tlop", True), ("b.tlop", False),
                                                                      ("c.tlop", False)]
    first = out["diagnostics"][0]
    assert (Path(first["file"]).name, first["line"], first["column"], first["end_line"], first["end_column"],
            first["severity"], first["code"]) == ("b.tlop", 2, 23, 2, 30, "error", "E005")
    assert out["diagnostics"][1]["code"] == "E003"
    ok = run_json(["check", "taulop/bcast", "taulop/allgather"], capsys)
    jsonschema.validate(ok, SCHEMA)
    assert ok["ok"] and ok["diagnostics"] == [] and "binomial_bcast" in ok["files"][0]["algorithms"]


def test_an_empty_directory_is_an_error(tmp_path, capsys):
    assert main(["check", str(tmp_path)]) == 1
    assert "no .tlop files under this directory" in capsys.readouterr().err


def test_any_command_failing_under_json_prints_diagnostics_json(capsys):
    out = run_json(["eval", "taulop/bcast", "binomial_bcast", "P=0", "m=1KiB"], capsys, status=1)
    jsonschema.validate(out, SCHEMA)
    (d,) = out["diagnostics"]
    assert d["code"] == "E010" and "violates the constraint" in d["message"]
    out = run_json(["sweep", "taulop/bcast", "binomial_bcast", "P=2", "m=1zz"], capsys, status=1)
    assert out["diagnostics"][0]["code"] in ("E004", "E030")


# --------------------------------------------------------------------------- codes

def golden_messages():
    msgs = set()
    for f in (Path(__file__).parent / "golden" / "diagnostics").iterdir():
        for line in f.read_text().splitlines():
            m = re.match(r"^(?:\S.*?: )?error\[E\d{3}\]: (.*)$", line)
            if m:
                msgs.add(m.group(1))
    return sorted(msgs)


def test_every_golden_diagnostic_has_a_specific_code():
    """No diagnostic of the golden corpus falls through to E099 'other error'."""
    unclassified = [m for m in golden_messages() if code_of(Diagnostic(m)) == "E099"]
    assert not unclassified
    assert len(golden_messages()) > 40


@pytest.mark.parametrize("message, code", [
    ("unexpected '*' expecting {'(', NUMBER, ID}", "E001"),
    ("'stage' is a reserved word; choose another name", "E002"),
    ("unknown name 'Q'", "E003"),
    ("unknown unit 'zz'; sizes: B", "E004"),
    ("cannot add time (s) and size (B)", "E005"),
    ("duplicate definition of 'a'", "E006"),
    ("import cycle: a.tlop -> b.tlop -> a.tlop", "E007"),
    ("recursive call of 'f' (definitions cannot recurse)", "E008"),
    ("missing argument 'y' in call of 'half'", "E009"),
    ("argument P = 0 violates the constraint P >= 1", "E010"),
    ("m=2us: m is bytes, but 'us' is a unit of time", "E030"),
    ("table 'g' is missing from profile 'metropolis'", "E020"),
])
def test_codes(message, code):
    assert code_of(Diagnostic(message)) == code
    assert code_of(Diagnostic(message, code="E040")) == "E040"  # a code given by the raiser wins


def test_every_code_is_documented():
    doc = (ROOT / "docs" / "cli.rst").read_text()
    for code, title, _ in CODES:
        assert re.search(rf"^{code}\s+\S", doc, re.M), code
    assert len({c for c, _, _ in CODES}) == len(CODES)


def test_every_code_used_in_the_source_is_documented_and_nothing_else():
    """A code given by a raiser or an error class (``code="E060"``) is documented like the
    classified ones, and the documentation lists no code the source does not know."""
    used = set()
    for path in [*(ROOT / "compiler").rglob("*.py"), *(ROOT / "runtime").rglob("*.py")]:
        used |= set(re.findall(r"[\"'](E\d{3})[\"']", path.read_text()))
    documented = set(re.findall(r"^(E\d{3})\s+\S", (ROOT / "docs" / "cli.rst").read_text(), re.M))
    assert {c for c, _, _ in CODES} <= used
    assert used == documented, (used - documented, documented - used)


def test_the_text_diagnostic_shows_the_same_code_as_json(tree, capsys):
    """``file:line:col: error[E005]: …`` on stderr, ``"code": "E005"`` with --json."""
    path = str(tree / "sub")
    assert main(["check", path]) == 1
    text_codes = re.findall(r"^\S+:\d+:\d+: error\[(E\d{3})\]: ", capsys.readouterr().err, re.M)
    out = run_json(["check", path], capsys, status=1)
    assert text_codes == [d["code"] for d in out["diagnostics"]] == ["E005", "E003"]


# --------------------------------------------------------------------------- colour

class Tty(io.StringIO):
    def isatty(self):
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch):
    for var in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(var, raising=False)
    assert wants_colour(Tty()) and not wants_colour(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wants_colour(Tty())
    monkeypatch.setenv("NO_COLOR", "")  # empty: not set (no-color.org)
    assert wants_colour(Tty())
    monkeypatch.setenv("TERM", "dumb")
    assert not wants_colour(Tty())
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert wants_colour(io.StringIO())


def test_colouring_keeps_the_text():
    text = "f.tlop:2:23: error[E005]: cannot add time (s) and size (B)\n    a = 1us + 1B\n        ^^^^^^^^\n  note: x"
    coloured = colour_diagnostics(text)
    assert "\033[31merror[E005]\033[0m" in coloured and "\033[32m^^^^^^^^" in coloured
    assert re.sub(r"\033\[[0-9;]*m", "", coloured) == text


def test_cli_colours_diagnostics_on_a_terminal(tree, capsys, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert main(["check", str(tree / "sub" / "b.tlop")]) == 1
    assert "\033[1m\033[31merror[E005]\033[0m" in capsys.readouterr().err
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["check", str(tree / "sub" / "b.tlop")]) == 1
    assert "\033[" not in capsys.readouterr().err


# --------------------------------------------------------------------------- --json per command

def test_show_json(capsys):
    out = run_json(["show", "taulop/p2p", "p2p"], capsys)
    (a,) = out["algorithms"]
    assert a["algorithm"] == "p2p" and a["text"] == "T^c(m)" and a["signature"].startswith("p2p(m: bytes")


def test_sweep_json_has_every_point_at_full_precision(capsys):
    out = run_json(["sweep", "taulop/bcast", "binomial_bcast", "P=2..8:x2", "m=1KiB,1MiB"], capsys)
    assert out["parameters"] == ["P", "m"] and len(out["points"]) == 6
    assert out["points"][0] == {"P": 2, "m": 1024, "seconds": out["points"][0]["seconds"]}
    p16 = [p for p in run_json(["sweep", "taulop/bcast", "binomial_bcast", "P=16", "m=1MiB"], capsys)["points"]]
    assert p16[0]["seconds"] == 0.0012170413


def test_best_json_says_why_each_excluded_algorithm_is_excluded(capsys):
    out = run_json(["best", "taulop/bcast", "P=8", "m=1KiB,1MiB"], capsys)
    assert out["algorithms"] == ["binomial_bcast", "linear_bcast"]
    assert {e["algorithm"] for e in out["excluded"]} == {"linear", "binomial", "binomial_openmpi"}
    assert all("mapping" in e["reason"] for e in out["excluded"])
    (p,) = [p for p in out["points"] if p["m"] == 1024]
    assert p["best"] == min(p["costs"], key=p["costs"].get) and p["seconds"] == min(p["costs"].values())


def test_profiles_json(capsys):
    out = run_json(["profiles"], capsys)
    by = {p["name"]: p for p in out["profiles"]}
    assert out["default"] == "metropolis"
    assert by["localhost-example"]["families"] == ["τ-Lop", "pLogP", "LogGP", "postal"]  # postal: the CPU paths tlop measure writes
    assert by["metropolis"]["families"] == ["τ-Lop"]
    one = run_json(["profiles", "metropolis"], capsys)
    (L,) = [t for t in one["tables"] if t["name"] == "L" and t["channel"] == "shm"]
    assert L["m"]["min"] == 1 and L["m"]["max"] == 4194304 and L["tau"] == {"min": 1, "max": 8, "points": 8}
    assert one["families_missing"]["LogGP"] == ["L", "o", "g", "G"]


def test_rules_json(capsys):
    out = run_json(["rules", "--family", "fold"], capsys)
    assert out["rules"] and all(r["family"] == "fold" for r in out["rules"])


def test_prove_json(capsys):
    out = run_json(["prove", "taulop/bcast", "binomial_bcast(P, m, shm) <= linear_bcast(P, m, shm)",
                    "--for", "P=2..3", "--timeout", "60"], capsys, status=1)
    assert [(i["instance"], i["status"]) for i in out["instances"]] == [({"P": 2}, "proved"), ({"P": 3}, "refuted")]
    assert out["proved"] == 1 and out["total"] == 2
    assert "T^shm(m = " in out["instances"][1]["detail"]  # the solver's table values, with units
    assert re.match(r"counterexample: m = [0-9.e+-]+ B\n", out["instances"][1]["detail"])  # m is bytes


def test_explain_json(capsys):
    out = run_json(["explain", "taulop/allgather", "ring", "P=8", "m=1KiB", "--mapping", "sequential(4)"], capsys)
    assert out["seconds"] > 0 and out["arguments"] == {"P": 8, "m": 1024}


# --------------------------------------------------------------------------- profiles NAME

@pytest.mark.parametrize("name", ["localhost-example", "metropolis"])
def test_profiles_detail_golden(name, capsys, update_golden):
    assert main(["profiles", name]) == 0
    out = capsys.readouterr().out.replace(str(ROOT), "ROOT")
    path = GOLDEN / f"profiles_{name}.txt"
    if update_golden:
        path.write_text(out)
    assert out == path.read_text()


def test_profiles_list_says_which_families_each_prices(capsys):
    assert main(["profiles"]) == 0
    out = capsys.readouterr().out
    assert "  prices:   τ-Lop (+ reductions), pLogP (+ reductions), LogGP (+ reductions), postal\n" in out
    assert "  prices:   τ-Lop (+ reductions)\n" in out


# --------------------------------------------------------------------------- prove: Ctrl-C, timeout

def test_an_interrupted_solver_check_is_an_interrupt_not_unknown():
    from tlop.analysis import prove

    class Solver:
        def __init__(self, reason):
            self.reason = reason

        def reason_unknown(self):
            return self.reason

    prove._interrupted(Solver("timeout"))  # a timeout stays 'unknown'
    with pytest.raises(KeyboardInterrupt):
        prove._interrupted(Solver("interrupted from keyboard"))  # what Z3 says after Ctrl-C


def test_prove_interrupted_exits_130_after_the_decided_instances(capsys, monkeypatch):
    from tlop.analysis import prove

    real, calls = prove.prove_relation, []

    def interrupted_second(*a, **k):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(prove, "prove_relation", interrupted_second)
    assert main(["prove", "taulop/bcast", "binomial_bcast(P, m, shm) <= linear_bcast(P, m, shm)",
                 "--for", "P=2..4"]) == 130
    cap = capsys.readouterr()
    assert cap.out.startswith("proved (") and "P = 2" in cap.out and "P = 3" not in cap.out
    assert cap.err == "tlop: interrupted\n"


def test_prove_unknown_names_the_timeout(capsys, monkeypatch):
    from tlop.analysis import prove

    monkeypatch.setattr(prove, "prove_relation", lambda *a, **k: prove.Outcome("unknown"))
    assert main(["prove", "taulop/bcast", "binomial_bcast(P, m, shm) <= linear_bcast(P, m, shm)",
                 "--timeout", "7"]) == 1
    assert "within 7 s per check" in capsys.readouterr().out


def test_explain_derivation_json(tmp_path, capsys):
    f = tmp_path / "ex.tlop"
    f.write_text('model taulop\nimport "taulop/platform"\n'
                 "algorithm f(m: bytes) = T[shm](m) + T[shm](m) + 0 * T[shm](m)\n")
    out = run_json(["explain", str(f), "f"], capsys)
    assert out["algorithm"] == "f" and [s["rule"] for s in out["steps"]][:2] == ["gather-twice", "mul-zero"]
    assert out["steps"][0] == {"rule": "gather-twice", "kind": out["steps"][0]["kind"], "axioms": [],
                               "before": "T^shm(m) + T^shm(m)", "after": "2·T^shm(m)"}
    assert out["result"]["text"] == "2·T^shm(m)"
    assert out["terms"]["after"] < out["terms"]["before"]
    # an algorithm with a schedule: --json alone still asks for a point
    assert main(["explain", "taulop/allgather", "ring", "--json"]) == 1
    assert "no schedule" not in capsys.readouterr().out


def _raise_sites():
    """(file:line, message template) of every diagnostic raised with a literal message in the
    source, its f-string fields replaced by ``1``; error classes with their own code are left out."""
    import ast

    classes = {"TlopError", "EvalError", "Diagnostic", "error"}  # classified by their message
    for path in sorted([*(ROOT / "compiler").rglob("*.py"), *(ROOT / "runtime").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            first = node.args[0]
            if name not in classes:
                continue
            if isinstance(first, ast.JoinedStr):
                text = "".join(v.value if isinstance(v, ast.Constant) else "1" for v in first.values)
            elif isinstance(first, ast.Constant) and isinstance(first.value, str):
                text = first.value
            else:
                continue
            yield f"{path.relative_to(ROOT)}:{node.lineno}", text


#: messages made of another diagnostic's message (which keeps its own code) or a code given
#: explicitly; the sends of a schedule ('send 3 -> 4 : …: the destination rank …') are E022
_WRAPPERS = {"1: 1", "1 at 11", "11", "1: the 1 rank 1 is outside 0 … 1 (P = 1)"}


def test_every_raise_site_has_a_specific_code():
    """No literal diagnostic of the source falls through to E099 'other error' (a new kind of
    error gets a code of its own, or a pattern of an existing one, in tlop.runtime.codes)."""
    sites = list(_raise_sites())
    assert len(sites) > 250
    other = [(where, text) for where, text in sites
             if text not in _WRAPPERS and code_of(Diagnostic(text)) == "E099"]
    assert not other, other
