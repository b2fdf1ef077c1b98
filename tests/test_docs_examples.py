"""Every code block of the documentation and the README is run, or says that it is not runnable.

What each kind of block means here (one rule per language, in page order, one working
directory per page so that a page's blocks build on each other):

* ``tlop`` — with ``:caption: NAME.tlop`` (a ``literalinclude`` of ``docs/examples/`` too, or in
  Markdown `````tlop NAME.tlop``) the block is that file: it is written into the
  page's directory (a later block of the same name replaces it, as a tutorial edits a file) and
  the page's commands check it.  Without a caption it must check on its own (``tlop check``);
  a block without an ``import`` is checked as if it began with ``import
  "taulop/platform.tlop"``.  A fragment that is not a module is marked ``text``.
* ``console`` — ``$ tlop …`` lines (a trailing ``\\`` continues one) run in-process
  (:func:`tlop.cli.main.main`); the lines after a command up to the next ``$`` are its output,
  stderr first then stdout, compared line by line after :func:`normalise` (a line ``…`` stands
  for any number of lines); with no output shown the command must succeed.  Commands that need
  an MPI job or a real cluster (:data:`NOT_RUN`) are parsed with the CLI's own parser instead,
  so a stale option still fails, and so is a later command that reads a file such a command
  would have written (``--out``).  Commands that take seconds (:data:`SLOW`) are parsed in the
  default run and run in the ``slow`` one (``-m slow``).  Other programs (``mpiexec``,
  ``python …``) are not run.
* ``python`` — executed, blocks of one page in one namespace, in the page's directory.
* ``json`` — parsed; with ``:caption: NAME.json`` it is written into the page's directory.
* ``text`` — not run: output shown alone, fragments, error messages of other tools; with
  ``:caption: NAME`` it is a file the page's commands read (a host file), written as such.
* ``sh`` — only the README's set-up lines (they are what builds the environment that runs this).

A bare ``::`` literal block is an error: its kind must be said.  A failure shows the command
and a diff of the documented against the actual output, so that updating a page after a change
of printed output is a copy from the message.
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: commands documented but not run here: they start MPI jobs or measure a machine (their own
#: tests run them, marked ``mpi``); their options are still parsed
NOT_RUN = {"measure", "validate", "tune-check"}

#: commands that take more than about 1.5 s of CPU (the default run parses them; the ``slow`` run,
#: ``-m slow``, runs them as well): (page, the start of the command) -> why
SLOW = {
    ("docs/configurations.rst", "tlop explain kernels/summa summa b=8KiB --config fig8 --at k=80"):
        "paper 000's derivation of one SUMMA iteration: ~25 s",
    ("docs/configurations.rst", "tlop sweep kernels/summa summa_banded N=128,256 b=8KiB --config M14..M16"):
        "6 SUMMA evaluations over 41-47 ranks: ~10 s (tests/test_config_sweep.py runs it too)",
    ("docs/configurations.rst", "tlop eval kernels/summa summa N=128 b=8KiB --config M10"):
        "~5 s",
    ("docs/papers.rst", "tlop grid-bcast simulate --runs 10000"): "910,000 simulated broadcasts: ~75 s",
    ("docs/configurations.rst", "tlop eval kernels/summa summa b=8KiB --config fig8"): "~2 s",
    ("docs/configurations.rst", "tlop eval kernels/summa summa b=8KiB --layout two-nodes.json"): "~2 s",
    ("docs/configurations.rst", "tlop eval kernels/hloggp summa_hloggp_pairs N=128"): "~2 s",
    ("docs/configurations.rst", "tlop sweep kernels/hloggp wave2d_hloggp_pairs"): "~1.5 s",
    ("README.md", "tlop tune P=2..32:x2"): "two collectives, both libraries: ~4 s",
    ("README.md", "tlop prove taulop/collectives"): "a bounded Z3 proof: ~3 s",
    ("README.md", "tlop audit P=2..32:x2"): "~2 s",
}


def _slow(doc: str, text: str) -> bool:
    return any(doc == d and text.startswith(c) for d, c in SLOW)


#: languages a block may have
KINDS = {"tlop", "console", "python", "json", "text", "sh"}


@dataclass
class Block:
    doc: str
    line: int
    lang: str
    body: str
    caption: str | None = None
    options: dict = field(default_factory=dict)


def _documents() -> list[Path]:
    pages = sorted(DOCS.glob("*.rst")) + sorted(DOCS.glob("*/*.rst"))
    return [ROOT / "README.md"] + [p for p in pages if "_build" not in p.parts]


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def rst_blocks(path: Path) -> list[Block]:
    """The code blocks of an RST page (``code-block`` and ``literalinclude`` directives, and bare
    literal blocks as language ``None``)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    out, i = [], 0
    rel = _rel(path)
    while i < len(lines):
        line = lines[i]
        inc = re.match(r"^(\s*)\.\. literalinclude::\s*(\S+)\s*$", line)
        if inc:
            options, j = {}, i + 1
            while j < len(lines) and re.match(r"^\s+:(\w[\w-]*):\s*(.*)$", lines[j]):
                k, v = re.match(r"^\s+:(\w[\w-]*):\s*(.*)$", lines[j]).groups()
                options[k] = v.strip()
                j += 1
            text = (path.parent / inc.group(2)).read_text(encoding="utf-8")
            out.append(Block(rel, i + 1, options.get("language"), text, options.get("caption"), options))
            i = j
            continue
        m = re.match(r"^(\s*)\.\. (code-block|code|sourcecode)::\s*(\S*)\s*$", line)
        bare = (not line.lstrip().startswith("..") and line.rstrip().endswith("::")
                and not line.rstrip().endswith(":::"))
        if not (m or bare):
            i += 1
            continue
        ind, start = _indent(line), i + 1
        options, j = {}, i + 1
        if m:
            while j < len(lines) and re.match(r"^\s+:(\w[\w-]*):\s*(.*)$", lines[j]):
                k, v = re.match(r"^\s+:(\w[\w-]*):\s*(.*)$", lines[j]).groups()
                options[k] = v.strip()
                j += 1
        body = []
        while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > ind):
            body.append(lines[j])
            j += 1
        while body and not body[-1].strip():
            body.pop()
        strip = min((_indent(b) for b in body if b.strip()), default=0)
        text = "\n".join(b[strip:] for b in body).strip("\n")
        lang = (m.group(3) or "default") if m else None
        if text:
            out.append(Block(rel, start, lang, text + "\n", options.get("caption"), options))
        i = j
    return out


