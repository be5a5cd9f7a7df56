"""Shared by the tests of Redis with a password, TLS and Sentinel: a database of the test's own,
the arena's parts (game server, worker, beat, API) started on one ``ATOUT_REDIS_URL``, and what a
tournament cost the bots."""

from __future__ import annotations

import re
import secrets
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from e2e_helpers import FAST
from sqlalchemy import func, select

from atout_arena.core.models import Match, MatchSeat, RatingChange

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "deploy"))  # deploy/ is not a package: redis_ha is a script too
from redis_ha import RedisHA, RedisNode, supports_tls  # noqa: E402

CLI = [sys.executable, "-m", "atout_arena.cli"]
__all__ = ["RedisHA", "RedisNode", "supports_tls"]


@pytest.fixture
def own_database(tmp_path: Path) -> Iterator[tuple[str, Any, Any]]:
    """(URL, session factory, bot registry) of a SQLite database of the test's own: the
    worker's sweeper finalizes every tournament it finds, and the shared test database holds
    other tests' hand-made ones."""
    from atout_arena.core.db import create_all, make_engine, make_session_factory
    from atout_arena.services.bots import BotRegistry

    url = f"sqlite:///{tmp_path / 'own.db'}"
    engine = make_engine(url)
    create_all(engine)
    sessions = make_session_factory(engine)
    yield url, sessions, BotRegistry(sessions)
    engine.dispose()


@dataclass
class Parts:
    address: str  # the game server's, for the bots
    gateway: Any
    worker: Any
    beat: Any
    api_url: str | None = None


def start_parts(processes: Any, tmp_path: Path, url: str, database_url: str, *, api: bool = False,
                concurrency: int = 16, **env: str) -> Parts:
    """A game server, a worker and beat (and with ``api`` the REST API) on the Redis at ``url``."""
    env = {"ATOUT_REDIS_URL": url, "ATOUT_DATABASE_URL": database_url, "ATOUT_KEEPALIVE_MS": "1000",
           **FAST, **env}
    gateway = processes.start("gateway", [*CLI, "gateway", "--address", "127.0.0.1:0"],
                              {**env, "ATOUT_SERVER_ID": f"gs-{secrets.token_hex(3)}"})
    worker = processes.start("worker", [*CLI, "worker", "--concurrency", str(concurrency), "--hostname",
                                        f"w{secrets.token_hex(3)}@%h", "--loglevel", "info"], env)
    beat = processes.start("beat", [*CLI, "beat", "--loglevel", "info"],
                           {**env, "ATOUT_DATA_DIR": str(tmp_path / "beat")})
    address = "127.0.0.1:" + gateway.wait_for_log(r"listening on 127\.0\.0\.1:(\d+)", timeout=60).group(1)
    worker.wait_for_log(r"\bready\b", timeout=60)
    beat.wait_for_log(r"beat: Starting", timeout=60)
    parts = Parts(address, gateway, worker, beat)
    if api:
        server = processes.start("api", [*CLI, "api", "--port", "0"], {
            **env, "ATOUT_ADMIN_TOKEN": "atout_admin_" + secrets.token_hex(16),
            "ATOUT_DATA_DIR": str(tmp_path / "api")})
        listening = server.wait_for_log(r"API listening on (http://127\.0\.0\.1:\d+)", timeout=60)
        parts.api_url = listening.group(1)
    return parts


def api_reaches_redis(api_url: str) -> bool:
    """The API's health check says its Redis answers, and its metrics (read from Redis) come."""
    health = httpx.get(f"{api_url}/healthz", timeout=10)
    metrics = httpx.get(f"{api_url}/metrics", timeout=10)
    return health.status_code == 200 and health.json()["redis"] == "ok" and metrics.status_code == 200


def tournament_costs(sessions: Any, tid: int) -> dict[str, int]:
    """What a tournament charged its bots and how its matches ended: matches, finished ones,
    forfeited seats, faults of any kind, and matches played more than once (their attempts)."""
    with sessions() as session:
        matches = session.scalars(select(Match).where(Match.tournament_id == tid)).all()
        forfeits = session.scalar(select(func.count()).select_from(MatchSeat).join(Match)
                                  .where(Match.tournament_id == tid, MatchSeat.forfeited.is_(True)))
        faults = sum(len(row[4]) for m in matches for row in (m.actions or []))
        twice = session.scalar(select(func.count()).select_from(
            select(RatingChange.match_id).join(Match, Match.id == RatingChange.match_id)
            .where(Match.tournament_id == tid).group_by(RatingChange.match_id, RatingChange.bot_id)
            .having(func.count() > 1).subquery()))
        return {"matches": len(matches), "finished": sum(1 for m in matches if m.status == "finished"),
                "with_result": sum(1 for m in matches if m.outcome is not None and m.scores is not None),
                "rated_twice": int(twice or 0),
                "forfeits": int(forfeits or 0), "faults": faults,
                "replayed": sum(1 for m in matches if (m.attempts or 0) > 1)}


def all_finished(sessions: Any, tid: int) -> bool:
    costs = tournament_costs(sessions, tid)
    return costs["finished"] == costs["matches"] > 0


def outage_lines(text: str) -> int:
    return len(re.findall(r"Redis unreachable \(", text))


def wait_s(started: float) -> float:
    return time.monotonic() - started
