"""The .proto as a contract for other languages: package options, a comment on every field,
and every Error code the game server can send listed in it (docs/protocol.md lists them too)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROTO = (ROOT / "proto" / "atout" / "v1" / "atout.proto").read_text()
DOC = (ROOT / "docs" / "protocol.md").read_text()
GATEWAY = ROOT / "server" / "atout_arena" / "gateway"
FIELD = re.compile(r"^\s*(repeated\s+)?[\w.]+\s+\w+\s*=\s*\d+\s*;")


def test_the_proto_names_its_package_for_go_java_and_csharp() -> None:
    for option in ("go_package", "java_package", "java_multiple_files", "csharp_namespace"):
        assert re.search(rf"^option {option} = .+;$", PROTO, re.M), option


def test_every_field_of_the_proto_has_a_comment() -> None:
    lines = PROTO.splitlines()
    bare = [line.strip() for i, line in enumerate(lines)
            if FIELD.match(line) and "//" not in line and not lines[i - 1].strip().startswith("//")]
    assert not bare, f"fields without a comment: {bare}"


def server_error_codes() -> set[str]:
    """Every code the game server puts in an Error (SessionEnd(...) or error_message(...))."""
    codes: set[str] = set()
    for path in GATEWAY.glob("*.py"):
        text = path.read_text()
        codes |= set(re.findall(r'(?:SessionEnd|error_message|stop|close_all)\(\s*"([a-z_]+)"', text))
    return codes


def test_every_error_code_the_game_server_sends_is_in_the_proto_and_the_doc() -> None:
    codes = server_error_codes()
    assert {"bad_message", "unsupported_version", "too_many_versions", "replaced",
            "keepalive_timeout", "revoked", "shutting_down"} <= codes, codes
    error_comment = PROTO[PROTO.index("// Something the bot should know"):PROTO.index("message Error {")]
    for code in codes:
        assert f'"{code}"' in error_comment, f"Error code {code!r} is not listed in the .proto"
        assert f"`{code}`" in DOC, f"Error code {code!r} is not in docs/protocol.md"
