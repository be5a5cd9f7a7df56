"""The API side of absent bots and of failed matches: ``absent`` in the create and start
answers, ``failed_matches`` / ``finished_with_failures`` on a tournament, and
``POST /v1/matches/{id}/retry`` (organizer only; a match that did not fail is a 409)."""

from __future__ import annotations

from sqlalchemy import select

from atout_arena.core.models import Match, Tournament


def test_creating_and_starting_a_tournament_names_the_entrants_not_connected(api, new_bot) -> None:
    names = [new_bot("away")[0] for _ in range(3)]
    created = api.organizer.post("/v1/tournaments", json={"name": "absent", "game": "fool", "players": 2,
                                                          "bots": names, "absent_grace_s": 2.5})
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["absent"] == names and body["absent_grace_s"] == 2.5
    assert body["failed_matches"] == 0 and body["finished_with_failures"] is False
    started = api.organizer.post(f"/v1/tournaments/{body['id']}/start")
    assert started.status_code == 200 and started.json()["absent"] == names
    api.organizer.post(f"/v1/tournaments/{body['id']}/cancel")
    bad = api.organizer.post("/v1/tournaments", json={"name": "x", "game": "fool", "players": 2,
                                                      "bots": names, "absent_grace_s": -1})
    assert bad.status_code == 422


def test_a_failed_match_is_retried_by_the_organizer_only(api, new_bot, sessions) -> None:
    names = [new_bot("retry")[0] for _ in range(2)]
    created = api.organizer.post("/v1/tournaments", json={"name": "retry", "game": "fool", "players": 2,
                                                          "bots": names, "games_per_pairing": 2})
    tid = created.json()["id"]
    with sessions() as session:
        first, second = session.scalars(select(Match).where(Match.tournament_id == tid)).all()
        first.status, first.error, first.errors = "failed", "every seat was disconnected", 3
        second.status = "finished"
        for place, seat in enumerate(second.seats, 1):
            seat.place, seat.score = place, 0
        session.commit()
        failed_id, finished_id = first.id, second.id
    with sessions() as session:  # as the finalize of a tournament whose last match failed leaves it
        session.get(Tournament, tid).status = "finished"
        session.commit()
    response = api.client.get(f"/v1/tournaments/{tid}")
    assert response.status_code == 200, response.text
    shown = response.json()
    assert shown["failed_matches"] == 1 and shown["finished_with_failures"] is True
    assert api.client.post(f"/v1/matches/{failed_id}/retry").status_code == 401
    refused = api.organizer.post(f"/v1/matches/{finished_id}/retry")
    assert refused.status_code == 409 and "only a failed match" in refused.text
    assert api.organizer.post("/v1/matches/999999999/retry").status_code == 404
    retried = api.organizer.post(f"/v1/matches/{failed_id}/retry")
    assert retried.status_code == 200, retried.text
    assert retried.json()["status"] == "queued"
    again = api.client.get(f"/v1/tournaments/{tid}").json()
    assert again["status"] == "running" and again["failed_matches"] == 0
    api.organizer.post(f"/v1/tournaments/{tid}/cancel")
