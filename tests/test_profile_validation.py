"""Every validation error of the profile format names the file and the exact field."""

import copy
import json

import pytest

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.profile import ProfileError, load_profile, profile_from_dict

TAU = [1, 2, 4, 8]
M = [1, 64, 128, 1024]


def base():
    return {
        "tlop_profile": 1,
        "name": "unit",
        "metadata": {"machine": "m", "date": "2024-02-29", "mpi": {"library": "MPICH", "version": "4.1"}},
        "interpolation": {"tau_beyond": "clamp"},
        "channels": {"shm": {"transmission": "shm", "description": "shared memory"},
                     "ib": {"transmission": "rdma"}},
        "bind": {"net": "ib"},
        "tables": {
            "o": {"shm": {"m": M, "values": [1e-6, 2e-6, 3e-6, 4e-6]}},
            "L": {"shm": {"m": M, "tau": TAU, "values": [[1e-6 * (i + j) for j in TAU] for i in M]}},
            "g": {"*": {"m": [1, 2], "values": [0.0, 1.0]}},
        },
        "scalars": {"alpha": {"shm": 3e-7}, "loggp.L": {"*": 1.2e-6}},
        "fits": {"postal": {"pieces": [1, 2]}},
    }


def load_from(tmp_path, monkeypatch, data_or_text):
    monkeypatch.chdir(tmp_path)
    text = data_or_text if isinstance(data_or_text, str) else json.dumps(data_or_text, indent=1)
    (tmp_path / "profile.json").write_text(text)
    return load_profile("profile.json")


def error_of(tmp_path, monkeypatch, data_or_text) -> str:
    with pytest.raises(ProfileError) as info:
        load_from(tmp_path, monkeypatch, data_or_text)
    assert isinstance(info.value, TlopError)
    return str(info.value)


def mutated(fn):
    d = base()
    fn(d)
    return d


def test_base_is_valid(tmp_path, monkeypatch):
    p = load_from(tmp_path, monkeypatch, base())
    assert p.name == "unit" and p.table("L", "shm").values.shape == (4, 4)


def test_json_syntax_error_reports_line_and_column(tmp_path, monkeypatch):
    msg = error_of(tmp_path, monkeypatch, '{\n  "tlop_profile": 1,\n  "name": "x"\n  "tables": {}\n}\n')
    assert msg.startswith("profile.json:4:3: error[E020]: invalid JSON")
    assert '"tables": {}' in msg and "^" in msg


def test_duplicate_key(tmp_path, monkeypatch):
    text = '{"tlop_profile": 1, "name": "x", "channels": {"shm": {"transmission": "shm", "transmission": "tcp"}}}'
    assert "profile.json: channels.shm.transmission: duplicate key" in error_of(tmp_path, monkeypatch, text)


def test_top_level_must_be_an_object(tmp_path, monkeypatch):
    assert "expected a JSON object at the top level, got a list" in error_of(tmp_path, monkeypatch, "[1, 2]")


def test_version_missing_and_unsupported(tmp_path, monkeypatch):
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d.pop("tlop_profile")))
    assert "profile.json: tlop_profile: missing" in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d.update(tlop_profile=2)))
    assert "profile.json: tlop_profile: unsupported version 2; this tlop reads version 1" in msg


def test_name(tmp_path, monkeypatch):
    assert "profile.json: name: missing" in error_of(tmp_path, monkeypatch, mutated(lambda d: d.pop("name")))
    assert "profile.json: name: must not be empty" in error_of(
        tmp_path, monkeypatch, mutated(lambda d: d.update(name=" ")))


def test_unknown_top_level_key(tmp_path, monkeypatch):
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d.update(table={})))
    assert "profile.json: table: unknown key; expected one of tlop_profile, name," in msg


def test_metadata_fields(tmp_path, monkeypatch):
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["metadata"].update(date="2024-02-30")))
    assert "profile.json: metadata.date: expected a date YYYY-MM-DD, got '2024-02-30'" in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["metadata"]["mpi"].update(version=4)))
    assert "profile.json: metadata.mpi.version: expected a string, got 4" in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["metadata"].update(machine=None)))
    assert "profile.json: metadata.machine: expected a string, got null" in msg


def test_interpolation_fields(tmp_path, monkeypatch):
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["interpolation"].update(tau_beyond="cubic")))
    assert ("profile.json: interpolation.tau_beyond: unknown rule 'cubic'; "
            "expected one of proportional, clamp, linear") in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["interpolation"].update(nonnegative=1)))
    assert "profile.json: interpolation.nonnegative: expected true or false, got 1" in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["interpolation"].update(out_of_grid="raise")))
    assert "interpolation.out_of_grid: unknown rule 'raise'; expected one of allow, warn, error" in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["interpolation"].update(m_abov="clamp")))
    assert "profile.json: interpolation.m_abov: unknown key" in msg


def test_channel_fields(tmp_path, monkeypatch):
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["channels"]["ib"].update(transmission="rdmaa")))
    assert "profile.json: channels.ib.transmission: unknown kind 'rdmaa'; expected one of shm, tcp, rdma" in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["channels"]["ib"].pop("transmission")))
    assert "profile.json: channels.ib: missing required key 'transmission' (or 'path': true" in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["channels"].update({"my-net": {"transmission": "tcp"}})))
    assert 'profile.json: channels["my-net"]: a channel name must be an identifier' in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["channels"]["shm"].update(description=3)))
    assert "profile.json: channels.shm.description: expected a string, got 3" in msg


def test_bind_targets_must_exist(tmp_path, monkeypatch):
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["bind"].update(net="tcp")))
    assert "profile.json: bind.net: unknown profile channel 'tcp'; channels: shm, ib" in msg


