"""The SDK stands alone: no import of the arena, only grpcio and protobuf as dependencies."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "sdk" / "atout"
THIRD_PARTY_ALLOWED = {"grpc", "google"}  # grpcio, protobuf
# used when installed, never required: imported only inside ``try: ... except ImportError``
# orjson: the observation's JSON parsed ~5x faster; uvloop: a cheaper event loop; pyarrow: Parquet datasets;
# pyspiel and numpy: atout.openspiel (the extra openspiel)
# pettingzoo, gymnasium and numpy: atout.envs (the extra rl)
THIRD_PARTY_OPTIONAL = {"orjson", "uvloop", "pyarrow", "pyspiel", "numpy", "pettingzoo", "gymnasium"}


def _imported_top_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_sdk_imports_nothing_from_the_arena() -> None:
    files = sorted(SDK.rglob("*.py"))
    assert len(files) > 10
    offenders = {
        str(f.relative_to(ROOT)): sorted(m & {"atout_arena", "atout_workers"})
        for f in files
        if (m := _imported_top_modules(f)) & {"atout_arena", "atout_workers"}
    }
    assert offenders == {}


def _guarded_optional_imports(path: Path) -> set[str]:
    """The optional modules ``path`` imports inside ``try`` blocks that catch ImportError."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        catches = {h.type.id for h in node.handlers if isinstance(h.type, ast.Name)}
        if not catches & {"ImportError", "ModuleNotFoundError"}:
            continue
        for inner in node.body:
            if isinstance(inner, ast.ImportFrom) and inner.module:
                found.add(inner.module.split(".")[0])
            elif isinstance(inner, ast.Import):
                found.update(alias.name.split(".")[0] for alias in inner.names)
    return found & THIRD_PARTY_OPTIONAL


def test_sdk_imports_only_the_stdlib_grpc_and_protobuf() -> None:
    """... and optional speed-ups, only where their absence is caught."""
    allowed = set(sys.stdlib_module_names) | THIRD_PARTY_ALLOWED | {"atout", "__future__"}
    offenders = {
        str(f.relative_to(ROOT)): sorted(extra)
        for f in sorted(SDK.rglob("*.py"))
        if (extra := _imported_top_modules(f) - allowed - _guarded_optional_imports(f))
    }
    assert offenders == {}


def test_the_sdk_plays_without_its_optional_speed_ups(tmp_path: Path) -> None:
    """With orjson and uvloop hidden, the runner's dispatcher parses observations with the json
    module and its loop is asyncio's."""
    script = tmp_path / "no_orjson.py"
    script.write_text(
        "import sys, json\n"
        "sys.modules['orjson'] = None  # import orjson now raises ImportError\n"
        "sys.modules['uvloop'] = None\n"
        "import asyncio\n"
        "from atout._dispatch import _loads\n"
        "assert _loads is json.loads, _loads\n"
        "import atout.runner  # noqa: F401\n"
        "from atout import _loop\n"
        "assert _loop.loop_factory() is asyncio.new_event_loop\n"
        "assert _loop.run(asyncio.sleep(0, 'done')) == 'done'\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_scan_sees_an_arena_import(tmp_path: Path) -> None:
    sample = tmp_path / "x.py"
    sample.write_text(
        "import os\nfrom atout_arena.core.db import Bot\nimport atout_workers.tasks as t\nfrom . import bot\n"
    )
    assert _imported_top_modules(sample) == {"os", "atout_arena", "atout_workers"}


@pytest.mark.timeout(120)
def test_built_wheel_depends_on_grpcio_and_protobuf_only(tmp_path: Path) -> None:
    """What `pip install ./sdk` installs: build the wheel from a copy of sdk/ and read its METADATA."""
    src = tmp_path / "sdk"
    shutil.copytree(ROOT / "sdk", src, ignore=shutil.ignore_patterns("*.egg-info", "__pycache__", "build"))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(tmp_path / "dist"),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    (wheel,) = (tmp_path / "dist").glob("atout-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry_points = zf.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    requires = sorted(
        line.split(":", 1)[1].strip() for line in metadata.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line  # the optional extras aside
    )
    assert [r.split(">")[0].split("=")[0].split("<")[0] for r in requires] == ["grpcio", "protobuf"], requires
    assert "atout-bot = atout.cli:main" in entry_points
    for needed in (
        "atout/v1/atout_pb2.py",
        "atout/v1/atout_pb2_grpc.py",
        "atout/v1/atout_pb2.pyi",
        "atout/runner.py",
        "atout/stats.py",
        "atout/match.py",
        "atout/sprt.py",
        "atout/validate.py",
        "atout/record.py",
        "atout/record.schema.json",  # atout.record.SCHEMA_PATH
        "atout/decision.schema.json",  # atout.dataset.SCHEMA_PATH
    ):
        assert needed in names, f"{needed} missing from the wheel"
