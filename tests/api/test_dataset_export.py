"""``atout-arena export``: the decisions of the arena's published matches as a dataset
(docs/datasets.md). Real parts: the API in its own thread, the worker's match code against the
real database and Redis, the command in-process.

- A finished tournament exports one row per stored decision, and the Parquet file loads in
  pyarrow; the rows rebuild what each seat saw.
- While the tournament runs nothing of it is exported, even with the organizer token in the
  environment (the command asks as a stranger): a spy seated in its finished match finds no
  card it did not see in any row.
- ``--game`` and ``--since`` filter; a bad competition is one line.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow.parquet as pq
import pytest
from api_helpers import arena_cli

from atout.dataset import read_parquet_rows
from atout_arena import cli_export
from atout_arena.core.match import Answer, DecisionAsk
from atout_arena.core.models import Match
from atout_arena.core.replay import load_match

pytestmark = pytest.mark.timeout(120)


def _rows(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_a_finished_tournament_exports_and_a_running_one_exports_nothing(
    api, make_bot, sessions, database_url, redis_url, organizer_headers, monkeypatch, tmp_path, capsys
) -> None:
    from atout_arena.core.settings import Settings
    from atout_arena.services.tournaments import create_tournament, finalize_tournament, start_tournament
    from atout_workers.play import run_match
    from atout_workers.world import build_world

    (spy, _), (other, _) = make_bot("spy"), make_bot("mark")
    tid = create_tournament(sessions, name="exported", game="tiercon", players=2, options={},
                            bots=[spy.name, other.name], games_per_pairing=2)
    matches = start_tournament(sessions, tid)
    assert len(matches) == 2
    with monkeypatch.context() as env:  # the worker code reads its settings from the environment
        env.setenv("ATOUT_DATABASE_URL", database_url)
        env.setenv("ATOUT_REDIS_URL", redis_url)
        world = build_world(Settings.from_env())
    rng = random.Random(5)
    seen: dict[int, list[tuple[dict[str, Any], list[str]]]] = {}  # match id: what the spy was asked with

    def asker(ask: DecisionAsk) -> Answer:
        if ask.bot.bot_id == spy.id:
            seen.setdefault(int(ask.match_id), []).append((json.loads(json.dumps(ask.observation)),
                                                           list(ask.legal_actions)))
        return Answer(rng.choice(ask.legal_actions), 1.5)

    admin = organizer_headers["Authorization"].removeprefix("Bearer ")
    competition = ("export", "--competition", f"tournament:{tid}", "--api", api.url)
    try:
        assert run_match(world, matches[0], asker=asker) == "finished"
        # Running, one match finished: nothing of it comes out, organizer token or not.
        assert api.client.get(f"/v1/tournaments/{tid}").json()["status"] == "running"
        # What the spy never saw: its opponent's hand at each of the opponent's decisions.
        record = load_match(sessions, matches[0])
        assert record is not None
        state, hidden = record.new_state(), set()
        spy_seat = seen[matches[0]][0][0]["seat"]
        for step in record.steps():
            if step.seat != spy_seat:
                hidden.add(tuple(sorted(state.observation(step.seat)["hand"])))
            state.apply(step.action)
        assert hidden
        for token in (admin, None):
            code, out, err = arena_cli(monkeypatch, tmp_path, capsys, *competition, token=token)
            assert code == 0 and out == "", err
            assert "exported 0 matches, 0 decisions; 1 finished matches not exported" in err
            code, out, err = arena_cli(monkeypatch, tmp_path, capsys, "export", "--game", "tiercon",
                                  "--api", api.url, token=token)  # fmt: skip
            assert code == 0, err
            mine = [row for row in _rows(out) if row["competition"] == f"tournament:{tid}"]
            assert mine == []
            assert not [row for row in _rows(out) if row["match"] == str(matches[0])]
            assert not [row for row in _rows(out) if tuple(sorted(row["observation"]["hand"])) in hidden]

        assert run_match(world, matches[1], asker=asker) == "finished"
    finally:
        world.close()
    assert finalize_tournament(sessions, tid)  # what the worker's follow-up task does
    assert api.client.get(f"/v1/tournaments/{tid}").json()["status"] == "finished"

    # Finished: every decision of both matches, one row each, in Parquet.
    stored = {}
    with sessions() as session:
        for mid in matches:
            match = session.get(Match, mid)
            assert match is not None
            stored[mid] = (match.scores, match.ranking, match.finished_at)
    steps = {mid: list(rec.steps()) for mid in matches if (rec := load_match(sessions, mid)) is not None}
    out_file = tmp_path / "t.parquet"
    monkeypatch.setattr(cli_export, "PROGRESS_EVERY_S", 0.0)  # a progress line after every match
    code, out, err = arena_cli(monkeypatch, tmp_path, capsys, *competition, "--format", "parquet", "-o",
                          str(out_file), token=None)  # fmt: skip
    assert code == 0 and out == "", err
    total = sum(len(s) for s in steps.values())
    assert f"exported 2 matches, {total} decisions to {out_file}" in err
    assert f"export: 1 matches, {len(steps[matches[-1]])} decisions so far" in err  # newest first
    assert not out_file.with_name("t.parquet.part").exists()
    table = pq.read_table(out_file)
    assert table.num_rows == total
    rows = list(read_parquet_rows(out_file))
    for mid in matches:
        mine = [row for row in rows if row["match"] == str(mid)]
        assert [(r["seat"], r["action"], r["by"]) for r in mine] == [
            (s.seat, s.action, s.by) for s in steps[mid]]
        scores, ranking, _ = stored[mid]
        for row in mine:
            assert row["competition"] == f"tournament:{tid}" and row["source"] == "arena"
            assert row["action"] in row["legal_actions"] and row["think_ms"] == 1.5
            assert (row["scores"], row["ranking"]) == (scores, ranking)
            assert (row["score"], row["rank"]) == (scores[row["seat"]], ranking[row["seat"]])
            assert row["bot"] == (spy.name if row["bot"] == spy.name else other.name)
        # the spy's rows are exactly what it was asked with
        assert [(r["observation"], r["legal_actions"]) for r in mine if r["bot"] == spy.name] == seen[mid]

    # --game and --since: JSON Lines on stdout
    code, out, err = arena_cli(monkeypatch, tmp_path, capsys, "export", "--game", "tiercon", "--api", api.url,
                          token=None)  # fmt: skip
    assert code == 0, err
    assert {row["match"] for row in _rows(out)} >= {str(m) for m in matches}
    code, out, err = arena_cli(monkeypatch, tmp_path, capsys, "export", "--game", "merde", "--api", api.url,
                          token=None)  # fmt: skip
    assert code == 0 and not {row["match"] for row in _rows(out)} & {str(m) for m in matches}, err
    first_end = min(end for _, _, end in stored.values())
    last_end = max(end for _, _, end in stored.values())
    assert first_end is not None and last_end is not None
    since = (last_end.replace(tzinfo=last_end.tzinfo or UTC) - timedelta(microseconds=1)).isoformat()
    code, out, err = arena_cli(monkeypatch, tmp_path, capsys, *competition, "--since", since, token=None)
    assert code == 0, err
    later = {row["match"] for row in _rows(out)}
    assert later == {str(mid) for mid in matches if stored[mid][2] == last_end}
    future = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    code, out, err = arena_cli(monkeypatch, tmp_path, capsys, *competition, "--since", future, token=None)
    assert code == 0 and out == "" and "exported 0 matches" in err

    # What is wrong is one line, exit 2.
    for args, says in (
        (("export", "--competition", "tournament:999999", "--api", api.url, "-o", str(tmp_path / "n.jsonl")),
         "999999"),
        (("export", "--competition", "league:1", "--api", api.url), "tournament:ID, ladder:ID or test:ID"),
        (("export", "--game", "chess", "--api", api.url), "invalid choice: 'chess'"),
        (("export", "--game", "tiercon", "--format", "parquet", "--api", api.url), "needs -o FILE"),
        (("export", "--game", "tiercon", "-o", str(tmp_path / "x.csv"), "--api", api.url),
         ".jsonl or .parquet"),
        (("export", "--game", "tiercon", "--format", "parquet", "-o", str(tmp_path / "n.jsonl"), "--api",
          api.url), "--format parquet but"),
    ):
        code, out, err = arena_cli(monkeypatch, tmp_path, capsys, *args, token=None)
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and says in err, err
    assert not (tmp_path / "n.jsonl").exists() and not (tmp_path / "n.jsonl.part").exists()


def test_a_running_ladder_exports_each_set_once_it_is_done(
    api, make_bot, sessions, database_url, redis_url, monkeypatch, tmp_path, capsys
) -> None:
    """The arena's rule: a ladder's set is published once its rotations are all played, the
    ladder still running (docs/datasets.md)."""
    from atout_arena.core.settings import Settings
    from atout_arena.services.competitions import CompetitionSpec
    from atout_arena.services.deals import release_next
    from atout_arena.services.ladders import create_ladder, tick
    from atout_workers.play import run_match
    from atout_workers.world import build_world

    (a, _), (b, _) = make_bot("rung"), make_bot("rung")
    lid = create_ladder(sessions, name=f"export-{a.id}", spec=CompetitionSpec.of("tiercon"),
                        bots=[a.name, b.name], target_in_flight=1)
    scheduled = tick(sessions, lid, lambda: [a.id, b.id]).scheduled
    assert scheduled is not None and len(scheduled) == 2  # one set: the deal in both seatings
    with monkeypatch.context() as env:
        env.setenv("ATOUT_DATABASE_URL", database_url)
        env.setenv("ATOUT_REDIS_URL", redis_url)
        world = build_world(Settings.from_env())
    rng = random.Random(3)
    export = ("export", "--competition", f"ladder:{lid}", "--api", api.url)
    try:
        asker = lambda ask: Answer(rng.choice(ask.legal_actions), 1.0)  # noqa: E731
        assert run_match(world, scheduled[0], asker=asker) == "finished"
        code, out, err = arena_cli(monkeypatch, tmp_path, capsys, *export, token=None)
        assert code == 0 and out == "" and "1 finished matches not exported" in err, err  # its set is open
        assert release_next(sessions, scheduled[0]) == [scheduled[1]]  # the worker's follow-up
        assert run_match(world, scheduled[1], asker=asker) == "finished"
    finally:
        world.close()
    assert api.client.get(f"/v1/ladders/{lid}").json()["status"] == "running"
    code, out, err = arena_cli(monkeypatch, tmp_path, capsys, *export, token=None)
    assert code == 0, err
    assert {row["match"] for row in _rows(out)} == {str(m) for m in scheduled}
    assert {row["competition"] for row in _rows(out)} == {f"ladder:{lid}"}


def test_a_match_that_does_not_replay_is_skipped_with_a_line_and_the_rest_exported(
    api, make_bot, sessions, monkeypatch, tmp_path, capsys
) -> None:
    """A published match whose record this SDK cannot replay (here: an action the engine does
    not know, as an arena of another version could store) is one line on stderr and none of its
    rows; the matches around it are exported and the exit code is 0 (docs/datasets.md)."""
    from atout.games import GAMES, new_game
    from atout_arena.core.match import Step
    from atout_arena.core.models import MatchSeat
    from atout_arena.core.vocabulary import PlayedBy

    (a, _), (b, _) = make_bot("skip"), make_bot("skip")
    since = datetime.now(UTC) - timedelta(seconds=1)
    state = new_game("fool", players=2).new_state(seed=3)
    good: list[tuple[int, str]] = []
    rng = random.Random(3)
    while not state.is_terminal:
        seat, action = state.current_player, rng.choice(state.legal_actions())
        assert seat is not None
        good.append((seat, action))
        state.apply(action)
    ids = []
    with sessions() as session:
        for actions in (good, [(good[0][0], "dance")]):
            steps = [Step(ply, seat, action, PlayedBy.BOT, 1.0, (), "", 1.0).to_json()
                     for ply, (seat, action) in enumerate(actions)]
            match = Match(game="fool", options={}, seed=3, status="finished", actions=steps,
                          rules_version=GAMES["fool"].RULES_VERSION,
                          scores=list(state.scores), ranking=list(state.ranking),
                          finished_at=datetime.now(UTC))
            match.seats = [MatchSeat(seat=s, bot_id=bot.id, place=state.ranking[s])
                           for s, bot in enumerate((a, b))]
            session.add(match)
            session.flush()
            ids.append(match.id)
        session.commit()
    code, out, err = arena_cli(monkeypatch, tmp_path, capsys, "export", "--game", "fool", "--since",
                          since.isoformat(), "--api", api.url, token=None)  # fmt: skip
    assert code == 0, err
    exported = {row["match"] for row in _rows(out)}
    assert str(ids[0]) in exported and str(ids[1]) not in exported, err
    assert f"match {ids[1]} skipped: its record does not replay in this SDK:" in err
    assert "'dance'" in err and "1 matches skipped (said above)" in err