def md_blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file (an unlabelled fence as language ``None``; a
    second word after the language, `````tlop mine.tlop``, is the caption)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    out, i = [], 0
    rel = _rel(path)
    while i < len(lines):
        m = re.match(r"^```(\S*)(?:\s+(\S+))?\s*$", lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        out.append(Block(rel, i + 1, m.group(1) or None, "\n".join(lines[i + 1:j]) + "\n", m.group(2)))
        i = j + 1
    return out


def blocks(path: Path) -> list[Block]:
    return md_blocks(path) if path.suffix == ".md" else rst_blocks(path)


# --- console blocks -------------------------------------------------------------------------

@dataclass
class Command:
    line: int
    text: str
    expected: list[str]


def commands(block: Block) -> list[Command]:
    """The ``$`` commands of a console block with the output lines shown after each."""
    out: list[Command] = []
    lines = block.body.rstrip("\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            if not out:
                raise AssertionError(f"{block.doc}:{block.line + i}: a console block starts with '$ ': {line!r}")
            out[-1].expected.append(line)
            i += 1
            continue
        text, n = line[2:], block.line + i
        while text.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            text = text.rstrip()[:-1] + " " + lines[i].strip()
        out.append(Command(n, text, []))
        i += 1
    return out


_DURATION = re.compile(r"\bin \d+(\.\d+)? (s|ms|µs)\b")


def normalise(text: str) -> list[str]:
    """Lines without trailing blanks, without leading and trailing empty lines, wall-clock
    durations ("proved in 1.2 s") replaced by ``in N s``."""
    lines = [_DURATION.sub("in N s", ln.rstrip()) for ln in text.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def matches(expected: list[str], actual: list[str]) -> bool:
    """``expected`` equals ``actual``, a line ``…`` standing for any number of lines."""
    if not expected:
        return not actual
    if expected[0].strip() == "…":
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and matches(expected[1:], actual[1:])


def run_command(cmd: Command, block: Block, capsys, not_made: set, run_slow: bool = True) -> None:
    """Run one command (or parse it: :data:`NOT_RUN`, and commands that read a file only a
    command not run would have made, whose names ``not_made`` collects)."""
    argv = shlex.split(cmd.text, comments=True)
    where = f"{block.doc}:{cmd.line}: $ {cmd.text}"
    if not argv or argv[0] != "tlop":
        assert not normalise("\n".join(cmd.expected)), f"{where}: output is shown for a command this test does not run"
        return
    from tlop.cli.main import COMMANDS, build_parser, main

    sub = next((a for a in argv[1:] if not a.startswith("-")), None)
    if sub in NOT_RUN or not_made.intersection(argv) or (not run_slow and _slow(block.doc, cmd.text)):
        parser = build_parser(sub if sub in COMMANDS else None)
        capsys.readouterr()
        try:
            args = parser.parse_args(argv[1:])
        except SystemExit as e:
            raise AssertionError(f"{where}: the CLI does not parse it ({capsys.readouterr().err.strip()})") from e
        assert getattr(args, "run", None), where
        if sub in NOT_RUN:
            not_made.update(argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--out")
        return
    capsys.readouterr()
    rc = main(argv[1:])
    captured = capsys.readouterr()
    actual = normalise(captured.err + captured.out)
    if not cmd.expected:
        assert rc == 0, f"{where}: exit status {rc}\n" + "\n".join(actual)
        return
    expected = normalise("\n".join(cmd.expected))
    if not any(line.startswith("tlop: note:") for line in expected):  # a cache directory's note, once
        actual = [line for line in actual if not line.startswith("tlop: note:")]
    if not matches(expected, actual):
        diff = "\n".join(difflib.unified_diff(expected, actual, "documented", "tlop prints", lineterm=""))
        raise AssertionError(f"{where}: the documented output is not what tlop prints\n{diff}")


# --- the other kinds ------------------------------------------------------------------------

def check_tlop(block: Block, capsys) -> None:
    from tlop.cli.main import main

    if block.caption:
        assert block.caption.endswith(".tlop"), f"{block.doc}:{block.line}: caption {block.caption!r}"
        Path(block.caption).write_text(block.body, encoding="utf-8")
        return
    body = block.body
    if not re.search(r"^\s*import\b", body, re.M):
        body = 'import "taulop/platform.tlop"\n' + body
    Path("_block.tlop").write_text(body, encoding="utf-8")
    capsys.readouterr()
    rc = main(["check", "_block.tlop"])
    err = capsys.readouterr().err
    assert rc == 0, (f"{block.doc}:{block.line}: this tlop block does not check (make it a module, "
                     f"or mark a fragment as text):\n{err}")


def check_json(block: Block) -> None:
    try:
        data = json.loads(block.body)
    except ValueError as e:
        raise AssertionError(f"{block.doc}:{block.line}: not JSON ({e}); mark a fragment as text") from e
    if block.caption:
        Path(block.caption).write_text(json.dumps(data, indent=1), encoding="utf-8")


def run_python(block: Block, namespace: dict) -> None:
    code = compile(block.body, f"{block.doc}:{block.line}", "exec")
    exec(code, namespace)  # noqa: S102 - the documentation's own examples


DOCUMENTS = _documents()
_PAGES = [pytest.param(p, False, id=_rel(p)) for p in DOCUMENTS] + [
    pytest.param(p, True, id=_rel(p) + "-slow", marks=pytest.mark.slow)
    for p in DOCUMENTS if any(d == _rel(p) for d, _ in SLOW)]


@pytest.mark.parametrize("path, run_slow", _PAGES)
def test_every_block_of_the_page_runs(path, run_slow, tmp_path, monkeypatch, capsys):
    """Each page's blocks in order (:data:`SLOW` commands parsed only, but in the ``slow`` run)."""
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    failures: list[str] = []
    not_made: set = set()
    for block in blocks(path):
        try:
            run_block(block, path, namespace, capsys, failures, not_made, run_slow)
        except AssertionError as e:
            failures.append(str(e).split("\nassert ")[0])
        except Exception as e:  # a python block's own error
            failures.append(f"{block.doc}:{block.line}: {type(e).__name__}: {e}")
    assert not failures, f"{len(failures)} block(s) of {path.name} fail:\n\n" + "\n\n".join(failures)


def run_block(block: Block, path: Path, namespace: dict, capsys, failures: list, not_made: set,
              run_slow: bool = True) -> None:
    where = f"{block.doc}:{block.line}"
    assert block.lang is not None, f"{where}: a code block without a language: mark it (text if it is not run)"
    assert block.lang in KINDS, f"{where}: language {block.lang!r}; one of {sorted(KINDS)}"
    if block.lang == "tlop":
        check_tlop(block, capsys)
    elif block.lang == "console":
        for cmd in commands(block):
            try:
                run_command(cmd, block, capsys, not_made, run_slow)
            except AssertionError as e:
                failures.append(str(e).split("\nassert ")[0])
    elif block.lang == "python":
        run_python(block, namespace)
    elif block.lang == "json":
        check_json(block)
    elif block.lang == "text":
        if block.caption:  # a file the page's commands read
            Path(block.caption).write_text(block.body, encoding="utf-8")
    elif block.lang == "sh":
        assert path.name == "README.md", f"{where}: a shell block: run it as console, or mark it text"


def test_every_slow_command_is_on_its_page():
    """A :data:`SLOW` entry that no longer names a documented command would let nothing be slow."""
    shown = {(b.doc, c.text) for p in DOCUMENTS for b in blocks(p) if b.lang == "console" for c in commands(b)}
    for doc, start in SLOW:
        assert any(d == doc and text.startswith(start) for d, text in shown), (doc, start)


def test_the_block_parsers():
    """The extraction itself: a console block's commands and outputs, continuation lines, the
    wildcard line, and a bare literal block seen as one without a language."""
    b = Block("x.rst", 1, "console", "$ tlop eval a \\\n    b  # note\nout 1\n…\n$ tlop check f\n")
    cmds = commands(b)
    assert [(c.text, c.expected) for c in cmds] == [("tlop eval a  b  # note", ["out 1", "…"]),
                                                     ("tlop check f", [])]
    assert shlex.split(cmds[0].text, comments=True) == ["tlop", "eval", "a", "b"]
    assert matches(["a", "…", "d"], ["a", "b", "c", "d"]) and not matches(["a", "…", "d"], ["a", "b"])
    assert normalise("proved in 1.25 s, x\n56 rules in 80.2 ms\n\n") == ["proved in N s, x", "56 rules in N s"]


def test_a_bare_literal_block_is_found(tmp_path):
    page = tmp_path / "p.rst"
    page.write_text("Title\n=====\n\nRun this::\n\n    $ tlop check x.tlop\n\n.. code-block:: tlop\n"
                    "   :caption: a.tlop\n\n   algorithm a = 1\n", encoding="utf-8")
    found = rst_blocks(page)
    assert [(b.lang, b.caption, b.body) for b in found] == [
        (None, None, "$ tlop check x.tlop\n"), ("tlop", "a.tlop", "algorithm a = 1\n")]
