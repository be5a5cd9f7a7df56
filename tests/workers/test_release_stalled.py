"""The sweeper's net for duplicate deals (services.deals.release_stalled), on a fresh SQLite file:
a pending rotation is queued once the rotation before it in the same competition and deal group
is done, and not before; a rotation of another competition or group is not its previous one."""

from __future__ import annotations

from sqlalchemy import select

from atout_arena.core.db import open_database
from atout_arena.core.models import Ladder, Match, Tournament
from atout_arena.services.deals import release_stalled


def _match(owner: dict, group: int, rotation: int, status: str, number: int) -> Match:
    return Match(game="fool", options={}, seed=group, status=status, deal_group=group, rotation=rotation,
                 number=number, **owner)


def test_a_pending_rotation_is_released_when_the_one_before_it_in_its_competition_is_done(tmp_path) -> None:
    _, sessions = open_database(f"sqlite:///{tmp_path / 'a.db'}")
    with sessions() as session:
        running = Tournament(name="r", game="fool", options={}, players=2, status="running")
        over = Tournament(name="o", game="fool", options={}, players=2, status="finished")
        ladder = Ladder(name="l", game="fool", options={}, players=2)
        session.add_all([running, over, ladder])
        session.flush()
        t, o, lad = {"tournament_id": running.id}, {"tournament_id": over.id}, {"ladder_id": ladder.id}
        rows = {
            "t_done": _match(t, 1, 0, "finished", 0), "t_next": _match(t, 1, 1, "pending", 1),
            "t_busy": _match(t, 2, 0, "running", 2), "t_wait": _match(t, 2, 1, "pending", 3),
            "t_lone": _match(t, 3, 1, "pending", 4),  # group 3's rotation 0 is in another tournament
            "o_done": _match(o, 3, 0, "finished", 0), "o_next": _match(o, 3, 1, "pending", 1),
            "l_fail": _match(lad, 7, 0, "failed", 0), "l_next": _match(lad, 7, 1, "pending", 1),
            "l_third": _match(lad, 7, 2, "pending", 2),
        }
        session.add_all(rows.values())
        session.commit()
        ids = {name: m.id for name, m in rows.items()}
    assert release_stalled(sessions) == sorted([ids["t_next"], ids["l_next"]])
    with sessions() as session:
        status = {name: session.scalar(select(Match.status).where(Match.id == i)) for name, i in ids.items()}
    assert status["t_next"] == status["l_next"] == "queued"
    assert status["t_wait"] == status["t_lone"] == status["o_next"] == status["l_third"] == "pending"
    assert release_stalled(sessions) == []  # released once

