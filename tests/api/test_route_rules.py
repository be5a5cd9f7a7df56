"""The rules the API's routes once held, as the plain service functions they are now (real SQLite
and Redis): who may see a bot's details, a house bot refused, disabling and rotating
(services.bots, services.revocation), who may see a seat's view and when a match shows its
replay (services.deals). The routes only turn their refusals into HTTP errors (tests/api/test_http.py,
test_secret_seeds.py and test_absent_and_retry.py check those answers)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from atout_arena.core.models import Match, Tournament
from atout_arena.core.vocabulary import MatchStatus, TournamentStatus
from atout_arena.services.bots import BotRegistry, RegistryError, check_details_viewer, check_not_house
from atout_arena.services.competitions import CompetitionSpec
from atout_arena.services.deals import ViewError, check_duplicate_open, check_replayable, check_seat
from atout_arena.services.ladders import create_ladder
from atout_arena.services.practice import house_bots
from atout_arena.services.revocation import rotate_token, set_disabled
from atout_arena.services.tournaments import create_tournament

# -- services.bots ---------------------------------------------------------------------------------


def test_a_bots_details_are_the_organizers_and_its_own() -> None:
    check_details_viewer(7, organizer=True, caller_bot_id=None)
    check_details_viewer(7, organizer=False, caller_bot_id=7)
    with pytest.raises(RegistryError, match="need the organizer token or the bot's own token") as nobody:
        check_details_viewer(7, organizer=False, caller_bot_id=None)
    assert nobody.value.kind == "unauthorized"
    with pytest.raises(RegistryError, match="that bot's details only") as other:
        check_details_viewer(7, organizer=False, caller_bot_id=8)
    assert other.value.kind == "forbidden"


def test_nobody_holds_the_token_of_a_house_bot_nor_disables_it(sessions, redis_client) -> None:
    check_not_house("alice", "disable or enable")
    with pytest.raises(RegistryError) as refused:
        check_not_house("house-fool-1", "disable or enable")
    assert str(refused.value) == ("house-fool-1 is a house bot: the arena runs it, "
                                  "nobody can disable or enable it")
    assert refused.value.kind == "conflict"
    (house,) = house_bots(sessions, "fool", 1)
    registry = BotRegistry(sessions)
    with pytest.raises(RegistryError, match="nobody can hold a token of it"):
        rotate_token(sessions, redis_client, house)
    with pytest.raises(RegistryError, match="nobody can disable or enable it"):
        set_disabled(sessions, redis_client, house, True)
    with pytest.raises(RegistryError, match="nobody can disable or enable it"):
        registry.disable(house, disabled=False)
    assert registry.get(house).disabled is False


def test_disabling_revokes_the_bot_and_names_its_running_ladders(sessions, redis_client, make_bot) -> None:
    bots = [make_bot("dis")[0] for _ in range(2)]
    ladder = create_ladder(sessions, name=f"dis-{bots[0].id}", spec=CompetitionSpec.of("fool", 2),
                           bots=[b.name for b in bots])
    done = set_disabled(sessions, redis_client, bots[0].id, True)
    assert done.bot.id == bots[0].id and done.bot.disabled is True
    assert done.ladders == [ladder]  # for the caller to tick at once
    enabled = set_disabled(sessions, redis_client, bots[0].id, False)
    assert enabled.bot.disabled is False and enabled.ladders == []  # enabling ticks nothing


def test_a_rotated_token_replaces_the_old_one(sessions, redis_client, make_bot) -> None:
    bot, old = make_bot("rot")
    registry = BotRegistry(sessions)
    new = rotate_token(sessions, redis_client, bot.id)
    assert new != old and registry.verify(old) is None
    verified = registry.verify(new)
    assert verified is not None and verified.id == bot.id


# -- services.deals --------------------------------------------------------------------------------


def _match(sessions, bots, *, status: MatchStatus, duplicate: bool = False,
           tournament_status: TournamentStatus = TournamentStatus.RUNNING) -> int:
    """The first match of a new tournament of ``bots`` (fool, 2 players), its status and its
    tournament's set."""
    tid = create_tournament(sessions, name="rules", game="fool", players=2, bots=[b.name for b in bots],
                            duplicate=duplicate)
    with sessions() as session:
        session.get(Tournament, tid).status = tournament_status
        query = select(Match).where(Match.tournament_id == tid).order_by(Match.number)
        match = session.scalars(query).first()
        match.status = status
        if status == MatchStatus.FINISHED:  # places, as a result has: the sweeper finalizes it whole
            match.ranking = [1, 2]
            for seat in match.seats:
                seat.place = seat.seat + 1
        session.commit()
        return match.id


