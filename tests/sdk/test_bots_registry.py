"""atout.bots: the names the CLI accepts, and HeuristicBot handing each game to its own bot."""

from __future__ import annotations

import pytest

import atout.bots
from atout import MatchInfo, MatchResult
from atout.bots import BOTS, HEURISTICS, HeuristicBot, RandomBot, heuristic_bot_class
from atout.games import GAMES
from atout.local import play
from atout.search import IsmctsBot, PimcBot

PLAYERS = {"merde": 3, "tiercon": 2, "regicide": 4, "fool": 2}


def test_registry() -> None:
    assert {"random": RandomBot, "heuristic": HeuristicBot, "pimc": PimcBot, "ismcts": IsmctsBot} == BOTS
    assert set(HEURISTICS) == set(GAMES)


@pytest.mark.parametrize("game", sorted(HEURISTICS))
def test_heuristic_bot_of_each_game(game: str) -> None:
    cls = heuristic_bot_class(game)
    assert cls is HEURISTICS[game]
    assert cls.__name__ == f"{game.capitalize()}HeuristicBot"
    assert getattr(atout.bots, cls.__name__) is cls and cls.__name__ in atout.bots.__all__


@pytest.mark.parametrize("game", sorted(HEURISTICS))
def test_heuristic_bot_plays_every_game_through_its_delegate(game: str) -> None:
    bots = [HeuristicBot() for _ in range(PLAYERS[game])]
    result = play(game, bots, seed=3)
    assert sorted(result.ranking)[0] == 1
    for bot in bots:
        assert type(bot._delegate) is heuristic_bot_class(game)
        assert bot._delegate.match is bot.match and bot._delegate.rng is bot.rng


def test_hooks_reach_the_delegate(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    class Probe(RandomBot):
        def on_match_start(self, match: MatchInfo) -> None:
            calls.append(f"start {match.game}")

        def on_match_end(self, result: MatchResult) -> None:
            calls.append(f"end {result.ranking}")

    monkeypatch.setattr(atout.bots, "heuristic_bot_class", lambda game: Probe)
    play("fool", [HeuristicBot(), RandomBot()], seed=1)
    assert calls[0] == "start fool" and calls[-1].startswith("end [") and len(calls) == 2


def test_unknown_game_or_name() -> None:
    with pytest.raises(ValueError, match="no heuristic bot for game 'chess'"):
        heuristic_bot_class("chess")
    with pytest.raises(AttributeError):
        _ = atout.bots.NoSuchBot  # type: ignore[attr-defined]
