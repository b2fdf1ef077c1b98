"""Fuzzing the front end in bulk: grammar-aware mutations of stdlib declarations (8,300 under slow).

With the Hypothesis fuzzers of ``test_fuzz_frontend.py`` (1,700 cases) this makes over 10,000
generated and mutated sources a run (issue 14, item 6).  Each case is checked as ``tlop check``
does (parse, names, types, dimensions, lowering — nothing is evaluated) and must end in success
or in a :class:`TlopError` whose every diagnostic has a location inside the file it names: never
a traceback, never an error without a place, within a per-case limit of CPU time (not of
wall-clock time, which a busy machine would break).

What makes a case cheap (a few ms): it is a few declarations cut from one stdlib module (found
by parsing the module once, with the spans of its declarations) with that module's imports, not
the whole module; the unchanged stdlib files it imports are parsed once for the whole run (a
memo of ``parse_source`` keyed by the file's name and text: a parse is a pure function of the
text); mutations work on tokens — the grammar's own keywords and operators (the lexer's literal
names), identifiers and numbers of the same module, doubled, dropped, swapped or replaced —
so that most cases get past the lexer and stress the parser's recovery and the checker.

The default run checks a bounded sample (200 cases, seed 22, printed); ``pytest -m slow`` runs the
full set, whose seed changes each run (the date) and is printed on a failure with the case's
text; ``TLOP_FUZZ_SEED=N`` replays a run.
"""

from __future__ import annotations

import datetime
import os
import random
import re
import signal

import pytest

import tlop
import tlop.frontend.parse as parse_mod
from tlop._antlr.TlopLexer import TlopLexer
from tlop.frontend import ast as A
from tlop.frontend.loader import STDLIB_DIR, resolve_path, stdlib_modules
from tlop.runtime.diagnostics import Source, TlopError

#: the full set (``pytest -m slow``): 8,300 cases seeded by the date
CASES = int(os.environ.get("TLOP_FUZZ_CASES", 8300))
#: the default run: a bounded sample with a fixed seed, printed (the same cases every run)
SAMPLE_CASES = 200
SAMPLE_SEED = 22
#: CPU seconds (ITIMER_PROF) one case may use
PER_CASE_SECONDS = 10
SEED = int(os.environ.get("TLOP_FUZZ_SEED", datetime.date.today().strftime("%Y%m%d")))

KEYWORDS = [n.strip("'") for n in TlopLexer.literalNames if n.startswith("'")]
ODD = ["1e400", "0", "-1", "1.5", "3zz", "64KiB", "2us", "1B", '"nope.tlop"', '"taulop/platform.tlop"',
       "$", "'", "\\", "\n", "///d\n", "#c\n", "\u00e9", "\x00", "\"", "(((", ")))", "ß"]
TOKEN = re.compile(r'\s+|"(?:[^"\\\n]|\\.)*"|///[^\n]*\n?|#[^\n]*|[A-Za-z_]\w*|\d[\w.]*|\.\.|->|<=|>=|==|!=|<<|>>|\|\||\S')


def _decls(name: str):
    """(imports text, [declaration texts]) of a stdlib module, cut at its declarations' spans."""
    path = resolve_path(name)
    text = path.read_text()
    module = parse_mod.parse_source(Source(name, text))
    lines = text.splitlines(keepends=True)
    imports, decls, prev_end = [], [], 0
    for d in module.decls:
        start, end = d.span.line, d.span.end_line
        first = start - 1
        while first > prev_end and lines[first - 1].lstrip().startswith("///"):
            first -= 1                                     # its doc comment
        chunk = "".join(lines[first:end])
        prev_end = end
        (imports if isinstance(d, A.ImportDecl) else decls).append(chunk)
    return path.parent, "".join(imports), decls


MODULES = [m for m in (_decls(n) for n in stdlib_modules()) if m[2]]
WORDS = sorted({t for _, _, ds in MODULES for d in ds for t in TOKEN.findall(d) if t.strip()})


