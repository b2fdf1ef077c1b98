"""Mutated profiles: 1,200 damaged copies of the bundled profiles, each ending in a loaded
profile or the project's own error — never another exception — within a per-case limit of CPU
time (not wall-clock time: the test cannot fail because the machine is busy).

Seeded random mutations (reproducible; ``TLOP_FUZZ_SEED`` picks another seed) of both the
decoded JSON (values of every type, huge and non-finite numbers, deleted and unknown keys,
deep nesting, control characters) and the JSON text (cut, bytes changed, brackets and
5,000-digit numbers inserted).  A profile that loads is also serialised, fingerprinted and
looked up, since damage that validation lets through must not fail later either.
"""

import copy
import json
import os
import random
import signal
import sys

import numpy as np
import pytest

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.profile import Profile, bundled_profiles, load_profile, profile_from_dict
from tlop.runtime.profile_schema import parse_json, validate

CASES = 1200
SEED = int(os.environ.get("TLOP_FUZZ_SEED", "14"))
#: no single case may use more CPU time than this (a hang or blow-up fails the test, not the
#: run); CPU time (ITIMER_PROF), not wall-clock time, so a loaded machine cannot fail a case
CASE_CPU_SECONDS = 5.0

_ODD_STRINGS = ["", " ", "shm", "*", "a\x1b[31m", "x\ny", "\u202e", "é", "loggp.L", "1", "NaN",
                "x" * 10000, "tlop_profile", "tables", "m", "tau", "values"]


def _odd_value(rng: random.Random):
    k = rng.randrange(16)
    if k == 0:
        return None
    if k == 1:
        return rng.choice([True, False])
    if k == 2:
        return rng.choice(_ODD_STRINGS)
    if k == 3:
        return rng.choice([0, -1, 1, 2, 7, 2**53 + 1, -(10**20), 10**308, 10**309, 10**400, 10**1000])
    if k == 4:
        return rng.choice([0.0, -0.0, -1.5, 1e-320, 1e308, float("inf"), float("-inf"), float("nan")])
    if k == 5:
        return []
    if k == 6:
        return {}
    if k == 7:
        return [rng.random() for _ in range(rng.randrange(1, 5))]
    if k == 8:
        return {rng.choice(_ODD_STRINGS): rng.random()}
    if k == 9:                                    # nesting, shallow or far too deep
        v = rng.random()
        for _ in range(rng.choice([3, 50, 250, 5000])):
            v = [v] if rng.random() < 0.5 else {"a": v}
        return v
    if k == 10:
        return [[rng.random()] * rng.randrange(0, 4) for _ in range(rng.randrange(0, 4))]
    if k == 11:
        return rng.choice([1, 2, 0, "1", 1.0, 1.5])   # things that look like a version
    return rng.random() * rng.choice([1, -1, 1e-9, 1e9])


def _paths(tree, prefix=()):
    """Every (container, key) position of a decoded JSON tree, breadth-limited."""
    out = []
    stack = [(tree, prefix)]
    while stack:
        node, path = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in items:
            out.append((node, k))
            if isinstance(v, (dict, list)) and len(out) < 20000:
                stack.append((v, path + (k,)))
    return out


def _mutate_tree(tree, rng: random.Random):
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        spots = _paths(tree)
        if not spots:
            return rng.choice([None, [], 1, "x"])
        node, key = rng.choice(spots)
        op = rng.randrange(6)
        if op <= 2:
            node[key] = _odd_value(rng)
        elif op == 3 and isinstance(node, dict):
            del node[key]
        elif op == 3 and isinstance(node, list):
            del node[key]
        elif op == 4 and isinstance(node, dict):
            node[rng.choice(_ODD_STRINGS)] = _odd_value(rng)
        elif op == 4:
            node.append(_odd_value(rng))
        else:                                     # a copy of some other value, wrong type likely
            other_node, other_key = rng.choice(spots)
            node[key] = _deep(copy.deepcopy, other_node[other_key]) if rng.random() < 0.5 else node[key]
    return tree


