"""How often two PIMC bots choose the same card, by their count of worlds (docs/bots.md, the
ladder of bosses: why régicide's pimc-large is no stronger than pimc-small).

    .venv/bin/python scripts/pimc_agreement.py            # régicide, 2 players, 12 deals

Positions: the play phase of heuristic games, at least 3 legal actions, about one in seven
kept. Each position is asked of two ``pimc:worlds=16`` and two ``pimc:worlds=64`` bots of
different seeds (no time limit), and the share of equal choices is printed per pair.
"""

from __future__ import annotations

import argparse
import random

from atout.bot import Bot, MatchInfo, Observation
from atout.bots import BOTS, bot_factory
from atout.games import new_game


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="regicide")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--deals", type=int, default=12, help="heuristic games to draw positions from")
    args = parser.parse_args()
    game = new_game(args.game, players=args.players)
    names = [str(s) for s in range(game.players)]

    def bot(spec: str, seed: str, seat: int) -> Bot:
        player = bot_factory(spec)() if ":" in spec else BOTS[spec]()
        player.rng.seed(seed)
        player.match = MatchInfo("m", args.game, seat, game.players, {}, names)
        return player

    positions = []
    for g in range(args.deals):
        state = game.new_state(seed=100 + g)
        heuristics = [bot("heuristic", str(s), s) for s in range(game.players)]
        rng = random.Random(g)
        while not state.is_terminal:
            seat = state.current_player
            assert seat is not None
            legal = state.legal_actions()
            observation = Observation(state.observation(seat), legal, None, "m")
            if len(legal) > 2 and observation.get("phase") == "play" and rng.random() < 0.15:
                positions.append((seat, observation))
            state.apply(heuristics[seat].act(observation))
    specs = {"16a": "pimc:worlds=16,time_ms=0", "16b": "pimc:worlds=16,time_ms=0",
             "64a": "pimc:worlds=64,time_ms=0", "64b": "pimc:worlds=64,time_ms=0"}
    chosen = {key: [bot(spec, f"{key}{i}", seat).act(obs) for i, (seat, obs) in enumerate(positions)]
              for key, spec in specs.items()}

    def agree(a: str, b: str) -> float:
        return sum(x == y for x, y in zip(chosen[a], chosen[b], strict=True)) / len(positions)

    print(f"{len(positions)} positions of {args.game}, {game.players} players")
    print(f"16 vs 16 worlds: {agree('16a', '16b'):.3f}; 64 vs 64: {agree('64a', '64b'):.3f}; "
          f"16 vs 64: {(agree('16a', '64a') + agree('16b', '64b')) / 2:.3f}")


if __name__ == "__main__":
    main()
