"""Cache keys cover everything a result depends on (issue 22 item 10).

* the checked-IR cache: an entry copied or moved under another file's key is refused (the MAC
  covers the key, the record names its file), so ``Y.tlop`` never evaluates to ``X.tlop``'s
  program;
* the API's native tier: a profile given as a path string is keyed by the file's content, so a
  changed file gives the new numbers.
"""

from __future__ import annotations

import json
import shutil

import pytest

import tlop
from tlop.frontend import checked_cache


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TLOP_CACHE_DIR", str(tmp_path / "cache"))
    for k in checked_cache.stats:
        checked_cache.stats[k] = 0
    return tmp_path / "cache" / "ir"


def test_an_entry_moved_to_another_files_key_is_refused(cache, tmp_path):
    x = tmp_path / "X.tlop"
    y = tmp_path / "Y.tlop"
    x.write_text('import "taulop/platform.tlop"\nalgorithm a(n: int) = n * 1s\n')
    y.write_text('import "taulop/platform.tlop"\nalgorithm a(n: int) = n * 2s\n')
    prof = tlop.default_profile()
    assert tlop.load(x)["a"].evaluate(prof, n=3) == 3.0
    before = set(cache.glob("*/*.ir"))
    assert tlop.load(y)["a"].evaluate(prof, n=3) == 6.0
    (y_entry,) = set(cache.glob("*/*.ir")) - before
    (x_entry,) = before - {p for p in before if "taulop" in p.name}  # the only entry before Y's
    shutil.copyfile(x_entry, y_entry)  # X's entry under Y's key
    checked_cache.stats["rejected"] = 0
    assert tlop.load(y)["a"].evaluate(prof, n=3) == 6.0  # Y's own program, rebuilt
    assert checked_cache.stats["rejected"] == 1


def _profile_file(path, scale):
    data = json.loads((tlop.default_profile().path).read_text())
    data["name"] = "edited"
    for per in data["tables"].values():
        for entry in per.values():
            entry["values"] = [[v * scale for v in row] if isinstance(row, list) else row * scale
                               for row in entry["values"]]
    path.write_text(json.dumps(data))


def test_native_tier_keys_a_profile_path_by_its_content(tmp_path):
    h = tlop.load("taulop/bcast")["binomial"]
    f = tmp_path / "p.json"
    _profile_file(f, 1.0)
    first = [h.evaluate(str(f), mapping="sequential(4)", P=4, m=1024 * k) for k in range(1, 40)]
    _profile_file(f, 10.0)  # the same path, ten times the tables
    again = [h.evaluate(str(f), mapping="sequential(4)", P=4, m=1024 * k) for k in range(1, 40)]
    for a, b in zip(first, again):
        assert b == pytest.approx(10 * a, rel=1e-9)
