"""The on-disk object cache: hits, corrupted entries, concurrent writers, disabled cache; and
the cache as a trust boundary: forged, swapped, mutated entries, FIFOs, links, foreign
directories are never executed, each is rebuilt, and results equal the interpreter's."""

import os
import subprocess
import sys
import textwrap
import uuid

import pytest
from _bounded import PATIENCE

import tlop
from tlop.backends.jit import cache, compile_algorithm, evaluator
from tlop.runtime.cachedir import secret_key


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


def _valid(path, key) -> bool:
    """Whether ``path`` is an authentic entry for ``key`` (made with the cache's own secret)."""
    secret = secret_key(path.parent.parent, create=False)
    return secret is not None and cache._unwrap(path.read_bytes(), key, secret) is not None


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
    assert _valid(path, ev.compile_stats.key)  # rewritten whole
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
    outs = [p.communicate(timeout=PATIENCE) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert len({o for o, _ in outs}) == 1
    # one whole entry for the algorithm (and one for the shared scalar-call wrapper), no debris
    files = [f for f in cache_dir.rglob("*") if f.is_file() and f.name not in ("key", "CACHEDIR.TAG")]
    key = outs[0][0].split()[1]
    assert len(files) <= 2 and all(f.suffix == ".o" for f in files)
    assert [f.name for f in files].count(f"{key}.o") == 1
    assert all(_valid(f, f.stem) for f in files)


# ------------------------------------------------------------------ the cache is a trust boundary
@pytest.fixture
def bcast():
    m = tlop.load("taulop/bcast")
    return m, tlop.default_profile()


def _entry(cache_dir, ev):
    (path,) = cache_dir.rglob(f"{ev.compile_stats.key}.o")
    return path


def _compile_here(program, name, prof):
    """Compile ``name`` into this test's cache (not from the process's earlier loads)."""
    ev = compile_algorithm(program, name, prof)
    if ev.compile_stats.source != "compiled":
        _forget(ev.compile_stats.key)
        ev = compile_algorithm(program, name, prof)
    assert ev.compile_stats.source == "compiled"
    return ev


def _oracle(mod, prof, name, **args):
    return mod[name].evaluate(prof, **args)


@pytest.fixture
def alarm():
    """Fail (not hang) when a cache read blocks: SIGALRM raises in the test after PATIENCE s.
    A blocked read uses no CPU, so this guard is wall-clock — a hang guard that a correct run
    never comes near, not a speed requirement."""
    import signal

    def boom(*_):
        raise TimeoutError("the cache read blocked")
    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(int(PATIENCE))
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def test_another_algorithms_code_under_this_key_is_rejected_and_rebuilt(cache_dir, bcast):
    m, prof = bcast
    binomial = _compile_here(m.program, "binomial_bcast", prof)
    linear = _compile_here(m.program, "linear_bcast", prof)
    args = dict(P=16, m=1 << 20, c=0)
    want = _oracle(m, prof, "binomial_bcast", P=16, m=1 << 20, c="shm")
    assert binomial(**args) == pytest.approx(want, rel=1e-12)
    assert linear(**args) != pytest.approx(want, rel=1e-3)  # the swap would be visible
    target = _entry(cache_dir, binomial)
    target.write_bytes(_entry(cache_dir, linear).read_bytes())  # a whole, authentic entry — for another key
    _forget(binomial.compile_stats.key)
    store = cache.default_cache()
    rejected = store.rejected
    again = compile_algorithm(m.program, "binomial_bcast", prof)
    assert again.compile_stats.source == "compiled" and store.rejected == rejected + 1
    assert again(**args) == pytest.approx(want, rel=1e-12)
    assert _valid(target, binomial.compile_stats.key)


@pytest.mark.parametrize("forgery", ["old-format-sha256", "mutated-code", "guessed-secret", "renamed-key"])
def test_forged_entries_with_valid_checksums_are_never_executed(cache_dir, bcast, forgery):
    import hashlib
    import hmac
    import struct

    m, prof = bcast
    ev = _compile_here(m.program, "binomial_bcast", prof)
    key = ev.compile_stats.key
    path = _entry(cache_dir, ev)
    data = path.read_bytes()
    head = len(cache._MAGIC) + 64 + 32
    payload = bytearray(data[head:])
    # code that would crash the process if it were loaded and run: every byte of the object's
    # text replaced by a trap (ud2) is too specific to find; flipping many bytes is enough
    for i in range(len(payload) // 3, 2 * len(payload) // 3):
        payload[i] ^= 0x5A
    payload = bytes(payload)
    if forgery == "old-format-sha256":  # the previous format: an unkeyed checksum that verifies
        forged = struct.pack("<8sQ32s", b"TLOPJIT1", len(payload), hashlib.sha256(payload).digest()) + payload
    elif forgery == "mutated-code":
        forged = data[:head] + payload
    elif forgery == "guessed-secret":
        k = key.encode()
        mac = hmac.new(b"\0" * 32, cache._MAGIC + k + payload, hashlib.sha256).digest()
        forged = cache._MAGIC + k + mac + payload
    else:  # an authentic entry whose stored key was edited to this one
        other = "0" * 64
        forged = cache._MAGIC + other.encode() + data[len(cache._MAGIC) + 64:]
        path = path.parent.parent / other[:2] / f"{other}.o"
        path.parent.mkdir(exist_ok=True)
        key = other
    path.write_bytes(forged)
    _forget(ev.compile_stats.key)
    store = cache.default_cache()
    assert store.get(key) is None
    again = compile_algorithm(m.program, "binomial_bcast", prof)
    # rebuilt; with the renamed copy, the untouched original is still good
    assert again.compile_stats.source == ("disk" if forgery == "renamed-key" else "compiled")
    assert again(P=8, m=4096.0, c=1) == pytest.approx(
        _oracle(m, prof, "binomial_bcast", P=8, m=4096.0, c="net"), rel=1e-12)


@pytest.mark.parametrize("kind", ["fifo", "link-to-dev-zero", "link-to-valid-entry", "directory", "oversized"])
def test_entries_that_are_not_plain_files_are_neither_waited_on_nor_read(cache_dir, bcast, alarm, kind,
                                                                          monkeypatch):
    m, prof = bcast
    ev = _compile_here(m.program, "linear_bcast", prof)
    key = ev.compile_stats.key
    path = _entry(cache_dir, ev)
    if kind == "link-to-valid-entry":
        elsewhere = cache_dir.parent / "elsewhere.o"
        elsewhere.write_bytes(path.read_bytes())
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link-to-dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "link-to-valid-entry":
        path.symlink_to(elsewhere)
    elif kind == "directory":
        path.mkdir()
    else:
        monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", 1024)
        ev_bytes = b"x" * 4096
        path.write_bytes(ev_bytes)
    _forget(key)
    store = cache.default_cache()
    rejected = store.rejected
    again = compile_algorithm(m.program, "linear_bcast", prof)
    assert again.compile_stats.source == "compiled" and store.rejected == rejected + 1
    assert again(P=5, m=1000.0, c=0) == pytest.approx(_oracle(m, prof, "linear_bcast", P=5, m=1000.0, c="shm"),
                                                      rel=1e-12)
    if kind == "directory":
        assert path.is_dir()  # not removed (unlink fails): still never read
    else:
        assert path.is_file() and not path.is_symlink() and _valid(path, key)  # rebuilt in its place
    assert os.path.exists("/dev/zero")


def test_a_directory_others_can_write_is_not_used(tmp_path, monkeypatch, bcast, capfd):
    m, prof = bcast
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o777)
    monkeypatch.setenv("TLOP_CACHE_DIR", str(d))
    ev = compile_algorithm(_fresh_module(uuid.uuid4().int % 10**9).program, "a", prof)
    _forget(ev.compile_stats.key)
    assert compile_algorithm(_fresh_module(uuid.uuid4().int % 10**9).program, "a", prof).compile_stats.source == "compiled"
    assert list(d.iterdir()) == []  # nothing written there, not even a key
    assert "others can write to it" in capfd.readouterr().err


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to give a file away")
def test_a_directory_or_key_of_another_user_is_not_used(tmp_path, monkeypatch, bcast):
    m, prof = bcast
    d = tmp_path / "theirs"
    d.mkdir(mode=0o755)
    os.chown(d, 12345, 12345)
    monkeypatch.setenv("TLOP_CACHE_DIR", str(d))
    ev = compile_algorithm(_fresh_module(uuid.uuid4().int % 10**9).program, "a", prof)
    assert list(d.iterdir()) == []
    # our own directory, but a key file someone else made
    mine = tmp_path / "mine"
    monkeypatch.setenv("TLOP_CACHE_DIR", str(mine))
    ev = compile_algorithm(_fresh_module(uuid.uuid4().int % 10**9).program, "a", prof)
    key = ev.compile_stats.key
    os.chown(mine / "key", 12345, 12345)
    _forget(key)
    assert cache.default_cache().get(key) is None


def _run(script: str, env: dict, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=PATIENCE)


_COMPILE_ONE = textwrap.dedent("""
    import tlop
    from tlop.backends.jit import compile_algorithm
    mod = tlop.loads('import "taulop/platform.tlop"\\nalgorithm a(P: int >= 1, m: bytes) = 7s + P * T[shm](m)\\n')
    print(compile_algorithm(mod.program, "a", tlop.default_profile())(P=2, m=8.0))
""")


@pytest.mark.parametrize("value", ["~", "~/", "~nosuchuser_tlop/x", "relative/cache"])
def test_cache_dir_values_that_would_litter_home_or_the_working_directory(tmp_path, value):
    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    (home / "notes.txt").write_text("mine")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    env = dict(os.environ, HOME=str(home), TLOP_CACHE_DIR=value)
    r = _run(_COMPILE_ONE, env, cwd)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout) > 7
    assert sorted(p.name for p in home.iterdir()) == ["Documents", "notes.txt"]  # no shards, no key
    assert list(cwd.iterdir()) == []  # no folder named '~…' or 'relative'
    assert "nothing is cached" in r.stderr


