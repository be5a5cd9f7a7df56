"""What the demo plays: a game's preset (seats, options, games per pairing), the bots, and
the checked plan (:func:`plan_demo`), before anything starts."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from atout.games import GAMES, new_game
from atout_arena.core.schedule import tables
from atout_arena.demo.commands import DEFAULT_BOTS, DEFAULT_GAME, DEFAULT_WORKERS, PRESETS, Preset

__all__ = ["DEFAULT_BOTS", "DEFAULT_GAME", "DEFAULT_WORKERS", "PRESETS", "DemoBot", "DemoPlan", "Preset",
           "plan_demo"]


BOT_KINDS = ("heuristic", "random")


@dataclass(frozen=True)
class DemoBot:
    name: str  # heuristic-1, random-2, ...
    kind: str  # what ``atout-bot run`` plays: heuristic or random


@dataclass(frozen=True)
class DemoPlan:
    """What the demo will play; :func:`plan_demo` checks it before anything starts."""

    game: str
    players: int
    options: dict[str, Any]
    games_per_pairing: int
    bots: tuple[DemoBot, ...]
    matches: int
    move_ms: int = 1000

    def describe(self) -> str:
        options = ", ".join(f"{k}={v}" for k, v in self.options.items())
        kinds = Counter(b.kind for b in self.bots)
        bots = ", ".join(f"{n} {k}" for k, n in kinds.items())
        return (f"{self.game}, {self.players} players{', ' + options if options else ''}; "
                f"{len(self.bots)} bots ({bots}); {plural(self.matches, 'match', 'matches')} "
                f"({self.games_per_pairing} per pairing)")


def plural(count: int, one: str, many: str) -> str:
    return f"{count:,} {one if count == 1 else many}"


def demo_bots(count: int) -> tuple[DemoBot, ...]:
    """``heuristic-1``, ``random-2``, ``heuristic-3``, ...: both kinds, alternately."""
    return tuple(DemoBot(f"{BOT_KINDS[i % 2]}-{i + 1}", BOT_KINDS[i % 2]) for i in range(count))


def plan_demo(game: str = DEFAULT_GAME, bots: int = DEFAULT_BOTS, games_per_pairing: int | None = None,
              players: int | None = None) -> DemoPlan:
    """The demo's tournament, checked; ``ValueError`` with a clear message when it cannot be."""
    if game not in PRESETS or game not in GAMES:
        raise ValueError(f"unknown game {game!r}; games: {', '.join(g for g in PRESETS if g in GAMES)}")
    preset = PRESETS[game]
    rules = GAMES[game]
    if bots < 2:
        raise ValueError(f"--bots {bots}: a tournament needs at least 2 bots")
    if bots > 64:
        raise ValueError(f"--bots {bots}: at most 64 in a demo")
    if players is None:
        players = min(preset.players, bots)
        if players < rules.min_players:
            raise ValueError(f"{game} needs at least {rules.min_players} players: use --bots "
                             f"{rules.min_players} or more")
    elif players > bots:
        raise ValueError(f"--players {players} needs at least {players} bots (--bots {bots})")
    games_per_pairing = preset.games_per_pairing if games_per_pairing is None else games_per_pairing
    if games_per_pairing < 1:
        raise ValueError(f"--games-per-pairing {games_per_pairing}: at least 1")
    options = dict(preset.options)
    new_game(game, players=players, **options)  # a bad player count raises ValueError naming it
    schedule = tables(list(range(bots)), players, games_per_pairing, seed=0)
    return DemoPlan(game, players, options, games_per_pairing, demo_bots(bots), len(schedule))
