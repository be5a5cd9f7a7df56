"""A finished arena match downloads as a recorded game (docs/record.md): ``GET
/v1/matches/{id}/record`` and ``atout-arena match export ID [-o FILE]``. Real parts: the API in
its own thread, the worker's match code against the real database and Redis.

- The export reads back with ``atout.record.read_records``, conforms to docs/record.schema.json,
  and rebuilt step by step with ``positions()`` ends at the stored scores and ranking.
- Until the match's seeds are published only the organizer exports it (a stranger: 401, a
  seat's bot: 403, the CLI without the organizer token: one line, exit 2); once they are,
  anyone does.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import jsonschema
import pytest
from api_helpers import arena_cli

from atout.record import SCHEMA_PATH, read_records
from atout_arena.core.match import Answer
from atout_arena.core.models import Match

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]


def test_a_finished_match_exports_as_a_record_that_rebuilds_it(
    api, make_bot, sessions, database_url, redis_url, organizer_headers, monkeypatch, tmp_path, capsys
) -> None:
    from atout_arena.core.settings import Settings
    from atout_arena.services.tournaments import create_tournament, start_tournament
    from atout_workers.play import run_match
    from atout_workers.world import build_world

    bots = [make_bot("export") for _ in range(3)]
    tid = create_tournament(sessions, name="exported", game="merde", players=3, options={"deals": 2},
                            bots=[b.name for b, _ in bots], duplicate=True)
    first, *_ = start_tournament(sessions, tid)  # queued, sent nowhere: only this one is played
    with monkeypatch.context() as env:  # the worker code reads its settings from the environment
        env.setenv("ATOUT_DATABASE_URL", database_url)
        env.setenv("ATOUT_REDIS_URL", redis_url)
        world = build_world(Settings.from_env())
    rng = random.Random(11)
    try:
        asker = lambda a: Answer(rng.choice(a.legal_actions), 2.5, note="why not")  # noqa: E731
        assert run_match(world, first, asker=asker) == "finished"
    finally:
        world.close()
    with sessions() as session:
        match = session.get(Match, first)
        seed, suits, scores, ranking = str(match.seed), match.suits, match.scores, match.ranking
        names = {s.seat: s.bot.name for s in match.seats}
        seated = {s.bot_id for s in match.seats}
    token = next(t for b, t in bots if b.id in seated)

    # Its seeds are secret while the tournament runs: only the organizer exports it.
    stranger = api.client.get(f"/v1/matches/{first}/record")
    assert stranger.status_code == 401 and "not published yet" in stranger.json()["detail"], stranger.text
    assert seed not in stranger.text
    seat_bot = api.as_bot(token).get(f"/v1/matches/{first}/record")
    assert seat_bot.status_code == 403 and seed not in seat_bot.text
    code, out, err = arena_cli(monkeypatch, tmp_path, capsys, "match", "export", str(first), "--api", api.url,
                          token=None)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "not published yet" in err

    exported = tmp_path / "match.jsonl"
    admin = organizer_headers["Authorization"].removeprefix("Bearer ")
    code, out, err = arena_cli(monkeypatch, tmp_path, capsys, "match", "export", str(first), "--api", api.url,
                          "-o", str(exported), token=admin)
    assert code == 0, err
    assert f"match {first}: merde" in err and str(exported) in err
    assert exported.read_text().count("\n") == 1
    data = json.loads(exported.read_text())
    jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text())).validate(data)
    (record,) = read_records(exported)
    assert (record.game, record.players, record.options["deals"]) == ("merde", 3, 2)
    assert str(record.seed) == seed and record.suit_permutation == suits
    assert [(s.seat, s.bot) for s in record.seats] == sorted(names.items())
    assert record.source["kind"] == "arena" and record.source["match"] == first
    assert record.source["competition"] == {"tournament": tid}
    assert all(step.by == "bot" and step.think_ms == 2.5 and step.note == "why not" for step in record.steps)
    seen = 0
    for k, state, step in record.positions():
        assert k == seen and state.current_player == step.seat and step.action in state.legal_actions()
        seen += 1
    final = record.final_state()
    assert final.is_terminal and len(final.history) == len(record.steps) == seen
    assert final.scores == record.scores == scores and final.ranking == record.ranking == ranking

    # The API's answer is the same record; on stdout, the CLI prints the one line.
    assert api.organizer.get(f"/v1/matches/{first}/record").json() == data
    code, out, _ = arena_cli(monkeypatch, tmp_path, capsys, "match", "export", str(first), "--api", api.url,
                        token=admin)
    assert code == 0 and json.loads(out) == data and out.count("\n") == 1

    # Cancelled with nothing running: its seeds are published, and anyone exports the match.
    assert api.organizer.post(f"/v1/tournaments/{tid}/cancel").status_code == 200
    public = api.client.get(f"/v1/matches/{first}/record")
    assert public.status_code == 200 and public.json() == data


def test_the_sdk_ships_the_documented_schema() -> None:
    """docs/record.schema.json and the SDK's copy (atout.record.SCHEMA_PATH) are the same file."""
    assert SCHEMA_PATH.read_bytes() == (ROOT / "docs" / "record.schema.json").read_bytes()
    jsonschema.Draft202012Validator.check_schema(json.loads(SCHEMA_PATH.read_text()))