def test_a_new_deep_cache_directory_is_created_private_and_said(tmp_path):
    deep = tmp_path / "a" / "b" / "c"
    env = dict(os.environ, TLOP_CACHE_DIR=str(deep))
    r = _run(_COMPILE_ONE, env, tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"created the cache directory {deep}" in r.stderr
    for p in (tmp_path / "a", tmp_path / "a" / "b", deep):
        assert p.stat().st_mode & 0o777 == 0o700
    assert (deep / "CACHEDIR.TAG").read_bytes().startswith(b"Signature: 8a477f597d28d172789f06886806bc55")
    assert (deep / "key").stat().st_mode & 0o777 == 0o600
    r2 = _run(_COMPILE_ONE, env, tmp_path)
    assert r2.stdout == r.stdout and "created" not in r2.stderr  # the second run just uses it


def test_modules_that_differ_only_in_how_a_dataflow_send_is_priced_get_their_own_code(cache_dir):
    """A LogGP schedule calls the platform's ``send_overhead`` … ``recv_overhead`` by name, not
    through its body: the code key covers them.  Two modules identical but for ``recv_overhead``
    once shared one compiled object (the second got the first's numbers), in either order."""
    import warnings

    import numpy as np

    from tlop.runtime.profile import profile_from_dict

    def module(recv):
        return tlop.loads(textwrap.dedent(f"""
            model loggp
            param L: time
            param o: time
            param g: time
            param G: time/bytes
            algorithm send_overhead(m: bytes) = o
            algorithm send_gap(m: bytes) = max(o, g + (m - 1B) * G)
            algorithm delivery(m: bytes) = o + L + (m - 1B) * G + o
            algorithm recv_overhead(m: bytes) = {recv}
            algorithm gather(P: int >= 2, m: bytes) over map: mapping =
                stage {{ par p in 1 .. P - 1: send p -> 0 : m }}
            """), f"dataflow_{abs(hash(recv))}.tlop")

    prof = profile_from_dict({
        "tlop_profile": 1, "name": "loggp-key-test", "metadata": {"machine": "test"},
        "channels": {"net": {"transmission": "rdma"}}, "bind": {}, "fits": {}, "tables": {},
        "scalars": {"L": {"*": 10e-9}, "o": {"*": 5e-9}, "g": {"*": 2e-9}, "G": {"*": 1e-9}}})
    plain, busy = module("o"), module("o + (m - 1B) * G")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for first, second in ((plain, busy), (busy, plain)):
            for h in (first["gather"], second["gather"]):
                # an array argument: the reference interpreter (the API tiers plain numbers only)
                want = float(h.evaluate(prof, P=np.array([8.0]), m=64.0, mapping=tlop.sequential(1))[0])
                got = h.compile(prof, mapping=tlop.sequential(1))(P=8, m=64.0)
                assert got == pytest.approx(want, rel=1e-12)
        assert plain["gather"].compile(prof, mapping=tlop.sequential(1))(P=8, m=64.0) != \
            busy["gather"].compile(prof, mapping=tlop.sequential(1))(P=8, m=64.0)
