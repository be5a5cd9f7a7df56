"""tests/protocol's fixtures: the C++ example bot (examples/cpp/) built once per test session,
for every test that runs it (test_cpp_bot.py, test_protocol_conformance.py): cmake, ``-j2``, into
build/cpp-test/ (ignored by git, kept between sessions: a rebuild is incremental). A machine
without its packages fails the test saying ``./install.sh`` installs them, never skips it."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CPP_DIR = ROOT / "examples" / "cpp"
BUILD_DIR = ROOT / "build" / "cpp-test"
PACKAGES = ("libgrpc++-dev protobuf-compiler-grpc protobuf-compiler libprotobuf-dev nlohmann-json3-dev "
            "cmake g++")

def _missing_tools() -> list[str]:
    tools = ("cmake", "g++", "protoc", "grpc_cpp_plugin", "pkg-config")
    missing = [tool for tool in tools if not shutil.which(tool)]
    if not missing and subprocess.run(["pkg-config", "--exists", "grpc++", "protobuf"]).returncode != 0:
        missing.append("grpc++/protobuf (pkg-config)")
    if not any(Path(d, "nlohmann", "json.hpp").exists() for d in ("/usr/include", "/usr/local/include")):
        missing.append("nlohmann/json.hpp")
    return missing


@pytest.fixture(scope="session")
def cpp_bot_binary() -> Path:
    """The C++ bot, built once per session; the test fails (never skips) when it cannot be."""
    missing = _missing_tools()
    assert not missing, (f"the C++ example cannot be built, missing {missing}: "
                         f"./install.sh installs them ({PACKAGES})")
    began = time.monotonic()
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    # pytest-xdist's workers each build: one at a time (the others find it built, in a second)
    with open(BUILD_DIR.parent / "cpp-test.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _build()
    print(f"\nC++ bot built in {time.monotonic() - began:.1f} s")
    binary = BUILD_DIR / "atout-bot"
    assert binary.is_file(), binary
    return binary


def _build() -> None:
    for command in (["cmake", "-S", str(CPP_DIR), "-B", str(BUILD_DIR), "-DCMAKE_BUILD_TYPE=Release"],
                    ["cmake", "--build", str(BUILD_DIR), "-j2"]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (f"{' '.join(command)} failed "
                                      f"(./install.sh installs the packages: {PACKAGES}):\n"
                                      f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
