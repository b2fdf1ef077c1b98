"""Issue 14, silent nonsense: a non-finite cost is an error naming what produced it, and a
negative size or a concurrency that is not positive is an error where it is used — with the
same words and location in the interpreter and the JIT (scalar calls and batches)."""

import numpy as np
import pytest

import tlop
from tlop.runtime.diagnostics import TlopError

SOURCE = """\
import "taulop/platform.tlop"
algorithm lg(P: int >= 1, m: bytes) = log2(P - P) * 1s
algorithm lgneg(P: int >= 1, m: bytes) = log2(P - P - 1) * 1s
algorithm zz(P: int >= 1, m: bytes) = (P - P) / (P - P) * 1s
algorithm infinf(P: int >= 1, m: bytes) = 1s / (P - P) - 1s / (P - P)
algorithm sq(P: int >= 1, m: bytes) = sqrt(P - P - 1) * 1s
algorithm absorbed(P: int >= 1, m: bytes) = (min(1 / (P - P), 1) + log2(P - P)) * 1s
algorithm ovf(P: int >= 1, m: bytes) = 10 ^ (P * 100) * 1s
algorithm letbound(P: int >= 1, m: bytes) = let z = ln(P - P) in 2 * z * 1s
algorithm viaif(P: int >= 1, m: bytes) = if P > 0 then 0 ^ (0 - P) * 1s else 1s
algorithm recovers(P: int >= 1, m: bytes) = 1s / (1 / (P - P))
algorithm tneg(P: int >= 1, m: bytes) = T[shm](-m)
algorithm conc(P: int >= 1, m: bytes) = (-4) || T[shm](m)
algorithm lneg(P: int >= 1, m: bytes) = L[shm](m, -3)
algorithm lzero(P: int >= 1, m: bytes) = L[shm](m, 0)
algorithm oneg(P: int >= 1, m: bytes) = o[shm](m - 2 * m)
algorithm count0(P: int >= 1, m: bytes) = (P - P) || T[shm](m) || T[net](m)
algorithm splitok(P: int >= 1, m: bytes, s: bytes) = T[shm](m - s) || T[shm](s)
"""

# algorithm -> (line:col of the culprit, words of the message)
CASES = {
    "lg": ("2:39", "'lg' costs -inf s, not a finite time, at P=4, m=1024: log2 of 0"),
    "lgneg": ("3:42", "costs NaN, not a finite time, at P=4, m=1024: log2 of a negative number (-1)"),
    "zz": ("4:40", "costs NaN, not a finite time, at P=4, m=1024: 0 / 0"),
    "infinf": ("5:43", "costs NaN, not a finite time, at P=4, m=1024: a division by zero (1 / 0)"),
    "sq": ("6:39", "sqrt of a negative number (-1)"),
    "absorbed": ("7:68", "costs -inf s, not a finite time, at P=4, m=1024: log2 of 0"),
    "ovf": ("8:40", "costs inf s, not a finite time, at P=4, m=1024: an overflow (10 ^ 400)"),
    "letbound": ("9:53", "costs -inf s, not a finite time, at P=4, m=1024: ln of 0"),
    "viaif": ("10:56", "costs inf s, not a finite time, at P=4, m=1024: 0 raised to a negative power (0 ^ -4)"),
    "tneg": ("12:41", "T[shm]: the message size is negative (-1024 B)"),
    "conc": ("13:42", "the left side of '||': the concurrency must be positive, not -4"),
    "lneg": ("14:41", "L[shm]: the concurrency must be positive, not -3"),
    "lzero": ("15:42", "L[shm]: the concurrency must be positive, not 0"),
    "oneg": ("16:41", "o[shm]: the message size is negative (-1024 B)"),
    "count0": ("17:54", "the count of transmission 'T' in a parallel composition: the concurrency must be positive, not 0"),
}
ARGS = {"P": 4, "m": 1024.0}
#: the diagnostic code of each case: no finite number (E040), or a value outside its domain (E041)
DOMAIN = {"tneg", "conc", "lneg", "lzero", "oneg", "count0"}


