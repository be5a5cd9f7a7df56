"""The committed stubs in sdk/atout/v1 are what grpcio-tools makes of proto/atout/v1 today."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# scripts/ is not a package: load the generator from its file, without editing sys.path
_spec = importlib.util.spec_from_file_location("gen_proto", ROOT / "scripts" / "gen_proto.py")
assert _spec and _spec.loader
gen_proto = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_proto)

pytest.importorskip("grpc_tools", reason="needs grpcio-tools (pip install grpcio-tools)")
pytestmark = pytest.mark.timeout(120)

STUBS = ROOT / "sdk" / "atout" / "v1"
# Lines where protoc stamps the versions of the tools that generated the file.
VERSION_STAMP = re.compile(
    r"Protobuf Python Version: .*|GRPC_GENERATED_VERSION = .*|_runtime_version\.Domain\.PUBLIC,(\s*\d+,){3}"
)


def _stamped_grpc_version() -> str:
    match = re.search(r"GRPC_GENERATED_VERSION = '([\d.]+)'", (STUBS / "atout_pb2_grpc.py").read_text())
    assert match, "atout_pb2_grpc.py has no GRPC_GENERATED_VERSION"
    return match.group(1)


def _stamped_protobuf_version() -> str:
    match = re.search(r"Protobuf Python Version: ([\d.]+)", (STUBS / "atout_pb2.py").read_text())
    assert match, "atout_pb2.py has no protobuf version stamp"
    return match.group(1)


def test_committed_stubs_are_fresh(tmp_path: Path) -> None:
    fresh = {p.name: p.read_text() for p in gen_proto.generate(tmp_path)}
    assert set(fresh) == {"atout_pb2.py", "atout_pb2.pyi", "atout_pb2_grpc.py"}
    same_tools = importlib.metadata.version("grpcio-tools") == _stamped_grpc_version()
    for name, text in fresh.items():
        committed = (STUBS / name).read_text()
        if not same_tools:
            # Another grpcio-tools than the one that generated the stubs: compare all but the stamps.
            text, committed = VERSION_STAMP.sub("", text), VERSION_STAMP.sub("", committed)
        assert committed == text, f"sdk/atout/v1/{name} is stale: run python scripts/gen_proto.py"


def test_check_mode_reports_a_stale_stub(tmp_path: Path) -> None:
    stale = tmp_path / "atout" / "v1"
    stale.mkdir(parents=True)
    for name in ("atout_pb2.py", "atout_pb2.pyi", "atout_pb2_grpc.py"):
        (stale / name).write_text((STUBS / name).read_text())
    if importlib.metadata.version("grpcio-tools") == _stamped_grpc_version():
        assert gen_proto.stale_files(tmp_path) == {}
    (stale / "atout_pb2.pyi").write_text("# edited by hand\n")
    assert "atout_pb2.pyi" in gen_proto.stale_files(tmp_path)


def test_dependency_bounds_match_the_generated_code() -> None:
    """The stubs refuse older runtimes, so the SDK must not promise them."""
    deps = tomllib.loads((ROOT / "sdk" / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"grpcio>={_stamped_grpc_version()}" in deps, deps
    assert f"protobuf>={_stamped_protobuf_version()}" in deps, deps


def test_stubs_import_as_atout_v1() -> None:
    from atout.v1 import atout_pb2, atout_pb2_grpc

    assert atout_pb2.DESCRIPTOR.package == "atout.v1"
    assert set(atout_pb2.DESCRIPTOR.services_by_name) == {"BotGateway", "Games"}
    assert hasattr(atout_pb2_grpc, "BotGatewayStub") and hasattr(atout_pb2_grpc, "GamesServicer")
