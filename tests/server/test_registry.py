"""The bot registry and settings, without a network."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from sqlalchemy import select

from atout_arena.core.db import create_all, make_engine, make_session_factory
from atout_arena.core.models import Bot
from atout_arena.core.settings import Settings
from atout_arena.services.bots import BotRegistry, RegistryError


@pytest.fixture
def memory_registry() -> tuple[BotRegistry, object]:
    engine = make_engine("sqlite://")
    create_all(engine)
    sessions = make_session_factory(engine)
    return BotRegistry(sessions), sessions


def test_add_returns_a_token_that_verifies_and_is_stored_hashed(memory_registry) -> None:
    registry, sessions = memory_registry
    bot, token = registry.add("alice", owner="ann")
    assert (bot.name, bot.owner, bot.disabled) == ("alice", "ann", False)
    assert len(token) > 40
    assert registry.verify(token) == bot
    with sessions() as session:
        stored = session.scalars(select(Bot)).one()
    assert stored.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in repr(stored.__dict__)


def test_verify_refuses_wrong_and_empty_tokens(memory_registry) -> None:
    registry, _ = memory_registry
    _, token = registry.add("alice")
    assert registry.verify(token + "x") is None
    assert registry.verify("") is None
    assert registry.verify(token.upper()) is None


def test_names_are_unique_and_checked(memory_registry) -> None:
    registry, _ = memory_registry
    registry.add("alice")
    with pytest.raises(RegistryError, match="already exists"):
        registry.add("alice")
    for bad in ("", "a b", "-x", "x" * 65, "é"):
        with pytest.raises(RegistryError, match="bad bot name"):
            registry.add(bad)


def test_house_names_are_the_arenas(memory_registry) -> None:
    registry, _ = memory_registry
    with pytest.raises(RegistryError, match="are the arena's"):
        registry.add("house-merde-1")


NOT_IDS = ["²", "٣", "1²", "0", "-1", "9" * 19, "99999999999999999999999", 2**63, -5, 0]


@pytest.mark.parametrize("ref", NOT_IDS)
def test_what_is_no_id_is_looked_up_as_a_name(memory_registry, ref) -> None:
    """Non-ASCII digits and ids no database can hold are names (found or not), never a crash."""
    registry, _ = memory_registry
    registry.add("alice")
    with pytest.raises(RegistryError, match="no bot named"):
        registry.get(ref)
    with pytest.raises(RegistryError, match="no bot named"):
        registry.disable(ref)


def test_a_bot_is_found_by_id_and_by_name(memory_registry) -> None:
    registry, _ = memory_registry
    bot, _ = registry.add("alice")
    assert registry.get(bot.id) == registry.get(str(bot.id)) == registry.get("alice") == bot
    for digits in ("7", "0042"):  # a string of digits is an id, never a new bot's name
        with pytest.raises(RegistryError, match="cannot be all digits"):
            registry.add(digits)
    assert registry.add("7up")[0].name == "7up"


def test_parse_id() -> None:
    from atout_arena.core.models import MAX_ID, parse_id

    assert [parse_id(v) for v in (1, "1", "0042", MAX_ID, str(MAX_ID))] == [1, 1, 42, MAX_ID, MAX_ID]
    for value in (0, -1, MAX_ID + 1, str(MAX_ID + 1), "²", "1.0", " 1", "", "alice", True, None, 1.0):
        assert parse_id(value) is None, value  # type: ignore[arg-type]


def test_rotate_replaces_the_token(memory_registry) -> None:
    registry, _ = memory_registry
    bot, old = registry.add("alice")
    new = registry.rotate("alice")
    assert registry.verify(old) is None
    assert registry.verify(new) == bot
    with pytest.raises(RegistryError, match="no bot named"):
        registry.rotate("nobody")


def test_disable_and_list(memory_registry) -> None:
    registry, _ = memory_registry
    a, token = registry.add("alice")
    registry.add("bob")
    assert registry.disable("alice").disabled
    verified = registry.verify(token)
    assert verified is not None and verified.disabled
    assert [(b.name, b.disabled) for b in registry.list()] == [("alice", True), ("bob", False)]
    assert not registry.disable(str(a.id), disabled=False).disabled


def test_sqlite_file_uses_wal(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'sub' / 'atout.db'}")
    create_all(engine)
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 10_000
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL: no fsync per commit


def test_settings_defaults_and_environment() -> None:
    default = Settings.from_env({})
    assert default.redis_url is None
    assert default.grpc_address == "127.0.0.1:50051"
    assert default.database_url == f"sqlite:///{Path('var') / 'atout.db'}"
    custom = Settings.from_env(
        {
            "ATOUT_DATA_DIR": "/data",
            "ATOUT_REDIS_URL": "redis://127.0.0.1:6379/0",
            "ATOUT_KEEPALIVE_MS": "500",
            "ATOUT_SERVER_ID": "gs-1",
        }
    )
    assert custom.database_url == "sqlite:////data/atout.db"
    assert (custom.redis_url, custom.keepalive_ms, custom.presence_ttl_ms, custom.server_id) == (
        "redis://127.0.0.1:6379/0",
        500,
        1500,
        "gs-1",
    )
    assert default.admin_token is None
    strong = "atout_admin_s3cret-organizer-token-0123"
    secret = Settings.from_env({"ATOUT_ADMIN_TOKEN": f"  {strong}  "})
    assert secret.admin_token == strong and strong not in repr(secret)
    with pytest.raises(ValueError, match="ATOUT_KEEPALIVE_MS"):
        Settings.from_env({"ATOUT_KEEPALIVE_MS": "soon"})
    with pytest.raises(ValueError, match="ATOUT_GRPC_ADDRESS"):
        Settings.from_env({"ATOUT_GRPC_ADDRESS": "nowhere"})
