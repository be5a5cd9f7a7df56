"""Secret seeds: a spy bot that knows the tournament seed and
reads the public API cannot reconstruct any hand during play, and can verify every match after
the end. Real processes: the API, a game server, a Celery worker, SDK bots.

Before: the tournament's seed was public while it ran and each match seed was a public
function of it; the spy found every deal (15 of 15 matches)."""

from __future__ import annotations

import hashlib
import json
import time

import pytest
from e2e_helpers import wait_until

from atout.games import new_game
from atout_arena.core.replay import load_match, replay_match
from atout_arena.core.schedule import deal_seed, deal_suits

SEED = 424242


@pytest.mark.slow
def test_a_spy_finds_no_deal_during_play_and_verifies_every_match_after(
    api, start_worker, connected_bots, clean_queues, tmp_path, sessions
) -> None:
    start_worker("seeds", concurrency=2)
    spy_file = tmp_path / "spy.jsonl"
    spy = connected_bots(1, "Spy", prefix="spy", ATOUT_TEST_SPY_SEED=str(SEED), ATOUT_TEST_API_URL=api.url,
                         ATOUT_TEST_SPY_FILE=str(spy_file), ATOUT_TEST_THINK_S="0.01")
    others = connected_bots(3, "Sleepy", prefix="mark", ATOUT_TEST_THINK_S="0.01")
    names = [name for name, _, _ in spy + others]
    created = api.organizer.post("/v1/tournaments", json={
        "name": "spied", "game": "tiercon", "bots": names, "games_per_pairing": 2, "duplicate": True,
        "seed": SEED, "move_ms": 3000, "start": True})
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    assert created.json()["seed"] == SEED  # the organizer sees it
    commitment = created.json()["deal_commitment"]
    assert commitment and created.json()["deal_key"]

    # While it runs: no seed, no key, no match seed, no replay of a duplicate match for anyone else.
    checks = 0
    def running() -> bool:
        return api.client.get(f"/v1/tournaments/{tid}").json()["status"] == "running"

    refused = 0
    while (shown := api.client.get(f"/v1/tournaments/{tid}").json())["status"] == "running":
        assert shown["seed"] is None and shown["deal_key"] is None and shown["deal_commitment"] == commitment
        assert shown["deals_public"] is False
        page = api.client.get(f"/v1/tournaments/{tid}/matches").json()["items"]
        listed = api.client.get("/v1/matches", params={"tournament_id": tid}).json()["items"]
        finished = [m for m in page if m["status"] == "finished"]
        replays = [api.client.get(f"/v1/matches/{m['id']}/replay") for m in finished]
        if running():  # (the last match may have ended meanwhile)
            assert all(m["seed"] is None and m["suits"] is None for m in page + listed)
            for replay in replays:
                assert replay.status_code == 403 and "duplicate" in replay.json()["detail"]
                refused += 1
        checks += 1
        time.sleep(0.2)
    print(f"during play: {checks} looks at the API, {refused} replays of finished rotations refused")
    assert checks >= 3, "the tournament ended before it could be watched"
    wait_until(lambda: api.client.get(f"/v1/tournaments/{tid}").json()["status"] == "finished", 120,
               "the tournament to finish")

    spied = [json.loads(line) for line in spy_file.read_text().splitlines()]
    matches = api.client.get(f"/v1/tournaments/{tid}/matches").json()["items"]
    assert len(matches) == 12 and len(spied) == 6  # the spy plays both rotations against each bot
    found = sum(1 for s in spied if s["found"] is not None)
    print(f"spy: {found} of {len(spied)} deals reconstructed during play")
    assert found == 0

    # After the end: the seed and the key are public, the key matches its commitment, every
    # match seed derives from them, deals the spy's hand, and the match replays.
    final = api.client.get(f"/v1/tournaments/{tid}").json()
    assert final["seed"] == SEED and final["deals_public"] is True
    key = final["deal_key"]
    assert hashlib.sha256(bytes.fromhex(key)).hexdigest() == commitment
    by_id = {m["id"]: m for m in matches}
    hands: dict[tuple[int, int], list[list[str]]] = {}  # (group, rotation): each seat's first hand
    verified = 0
    for match in matches:
        assert match["seed"] == deal_seed(SEED, match["deal_group"], key)
        assert match["seed"] != deal_seed(SEED, match["deal_group"])  # not the public formula
        # each rotation disguised by its own suit permutation, derived from the published key
        assert match["suits"] == deal_suits(SEED, match["deal_group"], match["rotation"], key)
        assert api.client.get(f"/v1/matches/{match['id']}/replay").status_code == 200
        record = load_match(sessions, match["id"])
        assert record is not None and record.suits == match["suits"]
        report = replay_match(record)  # what `atout-arena replay` checks
        assert report.ok, report.summary()
        verified += 1
        state = new_game("tiercon").new_state(seed=match["seed"], suit_permutation=match["suits"])
        seen = [sorted(state.observation(i)["hand"]) for i in range(2)]
        hands[match["deal_group"], match["rotation"]] = seen
    for s in spied:
        match = by_id[s["match"]]
        assert hands[match["deal_group"], match["rotation"]][s["seat"]] == sorted(s["hand"])
    # The two rotations of a deal group look different: no seat holds the same cards in both,
    # and the spy's hand in one rotation is not what its opponent held in the other (without the
    # disguise it is exactly that: the spy would know its opponent's whole hand).
    groups = sorted({g for g, _ in hands})
    same_seat = sum(hands[g, 0][i] == hands[g, 1][i] for g in groups for i in range(2))
    swapped = 0
    for s in spied:
        match = by_id[s["match"]]
        other = hands[match["deal_group"], 1 - match["rotation"]]
        # in the other rotation the seats swapped: the spy's opponent sat in the spy's seat
        swapped += other[s["seat"]] == sorted(s["hand"])
    print(f"disguise: {len(groups)} deal groups, {same_seat} seats with the same hand in both rotations, "
          f"{swapped} of {len(spied)} spy hands equal to the opponent's in the other rotation; "
          f"{verified} of {len(matches)} matches replay as stored")
    # (two permutations may map one hand onto another by chance: one coincidence in twelve seats
    # is luck; without the disguise every seat would match, 12 of 12 and 6 of 6)
    assert same_seat <= 1 and swapped <= 1 and verified == len(matches)
    print(f"after the end: {len(matches)} of {len(matches)} matches verified (key, seeds, hands, replays)")
