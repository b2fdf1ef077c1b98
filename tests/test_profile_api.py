"""The Profile API: channels and bindings, table/scalar access, modified copies, out-of-grid modes."""

import warnings

import numpy as np
import pytest

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.errors import OutOfGridError
from tlop.runtime.profile import (ChannelInfo, OutOfGridWarning, ProfileError, TableData,
                                  profile_from_dict)


def sample(**interp):
    return profile_from_dict({
        "tlop_profile": 1, "name": "sample", "interpolation": interp,
        "channels": {"shm": {"transmission": "shm", "description": "shared memory"},
                     "ib": {"transmission": "rdma", "description": "InfiniBand"},
                     "tcp": {"transmission": "tcp", "description": "10 GbE"}},
        "bind": {"net": "ib"},
        "tables": {
            "o": {"shm": {"m": [1, 64], "values": [5.5e-7, 5.4e-7]},
                  "ib": {"m": [1, 64], "values": [1.7e-6, 1.7e-6]}},
            "L": {"shm": {"m": [1, 64], "tau": [1, 2, 8], "values": [[1e-7, 2e-7, 8e-7], [2e-7, 4e-7, 1.6e-6]]}},
            "g": {"*": {"m": [1, 1024], "values": [1e-9, 2e-9]}},
        },
        "scalars": {"L": {"*": 1.2e-6}, "alpha": {"shm": 3e-7, "tcp": 5e-5}},
    })


def test_channels_and_kinds():
    p = sample()
    assert p.channels["ib"] == ChannelInfo("ib", "rdma", "InfiniBand")
    assert p.transmission_kind("tcp") == "tcp"
    with pytest.raises(ProfileError, match="has no channel 'eth'; channels: shm, ib, tcp"):
        p.transmission_kind("eth")


def test_resolve_channel_binding_self_and_absent():
    p = sample()
    assert p.resolve_channel("net") == "ib"
    assert p.resolve_channel("shm") == "shm"        # a profile channel resolves to itself
    assert p.resolve_channel("numa") is None


def test_with_bindings_returns_a_rebound_copy():
    p = sample()
    q = p.with_bindings({"net": "tcp"})
    assert q.resolve_channel("net") == "tcp" and p.resolve_channel("net") == "ib"
    assert q.to_dict()["bind"] == {"net": "tcp"}
    with pytest.raises(ProfileError, match="bind net=eth: profile 'sample' has no channel 'eth'"):
        p.with_bindings({"net": "eth"})
    with pytest.raises(ProfileError, match="not a channel name"):
        p.with_bindings({"my net": "ib"})


def test_tables_by_channel_and_star_fallback():
    p = sample()
    assert p.table_names() == ["L", "g", "o"]
    assert p.has_table("L", "shm") and not p.has_table("L", "ib")
    assert p.has_table("g", None) and p.has_table("g", "tcp")     # "*" applies to every channel
    assert not p.has_table("o", None)                               # None finds only "*" entries
    t = p.table("L", "shm")
    assert isinstance(t, TableData) and t.name == "L" and t.channel == "shm"
    assert t.tau.tolist() == [1, 2, 8] and t.values.shape == (2, 3)
    assert p.table("g", "ib").channel is None
    with pytest.raises(ProfileError, match="no table 'L' for channel 'ib'; it has entries for: shm"):
        p.table("L", "ib")
    with pytest.raises(ProfileError, match="has no table 'T'; it has: L, g, o"):
        p.table("T", "shm")


def test_tables_are_read_only():
    t = sample().table("L", "shm")
    with pytest.raises(ValueError):
        t.values[0, 0] = 1.0


def test_scalars():
    p = sample()
    assert p.scalar("L", None) == 1.2e-6 and p.scalar("L", "shm") == 1.2e-6
    assert p.scalar("alpha", "tcp") == 5e-5
    assert p.has_scalar("alpha", "shm") and not p.has_scalar("alpha", "ib")
    with pytest.raises(ProfileError, match="no parameter 'alpha' for channel 'ib'"):
        p.scalar("alpha", "ib")


def test_with_interpolation_changes_lookups_not_the_original():
    p = sample()
    q = p.with_interpolation(tau_beyond="clamp")
    assert q.table("L", "shm").lookup(64, 16) == pytest.approx(1.6e-6)
    assert p.table("L", "shm").lookup(64, 16) == pytest.approx(3.2e-6)
    assert q.interpolation.tau_beyond == "clamp" and p.interpolation.tau_beyond == "proportional"
    with pytest.raises(ProfileError, match="interpolation.tau_beyond: unknown rule 'cubic'"):
        p.with_interpolation(tau_beyond="cubic")
    with pytest.raises(ProfileError, match="interpolation.tau: unknown rule name"):
        p.with_interpolation(tau="clamp")


def test_out_of_grid_allow_is_silent():
    t = sample(out_of_grid="allow").table("L", "shm")  # allow is the explicit choice (default: warn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert t.lookup(128, 16) > 0


def test_out_of_grid_warn_once_per_table():
    p = sample(out_of_grid="warn")
    t, o = p.table("L", "shm"), p.table("o", "shm")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t.lookup(32, 2)                   # inside: no warning
        t.lookup(np.array([32, 100]), 2)
        t.lookup(200, 2)                  # same table again: no second warning
        t.lookup(32, 16)
        o.lookup(0.5)                     # another table warns on its own
    grid = [w for w in caught if issubclass(w.category, OutOfGridWarning)]
    assert len(grid) == 2
    assert "table 'L' on channel 'shm': m = 100 B is outside the measured grid 1 .. 64 B" in str(grid[0].message)
    assert "table 'o' on channel 'shm': m = 0.5 B" in str(grid[1].message)


def test_out_of_grid_error_names_table_channel_value_and_range():
    p = sample(out_of_grid="error")
    t = p.table("L", "shm")
    assert t.lookup(np.array([1, 30, 64]), np.array([1, 2, 8])).shape == (3,)
    with pytest.raises(OutOfGridError) as info:
        t.lookup(np.array([10, 70]), 1)
    assert isinstance(info.value, TlopError)
    assert "table 'L' on channel 'shm': m = 70 B is outside the measured grid 1 .. 64 B" in str(info.value)
    with pytest.raises(OutOfGridError, match="tau = 9 is outside the measured columns 1 .. 8"):
        t.lookup(10, 9)
    with pytest.raises(OutOfGridError, match=r"table 'g': m = 2048 B"):
        p.table("g", None).lookup(2048)


def test_with_interpolation_out_of_grid_error_on_a_loaded_profile():
    q = sample().with_interpolation(out_of_grid="error")
    with pytest.raises(OutOfGridError):
        q.table("o", "ib").lookup(65)


def test_fingerprint_tracks_what_affects_prices():
    p = sample()
    assert p.fingerprint() == sample().fingerprint()
    assert p.with_bindings({"net": "tcp"}).fingerprint() != p.fingerprint()
    assert p.with_interpolation(tau_beyond="clamp").fingerprint() != p.fingerprint()
    d = p.to_dict()
    d["metadata"]["notes"] = "edited"
    d["name"] = "other"
    assert profile_from_dict(d).fingerprint() == p.fingerprint()
    d["tables"]["o"]["shm"]["values"][0] = 5.6e-7
    assert profile_from_dict(d).fingerprint() != p.fingerprint()
