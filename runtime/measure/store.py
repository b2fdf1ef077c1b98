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
the file and skips every key already in it.

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

__all__ = ["samples_path", "SampleStore", "read_records", "compact"]


def samples_path(profile_path) -> Path:
    """``x.json`` → ``x.samples.jsonl`` (any other name gets ``.samples.jsonl`` appended)."""
    p = Path(profile_path)
    stem = p.name[:-5] if p.name.endswith(".json") else p.name
    return p.with_name(stem + ".samples.jsonl")


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
                except json.JSONDecodeError:
                    continue
                if isinstance(rec, dict) and "kind" in rec:
                    out.append(rec)
    except OSError as err:
        raise TlopError(f"{path}: cannot read the samples file: {err.strerror or err}") from None
    return out


class SampleStore:
    """Append-only writer of a samples file (used by the rank that collects results)."""

    def __init__(self, path, fresh: bool = False):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if fresh and self.path.exists():
                self.path.unlink()
            self._needs_newline = self._ends_torn()
            self._f = open(self.path, "a", encoding="utf-8")
        except OSError as err:
            raise TlopError(f"{self.path}: cannot write the samples file: {err.strerror or err}") from None

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
        return {r["key"] for r in read_records(self.path) if r.get("kind") in ("point", "skip")}

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
