"""Wheels ship no raw measurement samples: no ``*.samples.jsonl`` lies in the packaged data folders
and no package-data glob of pyproject.toml matches one (the samples a test reads live in
tests/data/)."""

import pathlib
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _package_dirs(conf: dict) -> dict:
    return {pkg: ROOT / path for pkg, path in conf["tool"]["setuptools"]["package-dir"].items()}


def test_no_package_data_glob_ships_samples():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    dirs = _package_dirs(conf)
    shipped = []
    for pkg, globs in conf["tool"]["setuptools"]["package-data"].items():
        base = dirs[pkg]
        for g in globs:
            shipped += [p for p in base.glob(g) if p.is_file()]
    assert shipped, "the globs match the bundled data"  # not vacuous: .tlop files and profiles
    assert any(p.suffix == ".tlop" for p in shipped) and any(p.name == "metropolis.json" for p in shipped)
    assert [p for p in shipped if p.name.endswith(".samples.jsonl")] == []


def test_no_samples_file_in_a_packaged_folder():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    found = [p for d in _package_dirs(conf).values() for p in d.rglob("*.samples.jsonl")]
    assert found == []
    assert (ROOT / "tests" / "data" / "localhost-example.samples.jsonl").is_file()