def _mutate_text(text: str, rng: random.Random) -> str:
    op = rng.randrange(7)
    i = rng.randrange(len(text) + 1)
    if op == 0:
        return text[:i]
    if op == 1:
        return text[:i] + rng.choice('{}[]",:0123456789-eE.\\ \x00\x1b\n\ufeff') + text[i + 1:]
    if op == 2:
        return text[:i] + "[" * rng.choice([10, 300, 6000]) + text[i:]
    if op == 3:
        return text[:i] + "9" * rng.choice([310, 5000]) + text[i:]
    if op == 4:
        return text.replace("1", "1e400", 1) if rng.random() < 0.5 else text.replace("0.", "-0.", 3)
    if op == 5:
        return text[:i] + text[i:i + 40] + text[i:]
    return text[:i] + rng.choice(["NaN", "Infinity", "-Infinity", "null", "true", '"\\ud800"']) + text[i:]


def _deep(f, tree):
    """``f(tree)`` for a mutated tree, which may nest 5,000 deep: more than the default stack
    of json and copy (the harness's own work, not the code under test)."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 30000))
    try:
        return f(tree)
    finally:
        sys.setrecursionlimit(old)


def _dumps(tree) -> str:
    return _deep(json.dumps, tree)


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout()


def _exercise(profile: Profile) -> None:
    """What callers do with a loaded profile: none of it may fail with a foreign exception."""
    json.loads(profile.to_json())
    profile.fingerprint()
    for name in profile.table_names()[:4]:
        for ch in list(profile.channels)[:2] + [None]:
            if profile.has_table(name, ch):
                t = profile.table(name, ch)
                t.lookup(np.array([1.0, 1024.0]), None if t.tau is None else np.array([1.0, 3.0]))


@pytest.fixture(scope="module")
def originals():
    out = {}
    for name, path in sorted(bundled_profiles().items()):
        text = path.read_text(encoding="utf-8")
        out[name] = (text, json.loads(text))
    assert out
    return out


def test_mutated_profiles_end_in_a_profile_or_a_tlop_error(originals, tmp_path):
    rng = random.Random(SEED)
    names = sorted(originals)
    outcomes = {"loaded": 0, "refused": 0}
    old = signal.signal(signal.SIGPROF, _on_alarm)
    try:
        for case in range(CASES):
            name = rng.choice(names)
            text, tree = originals[name]
            how = rng.randrange(4)
            what = f"case {case} (seed {SEED}, {name}, {'tree text file'.split()[min(how, 2)]})"
            signal.setitimer(signal.ITIMER_PROF, CASE_CPU_SECONDS)
            try:
                if how <= 1:                          # the Python API on a mutated tree
                    prof = profile_from_dict(_mutate_tree(copy.deepcopy(tree), rng), "fuzz")
                elif how == 2:                        # mutated JSON text
                    src = _mutate_text(text, rng)
                    prof = Profile(validate(parse_json(src, "fuzz.json"), "fuzz.json"))
                else:                                 # load_profile on a file of mutated JSON
                    src = _dumps(_mutate_tree(copy.deepcopy(tree), rng))
                    if rng.random() < 0.5:
                        src = _mutate_text(src, rng)
                    path = tmp_path / "fuzz.json"
                    path.write_text(src, encoding="utf-8", errors="surrogatepass")
                    prof = load_profile(path)
                _exercise(prof)
                outcomes["loaded"] += 1
            except TlopError as err:
                assert str(err).strip(), what
                assert "\x1b" not in str(err), what    # input shown escaped
                outcomes["refused"] += 1
            except _Timeout:
                pytest.fail(f"{what}: used more than {CASE_CPU_SECONDS} s of CPU time")
            except Exception as err:                  # noqa: BLE001  (the point of the test)
                pytest.fail(f"{what}: {type(err).__name__}: {str(err)[:300]}")
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
    finally:
        signal.signal(signal.SIGPROF, old)
    # the mutations are neither all harmless nor all fatal
    assert outcomes["loaded"] > CASES // 20 and outcomes["refused"] > CASES // 4, outcomes