def _code(name):
    return "E041" if name in DOMAIN else "E040"


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "nonsense.tlop"
    path.write_text(SOURCE)
    return tlop.load(path)


def _message(fn):
    with pytest.raises(TlopError) as err:
        fn()
    return str(err.value)


@pytest.mark.parametrize("name", sorted(CASES))
def test_nonsense_is_an_error_at_its_source_in_both_engines(module, name):
    where, words = CASES[name]
    prof = tlop.default_profile()
    h = module[name]
    interp = _message(lambda: h.evaluate(prof, **ARGS))
    head = f"nonsense.tlop:{where}: error[{_code(name)}]: "
    assert head in interp and words in interp, interp
    ev = h.compile(prof)
    jit = _message(lambda: ev(**ARGS))
    assert jit.splitlines()[0].startswith(interp.splitlines()[0].split(" at P=")[0]), (jit, interp)
    assert head in jit and words.split(" at P=")[-1] in jit, jit
    assert jit.splitlines()[1:] == interp.splitlines()[1:]  # the same source line and caret
    # in a batch: the first bad point, named, with the same explanation
    batch = _message(lambda: ev.batch(P=np.array([4.0, 5.0]), m=np.array([1024.0, 1024.0])))
    assert "batch point (0,)" in batch and head in batch
    assert interp.splitlines()[0].split(": ")[-1] in batch.splitlines()[0]


def test_finite_results_and_dropped_increments_are_not_errors(module):
    prof = tlop.default_profile()
    assert module["recovers"].evaluate(prof, **ARGS) == 0.0
    assert module["recovers"].compile(prof)(**ARGS) == 0.0
    # inside a parallel composition a size below 0 counts as 0 (tlop.ir.taulop): s > m is fine
    h = module["splitok"]
    for m, s in ((1024.0, 4096.0), (4096.0, 1024.0)):
        want = h.evaluate(prof, P=4, m=m, s=s)
        assert want > 0 and h.compile(prof)(P=4, m=m, s=s) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("argv, words", [
    (["eval", "{f}", "lg", "P=4", "m=1KiB", "--engine", "interp"], "costs -inf s, not a finite time"),
    (["eval", "{f}", "lg", "P=4", "m=1KiB", "--engine", "jit"], "costs -inf s, not a finite time"),
    (["sweep", "{f}", "lg", "P=2..8:x2", "m=1KiB", "--engine", "interp"], "log2 of 0"),
    (["sweep", "{f}", "lg", "P=2..8:x2", "m=1KiB", "--engine", "jit"], "log2 of 0"),
])
def test_the_cli_prints_no_infinite_cost(module, argv, words, capsys):
    from tlop.cli.main import main

    assert main([a.replace("{f}", str(module.path)) for a in argv]) == 1
    captured = capsys.readouterr()
    assert "inf s  (" not in captured.out and words in captured.err


@pytest.mark.parametrize("body, where, chain", [
    ("transmission U[shm](m) = U[shm](m) + o[shm](m)\n", "2:26", "U[shm] -> U[shm]"),
    ("transmission U[shm](m) = V[shm](m)\ntransmission V[shm](m) = 2 || U[shm](m / 2)\n", "3:31",
     "U[shm] -> V[shm] -> U[shm]"),
    ("transmission U[net](m) = o[net](m) + (U[shm](m) || T[net](m))\n"
     "transmission U[shm](m) = U[net](m)\n", "3:26", "U[net] -> U[shm] -> U[net]"),
])
def test_a_recursive_transmission_fails_check(tmp_path, body, where, chain, capsys):
    from tlop.cli.main import main

    path = tmp_path / "rec.tlop"
    path.write_text('import "taulop/platform.tlop"\n' + body + "algorithm a(m: bytes) = U[shm](m)\n")
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"rec.tlop:{where}: error[E008]: transmission" in err and f"({chain}); transmissions cannot recurse" in err
    assert err.count("error[") == 1  # one cycle, reported once
