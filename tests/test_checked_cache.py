"""The checked-IR cache: a second load parses nothing, and a changed file, a changed import, a
shadowing file, a damaged or forged entry, or an untrusted key are never trusted."""

import hashlib
import hmac
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from _bounded import PATIENCE

import tlop
from tlop.frontend import checked_cache
from tlop.runtime.diagnostics import TlopError


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TLOP_CACHE_DIR", str(tmp_path / "cache"))
    for k in checked_cache.stats:
        checked_cache.stats[k] = 0
    return tmp_path / "cache" / "ir"


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _entries(cache: Path) -> list:
    return sorted(cache.glob("*/*.ir"))


def test_second_load_comes_from_the_cache_and_agrees(cache):
    first = tlop.load("taulop/bcast")
    assert checked_cache.stats["stored"] == 1 and len(_entries(cache)) == 1
    key = cache / "key"
    assert key.stat().st_mode & 0o777 == 0o600 and key.stat().st_size == 32
    second = tlop.load("taulop/bcast")
    assert checked_cache.stats["hits"] == 1
    assert second.program == first.program and second.own_algorithms == first.own_algorithms
    assert second.algorithms == first.algorithms
    h1, h2 = first["binomial_bcast"], second["binomial_bcast"]
    prof = tlop.default_profile()
    assert h2.evaluate(prof, P=16, m=1 << 20) == h1.evaluate(prof, P=16, m=1 << 20)
    assert second.elaborated.program == first.program  # declarations are elaborated on demand


def test_changed_file_and_changed_import_are_rebuilt(cache, tmp_path):
    lib = _write(tmp_path / "lib.tlop", 'import "taulop/platform.tlop"\ndef k() -> int = 2\n')
    main = _write(tmp_path / "main.tlop", 'import "lib.tlop"\nalgorithm a(x: int) = k() * x * 1s\n')
    prof = tlop.default_profile()
    assert tlop.load(main)["a"].evaluate(prof, x=3) == 6.0
    assert tlop.load(main)["a"].evaluate(prof, x=3) == 6.0 and checked_cache.stats["hits"] == 1
    _write(lib, 'import "taulop/platform.tlop"\ndef k() -> int = 5\n')  # only the import changes
    assert tlop.load(main)["a"].evaluate(prof, x=3) == 15.0
    _write(main, 'import "lib.tlop"\nalgorithm a(x: int) = k() * x * 2s\n')
    assert tlop.load(main)["a"].evaluate(prof, x=3) == 30.0
    assert checked_cache.stats["hits"] == 1


def test_a_file_that_now_shadows_an_import_is_seen(cache, tmp_path):
    (tmp_path / "taulop").mkdir()
    main = _write(tmp_path / "main.tlop", 'import "taulop/platform.tlop"\nalgorithm a(x: int) = x * 1s\n')
    tlop.load(main)
    _write(tmp_path / "taulop" / "platform.tlop", "channel only_here\n")  # resolves beside main now
    assert tlop.load(main).program.channels == ("only_here",)
    assert checked_cache.stats["hits"] == 0


def test_errors_are_not_cached(cache, tmp_path):
    bad = _write(tmp_path / "bad.tlop", "algorithm a(x: int) = x +\n")
    for _ in range(2):
        with pytest.raises(TlopError):
            tlop.load(bad)
    assert _entries(cache) == []


@pytest.mark.parametrize("damage", ["truncate", "flip", "forge", "garbage"])
def test_damaged_or_forged_entries_are_rebuilt_never_trusted(cache, damage):
    tlop.load("taulop/bcast")
    (entry,) = _entries(cache)
    data = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        entry.write_bytes(data[:-10] + bytes([data[-10] ^ 1]) + data[-9:])
    elif damage == "garbage":
        entry.write_bytes(b"not a cache entry")
    else:  # a pickle that would run code, signed with a key the writer guessed
        class Evil:
            def __reduce__(self):
                return (os.system, ("echo pwned > " + str(cache / "pwned"),))

        payload = pickle.dumps(Evil())
        entry.write_bytes(data[:8] + hmac.new(b"\0" * 32, payload, hashlib.sha256).digest() + payload)
    again = tlop.load("taulop/bcast")
    assert "binomial_bcast" in again
    assert checked_cache.stats["rejected"] == 1 and checked_cache.stats["hits"] == 0
    assert not (cache / "pwned").exists()
    assert checked_cache.stats["stored"] == 2  # rebuilt and stored again
    tlop.load("taulop/bcast")
    assert checked_cache.stats["hits"] == 1


