"""One schedule text priced in any model: ``import "@model/platform.tlop"`` and ``exchange``.

A model-neutral module (stdlib/coll) imports the platform of the model it is loaded for; the
``exchange a <-> b : m [combine]`` item is a send/receive pair that τ-Lop prices as the papers and
the reference library do (one transfer of weight 2, one reduction) and a dataflow model (LogGP,
pLogP) as two messages, each reduced by its receiver."""

import math

import pytest

import tlop
from tlop.runtime.diagnostics import TlopError

NEUTRAL = '''import "@model/platform.tlop"
/// recursive doubling with exchanges
algorithm rd(P: int >= 2, m: bytes) over map: mapping =
    stages s in 0 .. floor(log2(P)) - 1 {
        par q in 0 .. P - 1 where q < (q xor (1 << s)):
            exchange q <-> q xor (1 << s) : m combine
    }
/// a plain exchange, no reduction
algorithm swap(P: int >= 2, m: bytes) over map: mapping =
    stage { par q in 0 .. P div 2 - 1: exchange 2 * q <-> 2 * q + 1 : m }
'''

TAULOP_BY_HAND = '''import "taulop/platform.tlop"
algorithm rd(P: int >= 2, m: bytes) over map: mapping =
    stages s in 0 .. floor(log2(P)) - 1 {
        par q in 0 .. P - 1 where q < (q xor (1 << s)): {
            send q -> q xor (1 << s) : m weight 2
            reduce q : m
        }
    }
algorithm swap(P: int >= 2, m: bytes) over map: mapping =
    stage { par q in 0 .. P div 2 - 1: send 2 * q -> 2 * q + 1 : m weight 2 }
'''

DATAFLOW_BY_HAND = '''import "MODEL/platform.tlop"
algorithm rd(P: int >= 2, m: bytes) over map: mapping =
    stages s in 0 .. floor(log2(P)) - 1 {
        par q in 0 .. P - 1: {
            send q -> q xor (1 << s) : m
            reduce q xor (1 << s) : m
        }
    }
algorithm swap(P: int >= 2, m: bytes) over map: mapping =
    stage { par q in 0 .. P - 1: send q -> q xor 1 : m }
'''


@pytest.fixture(scope="module")
def neutral(tmp_path_factory):
    d = tmp_path_factory.mktemp("coll")
    (d / "rd.tlop").write_text(NEUTRAL)
    return d / "rd.tlop"


POINTS = [(2, 1.0), (4, 1024.0), (8, 65536.0), (16, 3000.0)]


@pytest.mark.parametrize("alg", ["rd", "swap"])
def test_taulop_exchange_is_one_transfer_of_weight_two(neutral, alg):
    mine = tlop.load(neutral, model="taulop")[alg]
    ref = tlop.loads(TAULOP_BY_HAND)[alg]
    for P, m in POINTS:
        for profile in ("metropolis", "lusitania"):
            a = mine.evaluate(profile, mapping="sequential(4)", P=P, m=m)
            b = ref.evaluate(profile, mapping="sequential(4)", P=P, m=m)
            assert a == b and a > 0
    # the JIT agrees with the interpreter on the lowered exchange
    ev = mine.compile("metropolis", mapping="sequential(4)")
    for P, m in POINTS:
        assert math.isclose(ev(P=P, m=m), ref.evaluate("metropolis", mapping="sequential(4)", P=P, m=m),
                            rel_tol=1e-12)


@pytest.mark.parametrize("model", ["loggp", "plogp"])
@pytest.mark.parametrize("alg", ["rd", "swap"])
def test_dataflow_exchange_is_two_messages_each_reduced_by_its_receiver(neutral, model, alg):
    mine = tlop.load(neutral, model=model)[alg]
    ref = tlop.loads(DATAFLOW_BY_HAND.replace("MODEL", model))[alg]
    for P, m in POINTS:
        a = mine.evaluate("localhost-example", mapping="sequential(4)", P=P, m=m)
        b = ref.evaluate("localhost-example", mapping="sequential(4)", P=P, m=m)
        assert a == b and a > 0


