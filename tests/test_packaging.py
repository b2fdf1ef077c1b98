"""`pip wheel .` ships every module, every stdlib .tlop file and every bundled profile."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAPPING = {"compiler": "tlop", "runtime": "tlop/runtime", "stdlib": "tlop/stdlib", "grammar/_antlr": "tlop/_antlr"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(out)],
                   check=True, capture_output=True, timeout=600)
    (whl,) = out.glob("tlop-*.whl")
    return zipfile.ZipFile(whl)


def expected_files():
    for src, dst in MAPPING.items():
        base = ROOT / src
        for f in base.rglob("*"):
            if "__pycache__" in f.parts or not f.is_file():
                continue
            rel = f.relative_to(base).as_posix()
            if f.suffix in (".py", ".tlop", ".json", ".jsonl", ".txt", ".interp", ".tokens") \
                    or f.name == "GRAMMAR_SHA256":
                yield f"{dst}/{rel}"


def test_wheel_contains_everything(wheel):
    missing = sorted(set(expected_files()) - set(wheel.namelist()))
    assert not missing, f"not in the wheel: {missing}"


def test_console_script(wheel):
    (ep,) = [n for n in wheel.namelist() if n.endswith("entry_points.txt")]
    assert "tlop = tlop.cli:main" in wheel.read(ep).decode()
