"""The data of the dashboard's bot page in ``GET /v1/bots/{name}``: its online Elo after each
rated match, per game (from the rating history rows), and its line in each ladder it is in."""

from __future__ import annotations

from typing import Any

from atout_arena.core.models import Match, MatchSeat, RatingChange


def test_rating_history_per_game_and_ladder_standings(api: Any, sessions: Any, new_bot: Any) -> None:
    name, bot_id, token = new_bot("page")
    other, other_id, _ = new_bot("page-other")
    third, _, _ = new_bot("page-third")
    changes = {"tiercon": [(1500.0, 1510.0), (1510.0, 1504.5), (1504.5, 1520.0)], "merde": [(1500.0, 1490.0)]}
    with sessions() as session:
        for game, steps in changes.items():
            for before, after in steps:
                match = Match(game=game, options={}, seed=1, status="finished", scores=[1, 0], ranking=[1, 2])
                match.seats = [MatchSeat(seat=0, bot_id=bot_id, place=1),
                               MatchSeat(seat=1, bot_id=other_id, place=2)]
                session.add(match)
                session.flush()
                session.add(RatingChange(game=game, bot_id=bot_id, match_id=match.id,
                                         before=before, after=after))
        session.commit()
    ladder = api.organizer.post("/v1/ladders", json={"name": f"{name} ladder", "game": "merde", "players": 3,
                                                     "bots": [name, other, third]})
    assert ladder.status_code == 201, ladder.text

    detail = api.as_bot(token).get(f"/v1/bots/{name}").json()
    history = {h["game"]: h for h in detail["rating_history"]}
    assert sorted(history) == ["merde", "tiercon"]
    assert history["tiercon"]["start"] == 1500.0
    assert [p["rating"] for p in history["tiercon"]["points"]] == [1510.0, 1504.5, 1520.0]
    ids = [p["match_id"] for p in history["tiercon"]["points"]]
    assert ids == sorted(ids)  # oldest first
    assert [p["rating"] for p in history["merde"]["points"]] == [1490.0]

    [line] = detail["ladders"]
    standings = api.client.get(f"/v1/ladders/{ladder.json()['id']}/standings").json()
    mine = next(r for r in standings if r["bot"] == name)
    assert line["ladder_id"] == ladder.json()["id"] and line["name"] == f"{name} ladder"
    assert (line["game"], line["members"]) == ("merde", 3)
    for key in ("rank", "ordinal", "mu", "sigma", "games", "sets", "provisional"):
        assert line[key] == mine[key], key
    # a bot with none of either: empty lists
    fresh = api.organizer.get(f"/v1/bots/{third}").json()
    assert fresh["rating_history"] == [] and len(fresh["ladders"]) == 1
