"""Round trips (to_dict / save / load), atomic saving, bundled profiles."""

import json
import os

import numpy as np
import pytest

import tlop.runtime as runtime
from tlop.runtime.profile import (ProfileError, bundled_profiles, default_profile, load_profile,
                                  profile_from_dict, save_profile)


def rich():
    return profile_from_dict({
        "tlop_profile": 1, "name": "rich",
        "metadata": {"machine": "box", "mpi": {"library": "MPICH", "version": "4.2"},
                     "date": "2025-01-31", "method": "ring", "source": "test", "notes": "n", "extra": [1, 2]},
        "interpolation": {"m_below": "clamp", "tau_beyond": "linear", "nonnegative": False, "out_of_grid": "warn"},
        "channels": {"shm": {"transmission": "shm", "description": "shared memory"}},
        "bind": {"net": "shm"},
        "tables": {"L": {"shm": {"m": [0, 1.5, 7], "tau": [1, 2.5], "values": [[0.1, 1 / 3], [2e-300, 5.0], [7e7, 1e-7]]}},
                   "loggp.G": {"*": {"m": [1], "values": [3.3e-10]}}},
        "scalars": {"loggp.o": {"*": 1e-6}},
        "fits": {"postal": {"alpha": 1e-6, "pieces": [[0, 8192], [8192, None]]}},
    })


def same(p, q):
    assert p.to_dict() == q.to_dict()
    for name in p.table_names():
        for key in ("shm", None):
            if p.has_table(name, key):
                a, b = p.table(name, key), q.table(name, key)
                assert a.values.tobytes() == b.values.tobytes()      # bit-for-bit doubles
                assert a.m.tobytes() == b.m.tobytes()


def test_to_dict_round_trip():
    p = rich()
    q = profile_from_dict(json.loads(json.dumps(p.to_dict())))
    same(p, q)
    assert q.interpolation.tau_beyond == "linear" and q.metadata["extra"] == [1, 2]


def test_save_and_load_round_trip(tmp_path):
    p = rich()
    out = save_profile(p, tmp_path / "rich.json")
    q = load_profile(out)
    same(p, q)
    assert q.path == out.resolve()
    assert q.fits["postal"]["pieces"][1] == [8192, None]
    # saving is deterministic: the same profile gives the same text
    save_profile(q, tmp_path / "again.json")
    assert (tmp_path / "rich.json").read_text() == (tmp_path / "again.json").read_text()


def test_saved_text_is_readable(tmp_path):
    text = save_profile(rich(), tmp_path / "r.json").read_text()
    assert '"m": [0, 1.5, 7],' in text                  # one grid per line
    assert "[0.1, 0.3333333333333333]," in text          # one row per line, shortest repr


def test_save_is_atomic_and_leaves_no_temporary_files(tmp_path, monkeypatch):
    target = tmp_path / "p.json"
    target.write_text("original")
    os.chmod(target, 0o640)

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(ProfileError, match="p.json: cannot write profile: No space left on device"):
        save_profile(rich(), target)
    assert target.read_text() == "original"
    assert os.listdir(tmp_path) == ["p.json"]
    monkeypatch.undo()
    save_profile(rich(), target)
    assert os.listdir(tmp_path) == ["p.json"]
    assert load_profile(target).name == "rich"
    assert (target.stat().st_mode & 0o777) == 0o640         # keeps the file's permissions


def test_save_into_missing_directory_is_a_profile_error(tmp_path):
    with pytest.raises(ProfileError, match="cannot write profile"):
        save_profile(rich(), tmp_path / "no" / "such" / "dir.json")


def test_bundled_profiles_and_default():
    b = bundled_profiles()
    assert set(b) >= {"metropolis", "lusitania", "ciemat"}
    assert all(path.is_file() for path in b.values())
    p = default_profile()
    assert p.name == "metropolis" and p.path == b["metropolis"].resolve()
    by_path = load_profile(str(b["metropolis"]))
    same(p, by_path)


def test_runtime_package_reexports():
    assert runtime.load_profile is load_profile
    assert runtime.default_profile is default_profile
    assert runtime.bundled_profiles is bundled_profiles
    assert runtime.ProfileError is ProfileError and issubclass(runtime.ProfileError, Exception)
    assert isinstance(runtime.default_profile(), runtime.Profile)


def test_every_bundled_profile_loads_and_binds_net():
    """Every bundled τ-Lop profile; the postal ones (003: only path channels) have no net."""
    postal = set()
    for name in bundled_profiles():
        p = load_profile(name)
        if all(c.is_path for c in p.channels.values()):
            postal.add(name)
            continue
        assert p.resolve_channel("net") in p.channels
        assert p.transmission_kind(p.resolve_channel("net")) in ("rdma", "tcp")
        L = p.table("L", "shm")
        assert np.all(np.isfinite(L.values))
    assert postal == {"summit", "lassen"}


def test_the_example_in_the_docs_is_a_valid_profile():
    from pathlib import Path
    rst = (Path(__file__).resolve().parents[1] / "docs" / "profiles.rst").read_text()
    block = rst.split(".. code-block:: json", 1)[1].split("\n\n", 2)[1]
    p = profile_from_dict(json.loads(block), source="docs/profiles.rst")
    assert p.resolve_channel("net") == "ib" and p.table("L", "shm").tau.tolist() == [1, 2, 8]
    assert p.table("g", "tcp").lookup(1024) == 2e-9
