"""The observation JSON Schemas (proto/atout/v1/observations/) against the engines: every
observation of many seeded random playouts of every game and option set validates against its
game's schema (draft 2020-12, no key left undescribed, none unlisted), so the schemas cannot
drift from the engines; and the examples of docs/protocol.md validate too."""

from __future__ import annotations

import json
import random
import re
import time
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from atout.games import GAMES, new_game

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "proto" / "atout" / "v1" / "observations"
DOC = ROOT / "docs" / "protocol.md"

CONFIGS: list[tuple[str, dict[str, Any], dict[str, Any], int]] = [
    # (game, options, new_state keywords, playouts): the option sets of tests/games
    ("merde", {"players": 3}, {}, 20),
    ("merde", {"players": 4, "deals": 6}, {}, 40),
    ("merde", {"players": 5, "zero_bid": "five_plus_tricks", "deals": 4}, {}, 40),
    ("merde", {"players": 7}, {}, 10),
    ("tiercon", {}, {}, 40),
    ("regicide", {"players": 2}, {}, 40),
    ("regicide", {"players": 3}, {}, 25),
    ("regicide", {"players": 4, "teams": True}, {}, 25),
    ("regicide", {"players": 3, "tie": "share"}, {}, 25),
    ("fool", {"players": 2}, {}, 80),
    ("fool", {"players": 4, "deck": 52}, {}, 40),
    ("fool", {"players": 6}, {}, 40),
    ("fool", {"players": 5, "deck": 52, "first_attack": "left_of_fool"}, {"previous_fool": 3}, 40),
]


def validator(game: str) -> Draft202012Validator:
    schema = json.loads((SCHEMAS / f"{game}.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_there_is_one_valid_schema_per_game_and_no_other() -> None:
    assert sorted(p.name for p in SCHEMAS.glob("*.schema.json")) == sorted(f"{g}.schema.json" for g in GAMES)
    for game in GAMES:
        validator(game)


def undescribed(schema: Any, path: str = "") -> list[str]:
    """Paths of every property (at any depth) that has no description."""
    missing: list[str] = []
    if isinstance(schema, dict):
        for key, sub in schema.get("properties", {}).items():
            if not (isinstance(sub, dict) and sub.get("description")):
                missing.append(f"{path}.{key}")
        for key, sub in schema.items():
            missing += undescribed(sub, f"{path}.{key}" if key != "properties" else path)
    elif isinstance(schema, list):
        for i, sub in enumerate(schema):
            missing += undescribed(sub, f"{path}[{i}]")
    return missing


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_key_is_described_and_objects_are_closed(game: str) -> None:
    schema = json.loads((SCHEMAS / f"{game}.schema.json").read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert undescribed(schema) == []
    objects: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "properties" in node:
                objects.append(node)
            for sub in node.values():
                walk(sub)
        elif isinstance(node, list):
            for sub in node:
                walk(sub)

    walk(schema)
    for node in objects:
        assert node.get("additionalProperties") is False, node.get("description")
        assert sorted(node["required"]) == sorted(node["properties"]), node.get("description")


def _ids(config: tuple[str, dict[str, Any], dict[str, Any], int]) -> str:
    game, options, keywords, _ = config
    return game + "-" + "-".join(f"{k}={v}" for k, v in {**options, **keywords}.items())


SAMPLE = 8  # after the first playout: the acting seat's observation at one ply in SAMPLE, at random


@pytest.mark.parametrize("config", CONFIGS, ids=[_ids(c) for c in CONFIGS])
def test_every_observation_of_random_playouts_matches_its_schema(
    config: tuple[str, dict[str, Any], dict[str, Any], int],
) -> None:
    """The first playout of each option set: every seat's observation at every ply; the others
    (played to their end): every seat's at the first and the last ply, and the acting seat's
    (what a DecisionRequest carries) at a random eighth of the plies (validating is what costs)."""
    game, options, keywords, playouts = config
    check = validator(game)
    checked = 0
    began = time.perf_counter()
    sample = random.Random(0)
    for seed in range(playouts):
        rng = random.Random(seed)
        state = new_game(game, **options).new_state(seed=seed, **keywords)
        while True:
            if seed == 0 or state.is_terminal or not state.history:
                seats = list(range(state.players))
            elif sample.randrange(SAMPLE) == 0:
                assert state.current_player is not None  # not over
                seats = [state.current_player]
            else:
                seats = []
            for seat in seats:
                # as a bot receives it: through JSON
                observation = json.loads(json.dumps(state.observation(seat)))
                if not check.is_valid(observation):
                    errors = sorted(check.iter_errors(observation), key=lambda e: list(e.path))
                    raise AssertionError(
                        f"{game} {options} seed {seed} seat {seat} ply {len(state.history)}: "
                        + "; ".join(f"{list(e.path)}: {e.message}" for e in errors[:5]))
                checked += 1
            if state.is_terminal:
                break
            state.apply(rng.choice(state.legal_actions()))
    print(f"\n{_ids(config)}: {checked} observations valid in {time.perf_counter() - began:.1f} s")
    assert checked > playouts * 10


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_wrong_observation_is_refused(game: str) -> None:
    check = validator(game)
    state = new_game(game).new_state(seed=7)
    good = json.loads(json.dumps(state.observation(0)))
    check.validate(good)
    for broken in ({**good, "extra": 1}, {k: v for k, v in good.items() if k != "hand"},
                   {**good, "hand": ["Zz"]}, {**good, "seat": -1}):
        with pytest.raises(ValidationError):
            check.validate(broken)


def doc_examples() -> dict[str, dict[str, Any]]:
    """The example observation of each game in docs/protocol.md (a ```json block after its
    ``<!-- example: GAME -->`` mark)."""
    text = DOC.read_text()
    found = re.findall(r"<!-- example: (\w+) -->\s*```json\n(.*?)```", text, re.S)
    return {game: json.loads(body) for game, body in found}


def test_the_docs_show_one_valid_example_per_game() -> None:
    examples = doc_examples()
    assert sorted(examples) == sorted(GAMES)
    for game, example in examples.items():
        validator(game).validate(example)