def test_table_channel_keys_and_names(tmp_path, monkeypatch):
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["tables"]["o"].update(eth=d["tables"]["o"]["shm"])))
    assert "profile.json: tables.o.eth: no channel 'eth' in channels (shm, ib)" in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["tables"].update({"2L": {}})))
    assert 'profile.json: tables["2L"]: a table or parameter name must be an identifier' in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["tables"]["o"]["shm"].pop("values")))
    assert "profile.json: tables.o.shm: missing required key 'values'" in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["tables"]["o"]["shm"].update(unit="s")))
    assert "profile.json: tables.o.shm.unit: unknown key; expected one of m, tau, values" in msg


def test_grids_strictly_increasing_and_in_range(tmp_path, monkeypatch):
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["tables"]["o"]["shm"].update(m=[1, 64, 64, 1024])))
    assert "profile.json: tables.o.shm.m[2]: grid must be strictly increasing: 64 after 64" in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["tables"]["o"]["shm"].update(m=[-1, 64, 128, 1024])))
    assert "profile.json: tables.o.shm.m[0]: sizes must be >= 0, got -1" in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["tables"]["L"]["shm"].update(tau=[0.5, 2, 4, 8])))
    assert "profile.json: tables.L.shm.tau[0]: concurrencies must be >= 1, got 0.5" in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["tables"]["L"]["shm"].update(tau=[1, 4, 2, 8])))
    assert "profile.json: tables.L.shm.tau[2]: grid must be strictly increasing: 2 after 4" in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["tables"]["o"]["shm"].update(m=[])))
    assert "profile.json: tables.o.shm.m: expected a non-empty list of numbers, got an empty list" in msg


def test_values_shape(tmp_path, monkeypatch):
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["tables"]["L"]["shm"]["values"][3].pop()))
    assert "profile.json: tables.L.shm.values[3]: expected 4 numbers (one per tau), got 3" in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["tables"]["L"]["shm"]["values"].pop()))
    assert "profile.json: tables.L.shm.values: expected 4 rows (one per m), got 3" in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["tables"]["o"]["shm"]["values"].append(1.0)))
    assert "profile.json: tables.o.shm.values: expected 4 numbers (one per m), got 5" in msg


def test_eight_tau_columns_message_from_the_spec(tmp_path, monkeypatch):
    def cut(d):
        d["tables"]["L"]["shm"] = {"m": list(range(1, 6)), "tau": list(range(1, 9)),
                                   "values": [[1e-6] * 8 for _ in range(5)]}
        d["tables"]["L"]["shm"]["values"][3] = [1e-6] * 7
    msg = error_of(tmp_path, monkeypatch, mutated(cut))
    assert "profile.json: tables.L.shm.values[3]: expected 8 numbers (one per tau), got 7" in msg


def test_values_must_be_finite_numbers(tmp_path, monkeypatch):
    text = json.dumps(base()).replace('"values": [1e-06, 2e-06, 3e-06, 4e-06]', '"values": [1e-06, NaN, 3e-06, 4e-06]')
    assert "profile.json: tables.o.shm.values[1]: expected a finite number, got NaN" in error_of(tmp_path, monkeypatch, text)
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["tables"]["L"]["shm"]["values"][0].__setitem__(2, True)))
    assert "profile.json: tables.L.shm.values[0][2]: expected a finite number, got true" in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["tables"]["L"]["shm"].update(values="1,2")))
    assert "profile.json: tables.L.shm.values: expected a list of rows, got '1,2'" in msg


def test_scalars(tmp_path, monkeypatch):
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["scalars"]["alpha"].update(shm="3e-7")))
    assert "profile.json: scalars.alpha.shm: expected a finite number, got '3e-7'" in msg
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d["scalars"]["alpha"].update(tcp=1.0)))
    assert "profile.json: scalars.alpha.tcp: no channel 'tcp' in channels" in msg


def test_fits_must_be_an_object(tmp_path, monkeypatch):
    msg = error_of(tmp_path, monkeypatch, mutated(lambda d: d.update(fits=[1])))
    assert "profile.json: fits: expected an object, got a list" in msg


def test_missing_files_and_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ProfileError, match="nope.json: cannot load profile: no such file"):
        load_profile("nope.json")
    with pytest.raises(ProfileError, match="unknown profile 'metropolys': not a bundled profile .*metropolis"):
        load_profile("metropolys")
    with pytest.raises(ProfileError, match="the bundled profile is named 'lusitania', without .json"):
        load_profile("lusitania.json")
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ProfileError, match="not UTF-8"):
        load_profile("bin.json")


def test_profile_from_dict_uses_the_source_name_and_does_not_mutate():
    d = mutated(lambda d: d["channels"]["ib"].update(transmission="ipoib"))
    before = copy.deepcopy(d)
    with pytest.raises(ProfileError, match="^tlop: error\\[E020\\]: mine: channels.ib.transmission"):
        profile_from_dict(d, source="mine")
    assert d == before


def test_negative_table_values_are_rejected_with_their_path():
    from tlop.runtime.profile import ProfileError, profile_from_dict

    base = {"tlop_profile": 1, "name": "neg", "channels": {"shm": {"transmission": "shm"}}}
    with pytest.raises(ProfileError, match=r"tables\.o\.shm\.values\[1\]: table values cannot be negative"):
        profile_from_dict({**base, "tables": {"o": {"shm": {"m": [1, 2], "values": [1e-6, -1.0]}}}})
    with pytest.raises(ProfileError, match=r"tables\.L\.shm\.values\[0\]\[1\]: table values cannot be negative"):
        profile_from_dict({**base, "tables": {"L": {"shm": {"m": [1], "tau": [1, 2], "values": [[1e-6, -2e-6]]}}}})
