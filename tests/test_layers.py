"""The layers of docs/architecture.md, checked: the import contract (import-linter, declared in
pyproject.toml) holds, would catch a violation, and no import between the layers hides inside a
function (where it could dodge a cycle the contract would otherwise see)."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"atout": ROOT / "sdk", "atout_arena": ROOT / "server", "atout_workers": ROOT / "workers"}
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"

pytestmark = pytest.mark.timeout(180)


def lint_imports(cwd: Path, pythonpath: list[Path] | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ}
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(map(str, pythonpath))
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=150)


def test_the_import_contract_is_kept() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 kept, 0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("atout_arena/core/keys.py", "from atout_workers import tasks", "never import the workers"),
        ("atout_arena/api/deps.py", "import atout_workers.play", "never import the workers"),
        ("atout_arena/core/models.py", "from atout_arena.services import bots", "One direction"),
        ("atout_arena/gateway/session.py", "from atout_arena.api import queries", "One direction"),
        ("atout/games/core.py", "import atout_arena.core.keys", "The SDK imports nothing"),
        ("atout/games/merde.py", "import grpc", "Rules engines do no I/O"),
        ("atout_arena/cli_competitions.py", "from atout_arena.core import db", "through its REST API"),
    ],
)
def test_the_contract_catches_a_violation(tmp_path: Path, module: str, line: str, contract: str) -> None:
    """A copy of the sources with one forbidden import added: lint-imports fails, naming it."""
    for package, folder in PACKAGES.items():
        shutil.copytree(folder / package, tmp_path / folder.name / package,
                        ignore=shutil.ignore_patterns("__pycache__", "dashboard"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    folder = PACKAGES[module.split("/")[0]]
    target = tmp_path / folder.name / module
    target.write_text(target.read_text() + f"\n{line}  # the violation under test\n")
    result = lint_imports(tmp_path, [tmp_path / f.name for f in PACKAGES.values()])
    assert result.returncode == 1, result.stdout + result.stderr
    assert "BROKEN" in result.stdout and contract in result.stdout.split("Broken contracts")[-1]


def layer(module: str) -> str:
    """The layer a module belongs to: ``atout`` (the SDK), ``atout_workers``, or
    ``atout_arena.<part>`` (core, services, api, gateway, demo, cli, cli_competitions)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "atout_arena" and len(parts) > 1 else parts[0]


def _function_level_arena_imports(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line module`` of every import inside a function body of a module of another
    layer (an SDK or arena module; the standard library and third parties are free to load late)."""
    relative = path.relative_to(root)
    own = ".".join(relative.with_suffix("").parts[1:]).removesuffix(".__init__")
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in ast.walk(node):
            if not isinstance(inner, ast.Import | ast.ImportFrom):
                continue
            if isinstance(inner, ast.Import):
                names = [alias.name for alias in inner.names]
            else:
                if inner.level:  # relative: resolved against the file's own package
                    base = own.split(".")[: len(own.split(".")) - inner.level + (path.name == "__init__.py")]
                    names = [".".join([*base, *([inner.module] if inner.module else [])])]
                else:
                    names = [inner.module or ""]
            for name in names:
                if name.split(".")[0] in PACKAGES and layer(name) != layer(own):
                    found.append(f"{relative}:{inner.lineno} {name}")
    return found


# The command-line entry points import what each command runs when it runs, so that
# `atout-arena --help` and the organizer's REST commands load no server (tests/api/test_cli.py).
# import-linter reads function bodies too: the layers' contract still covers these imports.
LATE_IMPORTERS = {Path("server/atout_arena/cli.py"), Path("workers/atout_workers/cli.py")}


def test_no_import_between_the_layers_hides_in_a_function() -> None:
    files = [f for package, folder in PACKAGES.items() for f in (folder / package).rglob("*.py")
             if "/v1/" not in str(f)  # generated stubs
             and f.relative_to(ROOT) not in LATE_IMPORTERS]
    assert len(files) > 80
    offenders = [hit for f in files for hit in _function_level_arena_imports(f)]
    assert offenders == []


def test_the_contract_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    """Why the entry points may import late: a forbidden import in a function body breaks the
    contract as one at the top would."""
    for package, folder in PACKAGES.items():
        shutil.copytree(folder / package, tmp_path / folder.name / package,
                        ignore=shutil.ignore_patterns("__pycache__", "dashboard"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "server" / "atout_arena" / "cli.py"
    target.write_text(target.read_text() + "\n\ndef _late():\n    from atout_workers import tasks\n"
                      "    return tasks\n")
    result = lint_imports(tmp_path, [tmp_path / f.name for f in PACKAGES.values()])
    assert result.returncode == 1 and "atout_arena.cli -> atout_workers.tasks" in result.stdout


def test_the_scan_sees_a_function_level_import(tmp_path: Path) -> None:
    sample = tmp_path / "server" / "atout_arena" / "api" / "sample.py"
    sample.parent.mkdir(parents=True)
    sample.write_text(
        "import os\n\ndef f():\n    import json\n    from atout_arena.core import keys\n"
        "    from atout_arena.api import deps\n    from . import queries\n    from .. import cli\n"
        "    import atout_workers.tasks\n"
    )
    hits = [h.split(" ", 1)[1] for h in _function_level_arena_imports(sample, tmp_path)]
    assert hits == ["atout_arena.core", "atout_arena", "atout_workers.tasks"]


def test_the_arena_wheel_installs_no_top_level_server_or_workers(tmp_path: Path) -> None:
    """What ``pip install .`` installs: build the arena's wheel from a copy of the checkout and
    list its top-level names."""
    import zipfile

    src = tmp_path / "src"
    for name in ("server", "workers"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
         str(tmp_path / "dist"), str(src)], capture_output=True, text=True, timeout=150,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("atout_arena-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    top = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert "atout_arena/dashboard/index.html" in names
    assert top == {"atout_arena", "atout_workers"}, top
