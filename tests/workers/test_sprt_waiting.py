"""A test whose bot or version is not connected says so and gives up after a time; test matches
say what they are; a test says why it ended (atout_arena.services.sprt, on a real database;
matches played by the real runner with an in-process asker, as tests/workers/test_sprt_service.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from atout_arena.api.queries import matches_public
from atout_arena.core.match import Answer
from atout_arena.core.models import Match, SprtTest, utcnow
from atout_arena.core.settings import Settings
from atout_arena.services.competitions import CompetitionError, CompetitionSpec
from atout_arena.services.deals import release_next
from atout_arena.services.sprt import cancel_test, create_test, sprt_summary, tick
from atout_workers.play import run_match
from atout_workers.world import build_world


@pytest.fixture
def world(database_url: str, redis_url: str):
    w = build_world(Settings(database_url=database_url, redis_url=redis_url))
    yield w
    w.close()


def test_a_test_waiting_for_a_version_says_so_then_gives_up_and_frees_its_slot(world, make_bot) -> None:
    bot, _ = make_bot("waits")
    spec = CompetitionSpec.of("tiercon")
    only_v1 = lambda bot_id, version: version == "v1"  # noqa: E731  (v9 never connected)
    test_id = create_test(world.sessions, a=f"{bot.name}@v1", b=f"{bot.name}@v9", spec=spec,
                          caller_bot_id=bot.id)
    assert tick(world.sessions, test_id, only_v1, wait_timeout_s=60) == []
    shown = sprt_summary(world.sessions, test_id, connected=only_v1, wait_timeout_s=60)
    assert shown["status"] == "running" and shown["waiting"] == f"waiting for {bot.name}@v9: not connected"
    assert shown["gives_up_at"] - shown["waiting_since"] == timedelta(seconds=60)
    assert sprt_summary(world.sessions, test_id)["waiting"] is None  # without a look at Redis: nothing said

    # a second test fills the bot's two slots; a third is refused until one gives up
    create_test(world.sessions, a=f"{bot.name}@v2", b=f"{bot.name}@v1", spec=spec, caller_bot_id=bot.id)
    with pytest.raises(CompetitionError, match="2 tests running"):
        create_test(world.sessions, a=f"{bot.name}@v3", b=f"{bot.name}@v1", spec=spec, caller_bot_id=bot.id)
    later = utcnow() + timedelta(seconds=61)
    assert tick(world.sessions, test_id, only_v1, wait_timeout_s=60, now=later) == []
    ended = sprt_summary(world.sessions, test_id, connected=only_v1, wait_timeout_s=60)
    assert (ended["status"], ended["result"], ended["waiting"]) == ("cancelled", "inconclusive", None)
    assert ended["reason"] == f"gave up after 60 s waiting for {bot.name}@v9: not connected"
    assert create_test(world.sessions, a=f"{bot.name}@v3", b=f"{bot.name}@v1", spec=spec,
                       caller_bot_id=bot.id)


def first_legal(ask) -> Answer:
    return Answer(ask.legal_actions[0], 1.0)


def test_a_version_gone_mid_test_pauses_it_with_a_message_and_the_clock_starts_at_its_last_match(
    world, make_bot
) -> None:
    a, _ = make_bot("mid-a")
    b, _ = make_bot("mid-b")
    test_id = create_test(world.sessions, a=a.name, b=f"{b.name}@v2", spec=CompetitionSpec.of("tiercon"),
                          sets_in_flight=1)
    pending = tick(world.sessions, test_id, lambda bot_id, version: True, wait_timeout_s=30)
    while pending:  # one set, both rotations
        match_id = pending.pop(0)
        run_match(world, match_id, asker=first_legal)
        pending += release_next(world.sessions, match_id)
    gone = lambda bot_id, version: bot_id != b.id  # noqa: E731  (b@v2 left)
    assert tick(world.sessions, test_id, gone, wait_timeout_s=30) == []
    shown = sprt_summary(world.sessions, test_id, connected=gone, wait_timeout_s=30)
    assert shown["waiting"] == f"waiting for {b.name}@v2: not connected" and shown["games"] == 2
    with world.sessions() as session:
        last = max(m.finished_at for m in session.query(Match).filter(Match.test_id == test_id))
        created = session.get(SprtTest, test_id).created_at
    since = shown["waiting_since"]
    assert since.replace(tzinfo=None) == last.replace(tzinfo=None) > created.replace(tzinfo=None)
    # 29 s after its last match it still waits; 30 s after, it gives up
    assert tick(world.sessions, test_id, gone, wait_timeout_s=30, now=since + timedelta(seconds=29)) == []
    assert sprt_summary(world.sessions, test_id)["status"] == "running"
    tick(world.sessions, test_id, gone, wait_timeout_s=30, now=since + timedelta(seconds=30))
    assert sprt_summary(world.sessions, test_id)["status"] == "cancelled"

    # its matches say what they are, with the versions in the label
    with world.sessions() as session:
        matches = list(session.query(Match).filter(Match.test_id == test_id).order_by(Match.id))
        labels = {m["label"] for m in matches_public(session, matches, organizer=True)}
    assert labels == {f"test #{test_id}: {a.name} vs {b.name}@v2"}


def test_a_test_says_why_it_ended(world, make_bot) -> None:
    a, _ = make_bot("why-a")
    b, _ = make_bot("why-b")
    spec = CompetitionSpec.of("tiercon")
    over = create_test(world.sessions, a=a.name, b=b.name, spec=spec, max_games=2)
    pending = tick(world.sessions, over)
    while pending:
        match_id = pending.pop(0)
        run_match(world, match_id, asker=first_legal)
        pending += release_next(world.sessions, match_id)
    tick(world.sessions, over)
    reason = sprt_summary(world.sessions, over)["reason"]
    assert reason == "max_games reached: 2 games counted without a decision"
    stopped = create_test(world.sessions, a=a.name, b=b.name, spec=spec)
    assert cancel_test(world.sessions, stopped, "cancelled by the organizer")
    assert sprt_summary(world.sessions, stopped)["reason"] == "cancelled by the organizer"
    running = create_test(world.sessions, a=a.name, b=b.name, spec=spec)
    assert sprt_summary(world.sessions, running)["reason"] is None
