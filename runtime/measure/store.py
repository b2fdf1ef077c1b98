"""The raw-sample file beside a profile: append point by point, read back, resume.

What it does: a run's results live in ``<profile>.samples.jsonl`` (``profile.json`` →
``profile.samples.jsonl``), one JSON object per line:

* ``{"kind": "run", ...}`` — one per launch: the channel(s), the MPI library, the launcher,
  the environment, the timer, the settings (the profile's metadata is built from these);
* ``{"kind": "point", "key": ..., "bench": ..., "channel": ..., "params": {...},
  "stats": {...}, "stop": ..., "samples": [...]}`` — one per measured point, with every raw
  sample (seconds, 5 significant digits, which is below the timer's noise);
* ``{"kind": "skip", "key": ..., "reason": ...}`` — a point that cannot run here.

Each line is written with a single ``write`` followed by ``flush`` and ``fsync``, so a run that
is interrupted (Ctrl-C, kill, a crashed rank, a power cut) loses at most the point in flight;
a torn last line is ignored on reading and never glued to the next one.  ``--resume`` reads
the file and skips every key already in it.  The writer holds an exclusive ``flock`` on the
file while it appends (a second writer is refused, :mod:`.lock`).

:func:`check_records` is what a run does before resuming: a record that is valid JSON but not
a record this module writes — hand-edited, say, a point without its ``key`` or ``stats`` — is
refused with its line number and what is wrong, and the file is left as it is (nothing is
dropped or re-measured behind the user's back; deleting the line makes the point be measured
again).  :func:`read_records` itself only skips what is not a JSON object with a ``kind``.

What it does not do: build the profile (:mod:`.assemble`) or decide what to measure
(:mod:`.plan`).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Iterable, Optional

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.measure.lock import try_flock
from tlop.runtime.text import printable

__all__ = ["samples_path", "SampleStore", "read_records", "check_records", "record_problem", "done_keys", "compact"]


def samples_path(profile_path) -> Path:
    """``x.json`` → ``x.samples.jsonl`` (any other name gets ``.samples.jsonl`` appended)."""
    p = Path(profile_path)
    stem = p.name[:-5] if p.name.endswith(".json") else p.name
    return p.with_name(stem + ".samples.jsonl")


def done_keys(records) -> set:
    """The keys measured or skipped in ``records`` (what ``--resume`` does not run again)."""
    return {r["key"] for r in records if r.get("kind") in ("point", "skip") and isinstance(r.get("key"), str)}


def compact(samples: Iterable[float]) -> list:
    """Samples rounded to 5 significant digits (finite values only)."""
    return [float(f"{x:.5g}") for x in samples if math.isfinite(x)]


def read_records(path) -> list:
    """Every complete record of a samples file, in order (a torn or corrupt line is skipped)."""
    path = Path(path)
    if not path.exists():
        return []
    out = []
    try:
        with open(path, "r", encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    rec = json.loads(line)
                except (json.JSONDecodeError, RecursionError, ValueError):
                    continue
                if isinstance(rec, dict) and "kind" in rec:
                    out.append(rec)
    except (OSError, UnicodeDecodeError) as err:
        why = err.strerror if isinstance(err, OSError) and err.strerror else err
        raise TlopError(f"{printable(path)}: cannot read the samples file: {why}") from None
    return out


def _is_num(v, none_ok: bool = False) -> bool:
    return (v is None and none_ok) or (isinstance(v, (int, float)) and not isinstance(v, bool))


_STATS_NEEDED = ("n", "median", "min", "p95")


def record_problem(rec: dict) -> Optional[str]:
    """What is wrong with a decoded record, or None if it has every field the run and the
    profile assembly read."""
    kind = rec.get("kind")
    if kind == "run":
        return None
    if kind not in ("point", "skip", "cuda"):
        return f"unknown record kind {printable(json.dumps(kind))[:40]}"
    key = rec.get("key")
    if not isinstance(key, str) or not key:
        return f"a {kind} record without a 'key'"
    if kind == "skip":
        return None
    if kind == "cuda":
        return None if isinstance(rec.get("stats", {}), dict) else "a cuda record whose 'stats' is not an object"
    for f in ("bench", "channel"):
        if not isinstance(rec.get(f), str):
            return f"point {printable(key)}: no '{f}'"
    params = rec.get("params")
    if not isinstance(params, dict):
        return f"point {printable(key)}: no 'params' object"
    expect = "/".join([rec["channel"], rec["bench"]] + [f"{k}={v}" for k, v in sorted(params.items())])
    if expect != key:
        return f"point {printable(key)}: its channel, bench and params say {printable(expect)}"
    stats = rec.get("stats")
    if not isinstance(stats, dict):
        return f"point {printable(key)}: no 'stats' object"
    for f in _STATS_NEEDED:
        if f not in stats or not _is_num(stats[f], none_ok=f != "n"):
            return f"point {printable(key)}: stats.{f} is missing or not a number"
    if not isinstance(rec.get("samples", []), list):
        return f"point {printable(key)}: 'samples' is not a list"
    return None


def check_records(path) -> int:
    """Refuse a samples file holding a record :func:`record_problem` finds wrong (a TlopError
    naming ``file:line``); returns the number of records."""
    path = Path(path)
    if not path.exists():
        return 0
    n = 0
    try:
        with open(path, "r", encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    rec = json.loads(line)
                except (json.JSONDecodeError, RecursionError, ValueError):
                    continue                    # a torn line (a crash mid-write): never a record
                if not (isinstance(rec, dict) and "kind" in rec):
                    continue
                problem = record_problem(rec)
                if problem:
                    raise TlopError(f"{printable(path)}:{lineno}: {problem} (edited by hand?); fix or "
                                    f"delete that line — a deleted point is measured again — and run "
                                    f"the same command with --resume")
                n += 1
    except (OSError, UnicodeDecodeError) as err:
        why = err.strerror if isinstance(err, OSError) and err.strerror else err
        raise TlopError(f"{printable(path)}: cannot read the samples file: {why}") from None
    return n


class SampleStore:
    """Append-only writer of a samples file (used by the rank that collects results)."""

    def __init__(self, path, fresh: bool = False):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._f = open(self.path, "a", encoding="utf-8")
            if try_flock(self._f.fileno()) is False:
                self._f.close()
                raise TlopError(f"{printable(self.path)}: another process is writing this samples file "
                                f"(a tlop measure still running, or the ranks of one that was killed); "
                                f"wait for it to finish or stop it, then run again with --resume")
            if fresh:
                self._f.truncate(0)
            self._needs_newline = self._ends_torn()
        except OSError as err:
            raise TlopError(f"{printable(self.path)}: cannot write the samples file: "
                            f"{err.strerror or err}") from None

    def _ends_torn(self) -> bool:
        try:
            with open(self.path, "rb") as f:
                f.seek(0, os.SEEK_END)
                if f.tell() == 0:
                    return False
                f.seek(-1, os.SEEK_END)
                return f.read(1) != b"\n"
        except FileNotFoundError:
            return False

    def done_keys(self) -> set:
        return done_keys(read_records(self.path))

    def append(self, record: dict) -> None:
        text = json.dumps(record, separators=(",", ":"), allow_nan=False)
        if self._needs_newline:
            text = "\n" + text
            self._needs_newline = False
        self._f.write(text + "\n")
        self._f.flush()
        os.fsync(self._f.fileno())

    def close(self) -> None:
        if not self._f.closed:
            self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def point_record(point, summary: dict, reason: str, samples, extra: Optional[dict] = None) -> dict:
    """The record of one measured point (``summary`` from :func:`.stats.summarize`)."""
    stats = {k: (v if not isinstance(v, float) or math.isfinite(v) else None) for k, v in summary.items()}
    rec = {"kind": "point", "key": point.key, "bench": point.bench, "channel": point.channel,
           "params": point.p, "stop": reason, "stats": stats, "unit": "s",
           "samples": compact(samples)}
    if extra:
        rec.update(extra)
    return rec