def test_a_seats_view_is_the_organizers_and_that_seats_bot(sessions, make_bot) -> None:
    bots = [make_bot("seat")[0] for _ in range(2)]
    match_id = _match(sessions, bots, status=MatchStatus.RUNNING)
    with sessions() as session:
        match = session.get(Match, match_id)
        check_seat(match, None, organizer=False, bot_id=None)  # the public view: anyone
        check_seat(match, 1, organizer=True, bot_id=None)
        check_seat(match, 1, organizer=False, bot_id=bots[1].id)
        cases = [
            (2, bots[0].id, "not_found", f"seat 2 is not a seat of match {match_id} (0..1)"),
            (1, None, "unauthorized",
             "seat 1's view needs the organizer token or the token of the bot in that seat"),
            (1, bots[0].id, "forbidden", f"seat 1 is not your bot's seat in match {match_id}"),
        ]
        for seat, bot_id, kind, message in cases:
            with pytest.raises(ViewError) as refused:
                check_seat(match, seat, organizer=False, bot_id=bot_id)
            assert (refused.value.kind, str(refused.value)) == (kind, message)


def test_a_duplicate_match_is_the_organizers_while_its_competition_is_open(sessions, make_bot) -> None:
    bots = [make_bot("dup")[0] for _ in range(2)]
    open_id = _match(sessions, bots, status=MatchStatus.FINISHED, duplicate=True)
    over_id = _match(sessions, bots, status=MatchStatus.FINISHED, duplicate=True,
                     tournament_status=TournamentStatus.FINISHED)
    plain_id = _match(sessions, bots, status=MatchStatus.FINISHED)
    with sessions() as session:
        match = session.get(Match, open_id)
        check_duplicate_open(session, match, organizer=True, what="replay")
        with pytest.raises(ViewError) as refused:
            check_duplicate_open(session, match, organizer=False, what="replay")
        assert refused.value.kind == "forbidden"
        assert str(refused.value) == (
            f"match {open_id} is played in duplicate and its competition is still open: its replay "
            "is the organizer's until every rotation of its deal is played")
        check_duplicate_open(session, session.get(Match, over_id), organizer=False, what="replay")
        check_duplicate_open(session, session.get(Match, plain_id), organizer=False, what="replay")


def test_a_replay_needs_a_finished_match(sessions, make_bot) -> None:
    bots = [make_bot("rep")[0] for _ in range(2)]
    ids = {status: _match(sessions, bots, status=status) for status in MatchStatus}
    with sessions() as session:
        check_replayable(session.get(Match, ids[MatchStatus.FINISHED]))
        for status in (MatchStatus.RUNNING, MatchStatus.QUEUED, MatchStatus.FAILED):
            match_id = ids[status]
            live = status == MatchStatus.RUNNING
            hint = f": follow it live at /v1/matches/{match_id}/events" if live else ""
            with pytest.raises(ViewError) as refused:
                check_replayable(session.get(Match, match_id))
            assert refused.value.kind == "conflict"
            assert str(refused.value) == (
                f"match {match_id} is {status}; a replay needs a finished match{hint}")
