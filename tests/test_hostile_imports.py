"""Issue 14, imports: only .tlop sources are imported (refused before reading), and unreadable,
non-UTF-8 or BOM-prefixed files give located errors (or, for the BOM, none)."""

import os
from pathlib import Path

import pytest

import tlop
from tlop.cli.main import main
from tlop.runtime.diagnostics import TlopError


def _write(path: Path, data) -> Path:
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


def _error(path) -> str:
    with pytest.raises(TlopError) as err:
        tlop.load(path)
    return str(err.value)


@pytest.fixture
def secret(tmp_path):
    return _write(tmp_path / "secret", "TOPSECRET: hunter2\n")


@pytest.mark.parametrize("how", ["absolute", "relative", "no-suffix-name", "link-named-tlop"])
def test_files_that_are_not_tlop_sources_are_never_read(tmp_path, secret, how, monkeypatch):
    read = []
    real = Path.read_bytes

    def spy(self):
        read.append(self.name)
        return real(self)
    monkeypatch.setattr(Path, "read_bytes", spy)
    if how == "absolute":
        target = str(secret)
    elif how == "relative":
        target = "secret"
    elif how == "no-suffix-name":
        target = "secret"  # 'secret.tlop' does not exist: the plain file is not taken instead
    else:
        (tmp_path / "lib.tlop").symlink_to(secret)
        target = "lib.tlop"
    main_file = _write(tmp_path / "main.tlop", f'import "{target}"\nalgorithm a(x: int) = x * 1s\n')
    msg = _error(main_file)
    assert "main.tlop:1:1: error[E007]: cannot import" in msg
    assert f"'{secret}' is not a .tlop source (only .tlop files are imported; it was not read)" in msg
    assert "TOPSECRET" not in msg and "secret" not in read


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_devices_are_not_imported(tmp_path):
    main_file = _write(tmp_path / "main.tlop", 'import "/dev/zero"\n')
    assert "cannot import '/dev/zero': '/dev/zero' is not a .tlop source" in _error(main_file)


def test_non_utf8_bytes_are_located(tmp_path):
    bad = _write(tmp_path / "bad.tlop", b"algorithm a(x: int) = x * 1s\n/// caf\xe9 au lait\n")
    msg = _error(bad)
    assert "bad.tlop:2:8: error[E001]: not UTF-8 text: byte 0xe9 (invalid continuation byte)" in msg
    main_file = _write(tmp_path / "main.tlop", '\nimport "bad.tlop"\n')
    msg = _error(main_file)
    assert "bad.tlop:2:8: error[E001]: not UTF-8 text" in msg
    assert msg.split("note: imported at ")[1].endswith("main.tlop:2:1")


def test_an_unreadable_import_is_an_error_at_the_import(tmp_path, monkeypatch, capsys):
    lib = _write(tmp_path / "lib.tlop", "def k() -> int = 2\n")
    main_file = _write(tmp_path / "main.tlop", 'import "lib.tlop"\nalgorithm a(x: int) = k() * x * 1s\n')
    real = Path.read_bytes

    def denied(self):
        if self.name == "lib.tlop":
            raise PermissionError(13, "Permission denied")
        return real(self)
    monkeypatch.setattr(Path, "read_bytes", denied)
    monkeypatch.setenv("TLOP_CACHE_DIR", "off")
    assert main(["check", str(main_file)]) == 1
    err = capsys.readouterr().err
    assert "main.tlop:1:1: error[E007]: cannot read " in err and "lib.tlop: Permission denied" in err
    assert "Traceback" not in err


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() == 0, reason="root reads mode-000 files")
def test_a_mode_000_import_is_an_error_at_the_import(tmp_path):
    lib = _write(tmp_path / "lib.tlop", "def k() -> int = 2\n")
    lib.chmod(0)
    main_file = _write(tmp_path / "main.tlop", 'import "lib.tlop"\nalgorithm a(x: int) = k() * x * 1s\n')
    try:
        assert "main.tlop:1:1: error[E007]: cannot read" in _error(main_file)
    finally:
        lib.chmod(0o644)


def test_a_byte_order_mark_is_accepted(tmp_path):
    bom = b"\xef\xbb\xbf"
    lib = _write(tmp_path / "lib.tlop", bom + b"def k() -> int = 3\n")
    main_file = _write(tmp_path / "main.tlop", bom + b'import "lib.tlop"\nalgorithm a(x: int) = k() * x * 1s\n')
    assert lib.exists()
    assert tlop.load(main_file)["a"].evaluate(None, x=2) == 6.0
    # columns count from after the mark
    bad = _write(tmp_path / "bad.tlop", bom + b"algorithm a(x: int) = y * 1s\n")
    assert "bad.tlop:1:23: error[E003]:" in _error(bad)


@pytest.mark.parametrize("literal, text", [
    (r'"a\x"', r"a\x"),
    (r'"\N{nope}"', r"\N{nope}"),
    (r'"\u12"', r"\u12"),
    (r'"caf\u00e9"', r"caf\u00e9"),
    (r'"dir\\x \"q\""', r'dir\x "q"'),
    ('"café/ü"', "café/ü"),
])
def test_string_escapes_are_only_backslash_and_quote(tmp_path, literal, text):
    """Issue 14 tracebacks: Python's unicode_escape once decoded import paths (a traceback on
    ``\\x``, ``\\N{…}``, ``\\u12``); only ``\\\\`` and ``\\"`` are escapes, anything else is kept."""
    path = _write(tmp_path / "esc.tlop", f"import {literal}\n")
    message = _error(path)
    assert f"esc.tlop:1:1: error[E007]: cannot find imported file '{text}'" in message