def test_the_model_follows_the_profile_unless_chosen(neutral):
    from tlop.runtime.profile import default_model, models_of

    assert models_of(tlop.load_profile("metropolis")) == ["taulop"]
    assert models_of(tlop.load_profile("localhost-example")) == ["taulop", "loggp", "plogp"]
    m = tlop.load(neutral)
    assert m.model_neutral and m.model is None
    assert default_model(tlop.load_profile("metropolis")) == "taulop"
    taulop = m["rd"].evaluate("metropolis", mapping="sequential(4)", P=8, m=1024)
    assert taulop == tlop.load(neutral, model="taulop")["rd"].evaluate("metropolis", mapping="sequential(4)",
                                                                       P=8, m=1024)
    loggp = tlop.load(neutral, model="loggp")["rd"].evaluate("localhost-example", mapping="sequential(4)", P=8, m=1024)
    plogp = tlop.load(neutral, model="plogp")["rd"].evaluate("localhost-example", mapping="sequential(4)", P=8, m=1024)
    assert len({loggp, plogp}) == 2  # two models, two meanings of one text
    # a module that imports its own platform is not model-neutral
    assert not tlop.load("taulop/bcast").model_neutral


def test_each_model_has_its_own_cache_entry(neutral, tmp_path, monkeypatch):
    from tlop.frontend import checked_cache

    monkeypatch.setenv("TLOP_CACHE_DIR", str(tmp_path / "cache"))
    costs = {}
    for _ in range(2):  # the second round reads the cache
        for model in ("taulop", "loggp"):
            h = tlop.load(neutral, model=model)["rd"]
            costs.setdefault(model, set()).add(h.evaluate("localhost-example", mapping="sequential(4)", P=8, m=1024))
    assert checked_cache.stats["hits"] >= 2
    assert len(costs["taulop"]) == 1 and len(costs["loggp"]) == 1 and costs["taulop"] != costs["loggp"]


def test_cli_model_option(neutral, capsys):
    from tlop.cli.main import main

    args = ["eval", str(neutral), "rd", "P=8", "m=1KiB", "--mapping", "sequential(4)", "--profile", "localhost-example"]
    assert main(args) == 0
    tau = capsys.readouterr().out
    assert main(args + ["--model", "loggp"]) == 0
    log = capsys.readouterr().out
    want = tlop.load(neutral, model="loggp")["rd"].evaluate("localhost-example", mapping="sequential(4)", P=8, m=1024)
    assert tau != log and "101.4 µs" in log and abs(want - 101.4e-6) < 0.05e-6
    assert main(["eval", "taulop/bcast", "binomial", "P=8", "m=1KiB", "--mapping", "sequential(4)",
                 "--model", "loggp"]) == 1
    assert "is not model-neutral" in capsys.readouterr().err


def test_bad_model_and_bad_imports(neutral, tmp_path):
    with pytest.raises(TlopError, match="unknown model 'postal'"):
        tlop.load(neutral, model="postal")
    bad = tmp_path / "bad.tlop"
    bad.write_text('import "@model/../taulop/platform.tlop"\n')
    with pytest.raises(TlopError, match="cannot find imported file '@model/../taulop/platform.tlop'"):
        tlop.load(bad)


def test_exchange_syntax_and_errors():
    from tlop.frontend.parse import parse_text
    from tlop.frontend.unparse import unparse as unparse_module

    src = ('import "taulop/platform.tlop"\nalgorithm a(P: int >= 2, m: bytes) over map: mapping =\n'
           '    stage { exchange 0 <-> 1 : m combine }\n')
    mod = parse_text(src)
    again = parse_text(unparse_module(mod))
    assert again == mod
    with pytest.raises(TlopError, match="unexpected 'weight' after the size of an exchange"):
        tlop.loads(src.replace("combine", "weight"))
    with pytest.raises(TlopError, match="the size of an exchange must be a size"):
        tlop.loads(src.replace(": m combine", ": 3us"))
