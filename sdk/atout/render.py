"""A position of any of the four games as text, the table as a person reads it.

>>> from atout.games import new_game
>>> from atout.render import render_position
>>> print(render_position(new_game("merde", players=3).new_state(seed=1), seat=0))  # doctest: +SKIP

``seat=N`` shows what seat N sees (its hand face up, the others' as card counts); ``seat=None``
shows the whole deal: every hand face up (a recorded game holds the whole deal, and the one
watching it is the bot's developer). ``atout-bot watch`` and ``atout-bot replay`` print this.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .games import State
from .games.core import RANKS, SUIT_SYMBOLS, card_text, cards_text

PHASES = {
    "bid": "bidding", "play": "playing", "open": "opening the trump",
    "name_trump": "naming the trump (joker)",
    "choose": "trick winner's choice", "cut": "cutting the stock", "attack": "attack", "defend": "defence",
    "add": "adding cards", "over": "game over",
}
OWN_KEYS = frozenset({"seat", "hand"})  # per-seat by definition, never public


def _common(values: Sequence[Any]) -> tuple[bool, Any]:
    first, rest = values[0], values[1:]
    if all(v == first for v in rest):
        return True, first
    if isinstance(first, dict) and all(isinstance(v, dict) for v in rest):
        out = {}
        for key, value in first.items():
            if all(key in v for v in rest):
                same, common = _common([value, *(v[key] for v in rest)])
                if same:
                    out[key] = common
        return True, out
    return False, None


def public_view(state: State) -> dict[str, Any]:
    """What every seat's observation has in common, minus the seat's own keys (the spectators'
    view, as the arena's ``atout_arena.core.views.public_view`` computes it)."""
    observations = (state.observation(s) for s in range(state.players))
    trimmed = [{k: v for k, v in obs.items() if k not in OWN_KEYS} for obs in observations]
    view: dict[str, Any]
    _, view = _common(trimmed)
    return view


def seat_label(seat: Any) -> str:
    """A seat as text: a string as is; a :class:`atout.record.SeatRecord` as ``bot version``."""
    if seat is None:
        return ""
    if isinstance(seat, str):
        return seat
    version = getattr(seat, "version", None)
    bot = str(getattr(seat, "bot", seat))
    return f"{bot} {version}" if version else bot


def _action_text(action: str) -> str:
    words = action.split(" ")
    out = []
    for i, word in enumerate(words):
        if (len(word) == 2 and word[1] in SUIT_SYMBOLS and word[0] in RANKS) or word in ("RJ", "BJ"):
            out.append(card_text(word))
        elif i == 1 and words[0] == "trump" and word in SUIT_SYMBOLS:
            out.append(SUIT_SYMBOLS[word])
        else:
            out.append(word)
    return " ".join(out)


def action_text(action: str) -> str:
    """An action with its cards as people write them: ``"play Th"`` -> ``"play 10♥"``."""
    return _action_text(action)


def _seat_facts(game: str, view: dict[str, Any], seat: int) -> list[str]:
    facts = [f"score {(view.get('scores') or [0] * (seat + 1))[seat]}"]
    won = view.get("tricks_won")
    if game == "merde":
        bids = view.get("bids") or []
        bid = bids[seat] if seat < len(bids) else None
        facts.append(f"bid {'-' if bid is None else bid}")
    if game in ("merde", "tiercon", "regicide") and won:
        facts.append(f"tricks {won[seat]}")
    if game == "fool" and view.get("face_cards_beaten"):
        facts.append(f"face cards {view['face_cards_beaten'][seat]}")
    if view.get("dealer") == seat:
        facts.append("dealer")
    if game == "tiercon":
        if seat in (view.get("marriage") or []):
            facts.append("marriage")
        if view.get("combination_winner") == seat:
            facts.append("best combination")
    elif game == "regicide":
        teams = view.get("teams")
        if teams:
            facts.append("team A" if seat in teams[0] else "team B")
        if view.get("opener") == seat:
            facts.append("opened")
    elif game == "fool":
        if view.get("attacker") == seat:
            facts.append("attacker")
        if view.get("defender") == seat:
            facts.append("defender, takes" if view.get("taking") else "defender")
        if seat in (view.get("out") or []):
            facts.append("out")
        if view.get("fool") == seat:
            facts.append("fool")
    return facts


def _header(game: str, view: dict[str, Any], players: int) -> str:
    parts = [f"{game}, {players} players"]
    if view.get("deal") is not None:
        parts.append(f"deal {view['deal']}" + (f" of {view['deals']}" if view.get("deals") else ""))
    if view.get("phase"):
        parts.append(PHASES.get(view["phase"], view["phase"]))
    trump = view.get("trump")
    turned = view.get("turned") or (view.get("trump_card") if game == "fool" else None)
    trump_text = f"trump {SUIT_SYMBOLS.get(trump, trump)}" if trump else "no trump yet"
    if turned:
        trump_text += f" (turned {card_text(turned)})"
    parts.append(trump_text)
    if view.get("stock") is not None:
        parts.append(f"stock {view['stock']}")
    if game == "merde" and view.get("cards_per_player"):
        n = view["cards_per_player"]
        parts.append(f"{n} card{'' if n == 1 else 's'} each")
    if game == "tiercon":
        parts.append(f"first to {view.get('target') or 501}")
    if game == "regicide":
        if view.get("inverted"):
            parts.append("ranking inverted")
        if view.get("carry"):
            parts.append(f"{view['carry']} points carried")
    if game == "fool" and view.get("bout_limit"):
        parts.append(f"bout limit {view['bout_limit']}")
    return " · ".join(parts)


def render_position(state: State, seat: int | None = None, seats: Sequence[Any] | None = None) -> str:
    """The position ``state`` as text: a header line (game, deal, phase, trump, stock), one line
    per seat (number, bot name and version from ``seats``, score, tricks or bid, roles, ``<- to
    act``) with its hand, then the trick (or the fool's table), the last trick, announcements
    and the last deal's points.

    ``seat``: the seat whose view it is (its hand only; the others as card counts); ``None``:
    every hand face up. ``seats``: a label per seat (strings, or records with ``bot`` and
    ``version``)."""
    players = state.players
    if seat is not None and not 0 <= seat < players:
        raise ValueError(f"seat {seat} is not a seat of this game (0..{players - 1})")
    observations = [state.observation(s) for s in range(players)]
    view = public_view(state)
    game = str(observations[0].get("game", getattr(state, "game", "?")))
    names = [seat_label(seats[s]) if seats and s < len(seats) else "" for s in range(players)]

    def who(s: int) -> str:
        return f"seat {s}" + (f" ({names[s]})" if names[s] else "")

    lines = [_header(game, view, players)]
    width = max((len(n) for n in names), default=0)
    over = state.is_terminal
    ranking = state.ranking if over else None
    for s in range(players):
        facts = _seat_facts(game, view if seat is None else observations[seat], s)
        if ranking:
            facts.insert(0, "1st" if ranking[s] == 1 else f"place {ranking[s]}")
        mark = "  <- to act" if not over and state.current_player == s else ""
        you = " (you)" if seat == s else ""
        name = f"  {names[s]:<{width}}" if width else ""
        lines.append(f"  seat {s}{you}{name}  " + " · ".join(facts) + mark)
        if seat is None or seat == s:
            lines.append("      hand: " + cards_text(observations[s].get("hand") or []))
        else:
            own = observations[seat]
            sizes = own.get("hand_sizes")
            count = sizes[s] if sizes else own.get("opponent_hand_size")
            if count is not None:
                lines.append(f"      {count} card{'' if count == 1 else 's'}")
    if game == "fool":
        table = view.get("table") or []
        if table:
            pairs = [card_text(a) + (f"/{card_text(c)}" if c else "") for a, c in table]
            lines.append("table: " + "  ".join(pairs) + ("  (defender takes)" if view.get("taking") else ""))
        bout = view.get("last_bout")
        if bout and not table:
            took = "took" if bout.get("taken") else f"beat it (+{bout.get('face_cards', 0)})"
            lines.append(f"last bout: {who(bout['defender'])} {took}")
    else:
        trick = view.get("trick") or []
        if trick:
            lines.append("trick: " + ", ".join(f"{card_text(c)} by seat {s}" for s, c in trick))
        last = view.get("last_trick")
        winner = view.get("last_trick_winner")
        if game == "tiercon" and view.get("tricks"):
            last, winner = view["tricks"][-1]["cards"], view["tricks"][-1]["winner"]
        if last and not trick:
            lines.append("last trick: " + cards_text(c for _, c in last)
                         + (f" -> {who(winner)}" if winner is not None else ""))
    if game == "tiercon" and view.get("declared"):
        lines.append("announced: " + "; ".join(
            f"seat {s} {_action_text(a.removeprefix('declare '))} ({p})" for s, a, p in view["declared"]))
    if game == "merde" and view.get("bids_total_vs_tricks"):
        lines.append(f"bids are {view['bids_total_vs_tricks']} the tricks")
    last_deal = view.get("last_deal")
    if last_deal and last_deal.get("total"):
        lines.append("last deal: " + ", ".join(f"seat {s} {t:+d}" for s, t in enumerate(last_deal["total"])))
    if over:
        lines.append("game over: scores " + ", ".join(str(x) for x in state.scores))
    return "\n".join(lines)