def test_an_untrusted_key_disables_the_cache(cache):
    tlop.load("taulop/bcast")
    os.chmod(cache / "key", 0o644)  # readable by others: anyone could sign entries
    tlop.load("taulop/bcast")
    assert checked_cache.stats["hits"] == 0
    assert checked_cache.put(Path("/nonexistent.tlop"), [], None) is False


def test_disabled_and_unwritable_caches_are_not_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("TLOP_CACHE_DIR", "off")
    assert checked_cache.cache_directory() is None
    assert "binomial_bcast" in tlop.load("taulop/bcast")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("TLOP_CACHE_DIR", str(blocker))  # a file where the directory should be
    assert "binomial_bcast" in tlop.load("taulop/bcast")


def test_warm_eval_imports_no_parser_numpy_free_front(tmp_path):
    """A warm ``tlop eval`` imports neither ANTLR, the front end's parser, llvmlite, Z3, nor the
    measure and rules CLIs; a cold one gives the same output."""
    env = dict(os.environ, TLOP_CACHE_DIR=str(tmp_path / "cache"))
    code = ("import sys\nfrom tlop.cli import main\nrc = main(['eval', 'taulop/bcast', 'binomial_bcast', "
            "'P=16', 'm=1MiB'])\nheavy = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('antlr4', 'llvmlite', 'z3', 'mpi4py') or m in ('tlop.frontend.parse', 'tlop.frontend.elaborate', "
            "'tlop.cli.rules', 'tlop.runtime.measure.cli'))\nprint('HEAVY', heavy)\nsys.exit(rc)\n")
    cold = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=PATIENCE)
    warm = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=PATIENCE)
    assert cold.returncode == 0 and warm.returncode == 0, cold.stderr + warm.stderr
    assert "HEAVY []" in warm.stdout, warm.stdout
    assert "tlop.frontend.elaborate" in cold.stdout  # the cold run did check
    assert cold.stdout.splitlines()[0] == warm.stdout.splitlines()[0]


def test_a_program_too_big_to_read_back_is_not_written(cache, monkeypatch):
    """An entry above the size limit would be refused (and deleted) unread by the next load: it
    is not written at all, and a program within the limit is written and then read."""
    tlop.load("taulop/bcast")
    size = _entries(cache)[0].stat().st_size
    for e in _entries(cache):
        e.unlink()
    monkeypatch.setattr(checked_cache, "MAX_ENTRY_BYTES", size - 1)
    tlop.load("taulop/bcast")
    assert _entries(cache) == [] and checked_cache.stats["stored"] == 1
    monkeypatch.setattr(checked_cache, "MAX_ENTRY_BYTES", size)
    tlop.load("taulop/bcast")
    assert len(_entries(cache)) == 1 and checked_cache.stats["stored"] == 2
    tlop.load("taulop/bcast")
    assert checked_cache.stats["hits"] == 1 and checked_cache.stats["rejected"] == 0


def test_a_cold_check_imports_no_numpy(tmp_path):
    """``tlop check`` (cold: parse, check, lower, write the cache) needs no numpy: importing it
    costs 70 ms and starts OpenBLAS threads that spin on the CPU — for LogGP files too, whose
    dependency walk needs only the dataflow back end's names."""
    env = dict(os.environ, TLOP_CACHE_DIR=str(tmp_path / "cache"))
    code = ("import sys\nfrom tlop.cli import main\nrc = main(['check', 'taulop/bcast', 'loggp/bcast'])\n"
            "print('NUMPY', 'numpy' in sys.modules)\nsys.exit(rc)\n")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=PATIENCE)
    assert run.returncode == 0, run.stderr
    assert "NUMPY False" in run.stdout and "ok" in run.stdout, run.stdout
