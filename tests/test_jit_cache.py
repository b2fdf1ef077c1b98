"""The on-disk object cache: hits, corrupted entries, concurrent writers, disabled cache."""

import os
import subprocess
import sys
import textwrap
import uuid

import pytest

import tlop
from tlop.backends.jit import cache, compile_algorithm, evaluator


def _fresh_module(tag: float):
    # a distinct constant gives a distinct IR hash, hence a distinct cache key
    return tlop.loads(f"""
import "taulop/platform.tlop"
algorithm a(P: int >= 1, m: bytes) = {tag}s + (P - 1) * T[shm](m)
""")


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "jitcache"
    monkeypatch.setenv("TLOP_CACHE_DIR", str(d))
    return d


def _forget(key):
    evaluator._LOADED.pop(key, None)


def test_miss_then_disk_hit_then_process_hit(cache_dir):
    prof = tlop.default_profile()
    mod = _fresh_module(uuid.uuid4().int % 10**9)
    ev = compile_algorithm(mod.program, "a", prof)
    assert ev.compile_stats.source == "compiled"
    files = list(cache_dir.rglob(f"{ev.compile_stats.key}.o"))
    assert len(files) == 1
    want = ev(P=8, m=1000.0)
    ev2 = compile_algorithm(mod.program, "a", prof)
    assert ev2.compile_stats.source == "process"
    _forget(ev.compile_stats.key)
    ev3 = compile_algorithm(mod.program, "a", prof)
    assert ev3.compile_stats.source == "disk"
    assert ev3(P=8, m=1000.0) == want


def test_corrupted_entry_is_ignored_and_rebuilt(cache_dir):
    prof = tlop.default_profile()
    mod = _fresh_module(uuid.uuid4().int % 10**9)
    ev = compile_algorithm(mod.program, "a", prof)
    want = ev(P=3, m=10.0)
    (path,) = cache_dir.rglob(f"{ev.compile_stats.key}.o")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    _forget(ev.compile_stats.key)
    store = cache.default_cache()
    rejected = store.rejected
    ev2 = compile_algorithm(mod.program, "a", prof)
    assert ev2.compile_stats.source == "compiled"
    assert store.rejected == rejected + 1
    assert ev2(P=3, m=10.0) == want
    assert cache._unwrap(path.read_bytes()) is not None  # rewritten whole
    path.write_bytes(b"short")  # truncated
    _forget(ev.compile_stats.key)
    assert compile_algorithm(mod.program, "a", prof).compile_stats.source == "compiled"


def test_disabled_and_unwritable_cache(tmp_path, monkeypatch):
    prof = tlop.default_profile()
    monkeypatch.setenv("TLOP_CACHE_DIR", "off")
    ev = compile_algorithm(_fresh_module(uuid.uuid4().int % 10**9).program, "a", prof)
    assert ev(P=2, m=1.0) > 0
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("TLOP_CACHE_DIR", str(blocker / "sub"))
    ev = compile_algorithm(_fresh_module(uuid.uuid4().int % 10**9).program, "a", prof)
    assert ev(P=2, m=1.0) > 0


def test_concurrent_processes_share_one_entry(cache_dir):
    tag = uuid.uuid4().int % 10**9
    script = textwrap.dedent(f"""
        import tlop
        from tlop.backends.jit import compile_algorithm
        mod = tlop.loads('''
        import "taulop/platform.tlop"
        algorithm a(P: int >= 1, m: bytes) = {tag}s + (P - 1) * T[shm](m)
        ''')
        ev = compile_algorithm(mod.program, "a", tlop.default_profile())
        print(repr(ev(P=5, m=777.0)), ev.compile_stats.key)
    """)
    env = dict(os.environ, TLOP_CACHE_DIR=str(cache_dir))
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=env, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert len({o for o, _ in outs}) == 1
    # one whole entry for the algorithm (and one for the shared scalar-call wrapper), no debris
    files = [f for f in cache_dir.rglob("*") if f.is_file()]
    key = outs[0][0].split()[1]
    assert len(files) <= 2 and all(f.suffix == ".o" for f in files)
    assert [f.name for f in files].count(f"{key}.o") == 1
    assert all(cache._unwrap(f.read_bytes()) is not None for f in files)
