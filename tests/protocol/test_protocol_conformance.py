"""The conformance check (``atout-arena conformance``, atout_arena/gateway/conformance.py): a
scripted game server that plays one match of each game against a real bot process and reports
each protocol rule it breaks. It passes for the Python SDK's bot, the raw-gRPC bot, the Node
example and the C++ example (when built); it fails, naming the rule, for bots broken on purpose
(tests/protocol/broken_bots.py)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from atout_arena.gateway.conformance import RULES

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
NODE_DIR = ROOT / "examples" / "node"


def conformance(*args: str, timeout: float = 150) -> tuple[int, dict[str, str], str]:
    """Run ``atout-arena conformance ARGS``: (exit code, {rule: its line}, the whole output)."""
    result = subprocess.run([str(BIN / "atout-arena"), "conformance", *args], capture_output=True,
                            text=True, timeout=timeout, cwd=ROOT)
    print(result.stdout)
    return result.returncode, rule_lines(result.stdout), result.stdout + result.stderr[-3000:]


def rule_lines(output: str) -> dict[str, str]:
    return {m.group(2): m.group(0) for m in re.finditer(r"^(PASS|FAIL|SKIP) ([a-z-]+): .*$", output, re.M)}


def assert_all_pass(code: int, lines: dict[str, str], output: str) -> None:
    assert set(lines) == set(RULES), output
    assert code == 0 and all(line.startswith("PASS") for line in lines.values()), output


def test_the_python_sdk_bot_passes_every_rule() -> None:
    began = time.monotonic()
    code, lines, output = conformance("--", str(BIN / "atout-bot"), "run", "random", "--server", "{address}",
                                      "--token", "{token}")
    assert_all_pass(code, lines, output)
    assert "after Error shutting_down" in output or "after Error moved" in output
    print(f"SDK bot: conformant in {time.monotonic() - began:.1f} s")


def test_a_bot_started_by_hand_connects_with_the_printed_address_and_token() -> None:
    """Without a command: the address and token are printed first, the check waits for the bot
    (here the raw-gRPC bot of tests/protocol/raw_python_bot.py)."""
    checker = subprocess.Popen([str(BIN / "atout-arena"), "conformance", "--games", "regicide,fool"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    bot = None
    try:
        assert checker.stdout is not None
        first = checker.stdout.readline()
        found = re.match(r"conformance server at (\S+), token (\S+)$", first.strip())
        assert found, first
        address, token = found.groups()
        assert address.startswith("127.0.0.1:")
        bot = subprocess.Popen([sys.executable, str(HERE / "raw_python_bot.py"), address, token],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        output, _ = checker.communicate(timeout=120)
    finally:
        for process in (bot, checker):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
    assert_all_pass(checker.returncode, rule_lines(output), first + output)


def test_the_node_example_passes_every_rule() -> None:
    node = shutil.which("node")
    assert node, "node is not installed (Node.js 18 or later: the example bot's runtime)"
    assert (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir(), \
        "examples/node has no node_modules: run ./install.sh (npm ci in examples/node)"
    began = time.monotonic()
    code, lines, output = conformance("--", node, str(NODE_DIR / "bot.js"), "--server", "{address}",
                                      "--token", "{token}")
    assert_all_pass(code, lines, output)
    print(f"Node bot: conformant in {time.monotonic() - began:.1f} s")


def test_the_cpp_example_passes_every_rule(cpp_bot_binary: Path) -> None:
    # built by the session's fixture (conftest.py): a machine without its packages fails here
    code, lines, output = conformance("--", str(cpp_bot_binary), "--server", "{address}", "--token",
                                      "{token}")
    assert_all_pass(code, lines, output)


@pytest.mark.parametrize(
    ("mode", "rule", "seen"),
    [
        ("no-pong", "pong", "no Pong within 3 s of Ping"),
        ("wrong-request-id", "request-id", "no request has this id"),
        ("illegal", "legal", "'no such action' to a request of merde whose legal actions are"),
        ("late", "deadline", "not answered legally within 300 ms"),
        ("forgetful", "resend", "the first time"),
        ("no-reconnect", "reconnect", "no new stream within"),
    ],
)
def test_a_broken_bot_fails_naming_the_rule(mode: str, rule: str, seen: str) -> None:
    bot = [sys.executable, str(HERE / "broken_bots.py"), mode, "{address}", "{token}"]
    code, lines, output = conformance("--games", "merde", "--move-ms", "300", "--", *bot)
    assert code == 1, output
    assert lines[rule].startswith(f"FAIL {rule}: ") and seen in lines[rule], output
    assert lines["hello"].startswith("PASS"), output
    if mode != "no-reconnect":
        assert lines["reconnect"].startswith("PASS"), output
    if mode not in ("no-pong", "late"):  # the late bot's pongs wait behind its sleep
        assert lines["pong"].startswith("PASS"), output


def test_answers_in_action_batches_pass() -> None:
    bot = [sys.executable, str(HERE / "broken_bots.py"), "batch", "{address}", "{token}"]
    assert_all_pass(*conformance("--games", "merde", "--", *bot))


def test_a_bot_that_does_not_connect_fails_the_hello_rule() -> None:
    code, lines, output = conformance("--games", "fool", "--wait", "0.5")
    assert code == 1 and lines["hello"].startswith("FAIL hello: no bot connected within"), output
    assert all(lines[r].startswith("SKIP") for r in RULES if r != "hello"), output


def test_the_servers_own_token_never_reads_as_an_option() -> None:
    import asyncio

    from atout_arena.gateway.conformance import serve

    async def tokens() -> list[str]:
        found = []
        for _ in range(200):  # a bare token_urlsafe starts with '-' one time in 64
            server, servicer, _ = await serve()
            found.append(servicer.token)
            await server.stop(None)
        return found

    assert not [t for t in asyncio.run(tokens()) if t.startswith("-")]
