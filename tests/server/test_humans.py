"""Human players' rules: registration of a human (its own move time), a bot's companion human,
the seating of "play against your bot", a seat's own move time in the match loop, and the
relay's answer from a client without a stream (pending only, before the deadline)."""

from __future__ import annotations

import random

import pytest
from sqlalchemy import select

from atout_arena.core.keys import pending_key, reply_key, req_key
from atout_arena.core.match import Answer, DecisionAsk, FaultPolicy, MatchSetup, SeatBot, run_loop
from atout_arena.core.models import Match
from atout_arena.core.relay import Answer as RelayAnswer
from atout_arena.core.relay import answer_if_pending_command, call_sync, now_ms, parse_reply
from atout_arena.services.bots import DEFAULT_HUMAN_MOVE_MS, RegistryError
from atout_arena.services.humans import companion, companion_name, human_for
from atout_arena.services.practice import start_practice


def test_a_human_is_registered_with_its_own_move_time(registry, make_bot) -> None:
    bot, _ = make_bot("hum")
    human, token = registry.add(f"{bot.name}-person", kind="human")
    assert human.kind == "human" and human.move_ms == DEFAULT_HUMAN_MOVE_MS
    assert registry.verify(token) == human
    quick, _ = registry.add(f"{bot.name}-quick", kind="human", move_ms=5000)
    assert quick.move_ms == 5000
    assert bot.kind == "bot" and bot.move_ms is None
    with pytest.raises(RegistryError, match="bad kind"):
        registry.add(f"{bot.name}-robot", kind="robot")
    with pytest.raises(RegistryError, match="move_ms"):
        registry.add(f"{bot.name}-slow", kind="human", move_ms=10**6)


def test_a_bots_companion_is_made_once_and_a_human_plays_itself(sessions, registry, make_bot) -> None:
    bot, _ = make_bot("comp")
    first = companion(sessions, bot)
    assert first.name == f"{bot.name}~you" and first.kind == "human" and first.owner == bot.owner
    assert companion(sessions, bot) == first == human_for(sessions, bot)
    assert human_for(sessions, first) == first
    with pytest.raises(RegistryError):  # nobody can register the name
        registry.add(first.name)
    long = type(bot)(bot.id, "x" * 64, "", bot.created_at, False)
    assert len(companion_name(long)) <= 64 and companion_name(long).endswith(f"~you{bot.id}")
    disabled = registry.disable(bot.name)
    with pytest.raises(ValueError, match="disabled"):
        human_for(sessions, disabled)


def test_play_against_your_bot_seats_you_your_bot_and_house_bots(sessions, make_bot) -> None:
    bot, _ = make_bot("seat")
    me = companion(sessions, bot)
    for players, seat in [(4, 2), (2, 0), (3, None)]:
        match_id = start_practice(sessions, bot.id, "regicide", players=players, seat=seat, human=me.id)
        with sessions() as session:
            match = session.scalars(select(Match).where(Match.id == match_id)).one()
            seating = {s.seat: s.bot_id for s in match.seats}
        assert sorted(seating) == list(range(players))
        assert list(seating.values()).count(me.id) == 1 and list(seating.values()).count(bot.id) == 1
        if seat is not None:
            assert seating[seat] == me.id


def test_a_seat_waits_the_longer_of_the_match_move_time_and_its_own() -> None:
    seats = (SeatBot(1, "bot"), SeatBot(2, "person", move_ms=30_000))
    setup = MatchSetup("h1", "tiercon", {}, 3, seats, FaultPolicy(move_ms=500, time_bank_ms=0, max_faults=0))
    deadlines: dict[int, set[int]] = {0: set(), 1: set()}
    rng = random.Random(1)

    def ask(a: DecisionAsk) -> Answer:
        deadlines[a.seat].add(a.deadline_ms)
        return Answer(rng.choice(a.legal_actions), 1.0)

    run_loop(setup, ask)
    assert deadlines == {0: {500}, 1: {30_000}}
    quick = MatchSetup("h2", "tiercon", {}, 3, (SeatBot(1, "a"), SeatBot(2, "b", move_ms=100)),
                       FaultPolicy(move_ms=500, max_faults=0))  # fmt: skip
    deadlines = {0: set(), 1: set()}
    run_loop(quick, ask)
    assert deadlines == {0: {500}, 1: {500}}  # never shorter than the match's


def test_an_answer_without_a_stream_is_taken_only_while_pending(redis_client) -> None:
    pool = redis_client.connection_pool
    address, rid = "human-test-9", f"rid-{now_ms()}"
    answer = RelayAnswer(address, rid, "play 9d", 10_000)
    assert call_sync(pool, [answer_if_pending_command(answer)], 5) == [0]  # not pending
    redis_client.set(req_key(rid), b"request", px=10_000)
    redis_client.zadd(pending_key(address), {rid: now_ms() - 50})
    (late,) = call_sync(pool, [answer_if_pending_command(answer)], 5)
    assert late < 0 and not redis_client.exists(reply_key(rid))  # the deadline passed
    redis_client.zadd(pending_key(address), {rid: now_ms() + 5_000})
    assert call_sync(pool, [answer_if_pending_command(answer)], 5) == [1]
    assert parse_reply(redis_client.lpop(reply_key(rid))).action == "play 9d"
    assert not redis_client.exists(req_key(rid)) and redis_client.zscore(pending_key(address), rid) is None
    assert call_sync(pool, [answer_if_pending_command(answer)], 5) == [0]  # answered already: once only
