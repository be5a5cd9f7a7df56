"""Issue 32, finding 5, on a real database: a ladder's standings list the provisional members
(few rated sets, or a wide sigma) after the established ones, marked; and finding 3: a listed
member that connects late starts from the others' mean load, not from zero."""

from __future__ import annotations

import pytest
from sqlalchemy import select, update

from atout_arena.core.models import Ladder, LadderMember
from atout_arena.core.vocabulary import LadderStatus
from atout_arena.services.competitions import CompetitionSpec
from atout_arena.services.ladders import create_ladder, history, standings, tick


@pytest.fixture(autouse=True)
def no_ladder_left_running(sessions):
    yield
    with sessions() as session:
        session.execute(update(Ladder).where(Ladder.status == LadderStatus.RUNNING)
                        .values(status=LadderStatus.PAUSED))
        session.commit()


def test_an_unplayed_bot_is_provisional_and_listed_after_the_established(sessions, make_bot) -> None:
    a, b, c, new = (make_bot(f"marks-{x}")[0] for x in "abcn")
    lid = create_ladder(sessions, name=f"marks-{a.id}", spec=CompetitionSpec.of("tiercon"),
                        bots=[a.name, b.name, c.name, new.name])
    with sessions() as session:
        session.execute(update(Ladder).where(Ladder.id == lid).values(status=LadderStatus.PAUSED))
        # three bots with 20 sets each, their ordinals below 0; the new one at the prior (ordinal 0)
        for bot, mu in ((a, 4.0), (b, 3.0), (c, 6.0)):
            session.execute(update(LadderMember)
                            .where(LadderMember.ladder_id == lid, LadderMember.bot_id == bot.id)
                            .values(mu=mu, sigma=4.5 if bot is c else 1.5, sets=20, games=40))
        session.commit()
        table = standings(session, lid)
    # established first, then the provisional (c: sigma 4.5 > 4), each by ordinal
    assert [r["bot"] for r in table] == [a.name, b.name, new.name, c.name]  # before: new was first
    assert [r["provisional"] for r in table] == [False, False, True, True]
    assert table[2]["ordinal"] > table[0]["ordinal"]  # after them all the same
    assert history(sessions, lid) == [{"bot": r.name, "bot_id": r.id, "points": []}
                                      for r in sorted((a, b, c, new), key=lambda x: x.name)]


def test_a_listed_member_that_connects_late_starts_from_the_mean_load(sessions, make_bot) -> None:
    a, b, c, late = (make_bot(f"late-{x}")[0] for x in "abcl")
    lid = create_ladder(sessions, name=f"late-{a.id}", spec=CompetitionSpec.of("tiercon"),
                        bots=[a.name, b.name, c.name, late.name], target_in_flight=2)
    with sessions() as session:  # 100 sets played by the three others before it connects
        for bot in (a, b, c):
            session.execute(update(LadderMember)
                            .where(LadderMember.ladder_id == lid, LadderMember.bot_id == bot.id)
                            .values(games=[134, 132, 134][[a, b, c].index(bot)], sets=67))
        session.commit()
    report = tick(sessions, lid, lambda: [str(a.id), str(b.id), str(c.id), str(late.id)])
    assert report.match_ids
    with sessions() as session:
        member = session.scalar(select(LadderMember).where(LadderMember.ladder_id == lid,
                                                           LadderMember.bot_id == late.id))
        assert member is not None and member.games == 0
        # its load is the others' mean (their games, and the set just made if they sit in it)
        assert 130 <= member.baseline <= 136, member.baseline
