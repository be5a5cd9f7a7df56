"""The plain pieces of ``atout-arena up`` and of the organizer's client: the restart backoff,
the organizer token kept in the data dir, the config file's place, the checks of options, and
the API's error bodies turned into one line."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx
import pytest

from atout_arena.client import ArenaClient, ClientError, Target, config_path
from atout_arena.core.settings import admin_token_problem
from atout_arena.demo.arena import (
    HEALTHY_S,
    UsageError,
    check_port,
    next_delay,
    organizer_token,
    prepare_data_dir,
)


def test_the_backoff_doubles_to_its_cap_and_starts_over_after_a_healthy_run() -> None:
    restarts, delays = 0, []
    for _ in range(7):
        delay, restarts = next_delay(restarts, ran_s=2.0)
        delays.append(delay)
    assert delays == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert next_delay(restarts, ran_s=HEALTHY_S) == (1.0, 1)


def test_the_organizer_token_comes_from_the_env_else_the_data_dir_else_is_new(tmp_path: Path) -> None:
    assert organizer_token(tmp_path, {"ATOUT_ADMIN_TOKEN": " given "}) == "given"
    made = organizer_token(tmp_path, {})
    assert made.startswith("atout_admin_") and made != organizer_token(tmp_path, {})
    assert admin_token_problem(made) is None  # as strong as ATOUT_ADMIN_TOKEN must be
    kept = "atout_admin_kept-by-an-earlier-run-0123"
    (tmp_path / "arena.json").write_text(json.dumps({"admin_token": kept}))
    assert organizer_token(tmp_path, {}) == kept
    # a weak one kept by an older arena (before the token's minimum strength) is replaced
    (tmp_path / "arena.json").write_text(json.dumps({"admin_token": "atout_admin_x"}))
    assert organizer_token(tmp_path, {}).startswith("atout_admin_")
    assert organizer_token(tmp_path, {}) != "atout_admin_x"
    (tmp_path / "arena.json").write_text("{not json")
    assert organizer_token(tmp_path, {}).startswith("atout_admin_")


def test_the_config_file_place(tmp_path: Path) -> None:
    assert config_path({"ATOUT_CONFIG": "/x/a.json", "XDG_CONFIG_HOME": "/y"}) == Path("/x/a.json")
    assert config_path({"XDG_CONFIG_HOME": "/y"}) == Path("/y/atout/arena.json")
    assert config_path({"HOME": str(tmp_path)}).name == "arena.json"


def test_ports_and_data_dirs_are_checked_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"^--api-port 0: a port is a number from 1 to 65535$"):
        check_port(0, "--api-port")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(UsageError, match=rf"^--grpc-port {port}: the port is in use"):
            check_port(port, "--grpc-port")
    assert prepare_data_dir(tmp_path / "new" / "dir") == (tmp_path / "new" / "dir").resolve()
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError, match=r"^--data-dir .*file/sub: cannot use it"):
        prepare_data_dir(tmp_path / "file" / "sub")


def test_the_target_comes_from_the_option_the_env_or_the_config(tmp_path: Path) -> None:
    config = tmp_path / "arena.json"
    config.write_text(json.dumps({"api_url": "http://127.0.0.1:9/", "admin_token": "from-file"}))
    env = {"ATOUT_CONFIG": str(config)}
    assert Target.find(None, env) == Target("http://127.0.0.1:9", "from-file", str(config))
    assert Target.find("http://h:1", {**env, "ATOUT_ADMIN_TOKEN": "t"}) == Target("http://h:1", "t",
                                                                                   "ATOUT_ADMIN_TOKEN")
    assert Target.find(None, {"ATOUT_CONFIG": str(tmp_path / "none.json")}).api_url == "http://127.0.0.1:8000"
    with pytest.raises(ClientError, match="expected an http:// or https:// URL"):
        Target.find("localhost:8000", env)


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (404, {"detail": "no bot 'x'"}, "no bot 'x' (HTTP 404)"),
        (422, {"detail": [{"loc": ["body", "bots", 0], "msg": "too short"}, {"loc": [], "msg": "bad"}]},
         "bots.0: too short; bad (HTTP 422)"),
        (409, {"detail": {"message": "taken"}}, "taken (HTTP 409)"),
        (500, "oops", "oops (HTTP 500)"),
    ],
)
def test_an_error_answer_is_one_line(status: int, body: object, message: str) -> None:
    """The client's own logic over a canned answer (a unit test of the message, not of the API)."""

    def answer(request: httpx.Request) -> httpx.Response:
        if isinstance(body, str):
            return httpx.Response(status, text=body)
        return httpx.Response(status, json=body)

    target = Target("http://arena", "t", "ATOUT_ADMIN_TOKEN")
    client = ArenaClient(target, transport=httpx.MockTransport(answer))
    with pytest.raises(ClientError) as caught:
        client.get("/v1/x")
    assert str(caught.value) == message and caught.value.status == status