def make_case(rng: random.Random):
    """(folder, text): a few declarations of one module with its imports, mutated."""
    folder, imports, decls = rng.choice(MODULES)
    picked = rng.sample(decls, min(len(decls), rng.randint(1, 4)))
    text = imports + "\n".join(picked)
    mutations = 0 if rng.random() < 0.2 else rng.randint(1, 4)
    for _ in range(mutations):
        toks = TOKEN.findall(text)
        if not toks:
            break
        i = rng.randrange(len(toks))
        kind = rng.random()
        if kind < 0.2:
            del toks[i]
        elif kind < 0.35:
            toks.insert(i, toks[i])
        elif kind < 0.5 and i + 1 < len(toks):
            toks[i], toks[i + 1] = toks[i + 1], toks[i]
        elif kind < 0.7:
            toks[i] = " " + rng.choice(KEYWORDS) + " "
        elif kind < 0.85:
            toks[i] = " " + rng.choice(WORDS) + " "
        elif kind < 0.95:
            toks.insert(i, rng.choice(ODD))
        else:                                              # cut the rest of the file
            toks = toks[:i]
        text = "".join(toks)
    return folder, text


def _location_inside(d) -> bool:
    span = d.span
    if span is None:
        return False
    lines = span.source.text.splitlines() or [""]
    if not 1 <= span.line <= len(lines) + 1:
        return False
    width = len(lines[span.line - 1]) if span.line <= len(lines) else 0
    return 1 <= span.col <= width + 1


@pytest.fixture
def shared_stdlib_parses(monkeypatch):
    """Parse each unchanged stdlib file once for the whole run (the fuzzed text itself is
    parsed anew in every case)."""
    memo: dict = {}
    parse = parse_mod.parse_source
    stdlib_names = {"stdlib/" + p.relative_to(STDLIB_DIR).as_posix() for p in STDLIB_DIR.rglob("*.tlop")}

    def parse_source(source):
        if source.name not in stdlib_names:
            return parse(source)
        key = (source.name, source.text)
        if key not in memo:
            memo[key] = parse(source)
        return memo[key]
    monkeypatch.setattr(parse_mod, "parse_source", parse_source)


class _TooSlow(Exception):
    pass


def _alarm(signum, frame):
    raise _TooSlow()


def test_mutated_declarations(shared_stdlib_parses):
    """The bounded sample of the default run (fixed seed, printed)."""
    print(f"fuzz: {SAMPLE_CASES} cases, seed {SAMPLE_SEED} (TLOP_FUZZ_SEED={SAMPLE_SEED} replays them)")
    _fuzz(SAMPLE_CASES, SAMPLE_SEED)


@pytest.mark.slow
def test_mutated_declarations_full(shared_stdlib_parses):
    """The full set: 8,300 cases seeded by the date (``TLOP_FUZZ_SEED`` replays a run)."""
    print(f"fuzz: {CASES} cases, seed {SEED}")
    _fuzz(CASES, SEED)


def _fuzz(CASES, SEED):
    rng = random.Random(SEED)
    outcomes = {"ok": 0, "error": 0}
    old = signal.signal(signal.SIGPROF, _alarm)
    try:
        for case in range(CASES):
            folder, text = make_case(rng)
            where = f"seed {SEED}, case {case} (TLOP_FUZZ_SEED={SEED} replays it):\n{text}"
            signal.setitimer(signal.ITIMER_PROF, PER_CASE_SECONDS)
            try:
                tlop.loads(text, "fuzz.tlop", base=folder)
                outcomes["ok"] += 1
            except TlopError as e:
                outcomes["error"] += 1
                assert e.diagnostics, f"an error without diagnostics, {where}"
                bad = [d for d in e.diagnostics if not _location_inside(d)]
                assert not bad, f"diagnostic without a location inside its file: {bad[0].render()}\n{where}"
            except _TooSlow:
                pytest.fail(f"over {PER_CASE_SECONDS} s of CPU time, {where}")
            except Exception as e:     # a traceback: the failure this test exists to find
                pytest.fail(f"{type(e).__name__}: {e}, {where}")
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
    finally:
        signal.signal(signal.SIGPROF, old)
    # both outcomes are exercised: unmutated cases check, mutated ones mostly fail somewhere
    assert outcomes["ok"] >= CASES // 20 and outcomes["error"] >= CASES // 4, outcomes
