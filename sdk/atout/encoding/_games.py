"""Each game's action space and tensor layout (documented in docs/learning.md)."""

from __future__ import annotations

import math
from typing import Any

from ..games import SUITS, Game
from ..games import fool as fool_rules
from ..games import merde as merde_rules
from ..games import regicide as regicide_rules
from ..games import tiercon as tiercon_rules
from ..games.core import make_deck
from . import _parts as p
from ._parts import Part, View

TRUMPS = (*SUITS, None)


class Layout:
    """A game's fixed action list, its deck (card order of every card section) and sections."""

    def __init__(self, actions: list[str], deck: tuple[str, ...], parts: list[Part]) -> None:
        self.actions = tuple(actions)
        self.deck = deck
        self.parts = tuple(parts)


def _trick_head(n: int, c: int) -> list[Part]:
    """The first sections of merde's and régicide's tensors: the hand, the cards played, the
    trick and its leader, the last trick and its winner."""
    return [
        p.cards("hand", c, lambda v: v.obs["hand"]),
        p.played("played", n, c, ("play",)),
        p.trick("trick", n, c, "trick"),
        p.seat("trick_leader", n, lambda v: v.obs["trick"][0][0] if v.obs["trick"] else None),
        p.trick("last_trick", n, c, "last_trick"),
        p.seat_key("last_trick_winner", n, "last_trick_winner"),
    ]


def _common_tail(players: int, phases: tuple[str, ...]) -> list[Part]:
    return [
        p.seat_one_hot_of_seats("dealer", players, "dealer"),
        p.seat_key("current_player", players, "current_player"),
        p.choice("phase", phases, "phase"),
    ]


def merde(game: Game[Any]) -> Layout:
    n, deals = game.players, game.options["deals"]
    deck = merde_rules.DECK
    c = len(deck)
    actions = [f"bid {b}" for b in range(deals + 1)] + [f"play {card}" for card in deck]
    most = 10 * deals + deals * (deals + 1) // 2  # every bid made in every deal

    def bids(view: View) -> list[float]:
        out = [0.0] * (n * (deals + 2))
        for i, bid in enumerate(view.by_seat(view.obs["bids"])):
            out[i * (deals + 2) + (0 if bid is None else bid + 1)] = 1.0
        return out

    parts = [
        *_trick_head(n, c),
        Part("bids", n * (deals + 2), bids),
        p.choice("bids_total_vs_tricks", (None, "over", "under", "exact"), "bids_total_vs_tricks"),
        p.per_seat("tricks_won", n, "tricks_won", deals),
        p.per_seat("hand_sizes", n, "hand_sizes", deals),
        p.card("turned", c, "turned"),
        p.choice("trump", TRUMPS, "trump"),
        p.key_number("deal", "deal", deals),
        p.per_seat("scores", n, "scores", most),
        *_common_tail(n, ("bid", "play", "over")),
    ]
    return Layout(actions, deck, parts)


def tiercon(game: Game[Any]) -> Layout:
    n = 2
    deck = tiercon_rules.DECK
    c = len(deck)
    natural = tiercon_rules.NATURAL
    declares = [
        "declare " + " ".join(r + suit for r in natural[start : start + length])
        for suit in SUITS
        for length in range(3, len(natural) + 1)
        for start in range(len(natural) - length + 1)
    ]
    declares += ["declare " + " ".join(rank + suit for suit in SUITS) for rank in "JQKA"]
    first_stock = len(deck) - 2 * tiercon_rules.HAND_SIZE  # the face-up card included
    cuts = [f"cut {k}" for k in range(1, first_stock - 1)]  # face down: first_stock - 1 cards
    actions = [*declares, "marriage", "exchange", *cuts] + [f"play {card}" for card in deck]
    target = tiercon_rules.TARGET

    def declared(view: View) -> list[tuple[int, str]]:
        return [(s, card) for s, action, _ in view.obs["declared"] for card in action.split()[1:]]

    def exchanged_by(view: View) -> int | None:
        return next((s for s, w in view.history() if w[0] == "exchange"), None)

    def tricks_shown(view: View) -> list[tuple[int, str]]:
        return [(s, card) for t in view.obs["tricks"] for s, card in t["cards"]]

    parts = [
        p.cards("hand", c, lambda v: v.obs["hand"]),
        p.played("played", n, c, ("play",)),
        p.seat_cards("tricks_shown", n, c, tricks_shown, info=False),
        p.trick("trick", n, c, "trick"),
        p.seat_key("leader", n, "leader"),
        p.choice("trump", SUITS, "trump"),
        p.card("trump_card", c, "trump_card"),
        p.card("turned", c, "turned"),
        p.key_number("stock", "stock", first_stock),
        p.key_number("cut", "cut", first_stock - 1),
        p.per_seat("tricks_won", n, "tricks_won", len(deck) // 2),
        p.number("opponent_hand_size", lambda v: v.obs["opponent_hand_size"], tiercon_rules.HAND_SIZE),
        p.seat_cards("declared", n, c, declared),
        # below 2.5 and 2.4: a seat scores at most 150 + 20 and its combinations (under 500) in
        # the deal that ends the game, having had under 501 before it
        p.per_seat("combination_points", n, "combination_points", 200, high=4.0),
        p.seat_key("combination_winner", n, "combination_winner"),
        p.seat("marriage", n, lambda v: v.obs["marriage"][0] if v.obs["marriage"] else None),
        p.flag("exchange_done", "exchange_done"),
        p.seat("exchanged_by", n, exchanged_by, obs=False),
        p.per_seat("scores", n, "scores", target, high=4.0),
        *_common_tail(n, ("cut", "play", "over")),
    ]
    return Layout(actions, deck, parts)


def regicide(game: Game[Any]) -> Layout:
    n = game.players
    deck = regicide_rules.DECK
    c = len(deck)
    actions = [
        "open",
        "pass",
        *(f"trump {s}" for s in SUITS),
        "keep",
        "invert",
        *(f"trump {s} invert" for s in SUITS),
        *(f"play {card}" for card in deck),
    ]
    hand_size = c // n
    target = regicide_rules.WINNING_TOTAL

    parts = [
        *_trick_head(n, c),
        p.choice("trump", TRUMPS, "trump"),
        p.flag("inverted", "inverted"),
        p.card("turned", c, "turned"),
        p.seat_key("opener", n, "opener"),
        p.key_number("passes", "passes", n),
        p.flag("choice", "choice"),
        p.flag("teams", "teams"),
        p.per_seat("tricks_won", n, "tricks_won", hand_size),
        p.per_seat("hand_sizes", n, "hand_sizes", hand_size),
        p.key_number("stock", "stock", c),
        p.key_number("aside", "aside", c),
        # tied deals may carry points for ever (however rarely): no bound
        p.key_number("carry", "carry", target, high=math.inf),
        p.per_seat("scores", n, "scores", target, high=math.inf),
        *_common_tail(n, ("open", "name_trump", "play", "choose", "over")),
    ]
    return Layout(actions, deck, parts)


def _known_held(view: View) -> list[tuple[int, str]]:
    """The cards a seat is known to hold: those it took from the table and has not played
    since (fool's public history)."""
    known: dict[int, set[str]] = {}
    bout: list[str] = []
    taker: int | None = None

    def settle() -> None:
        if taker is not None:
            known.setdefault(taker, set()).update(bout)

    for s, words in view.history():
        verb = words[0]
        if verb == "attack":
            settle()
            bout, taker = [], None
        if verb in ("attack", "add", "beat"):
            known.get(s, set()).discard(words[-1])
            bout.append(words[-1])
        elif verb == "take":
            taker = s
    if not view.obs["table"]:
        settle()
    return [(s, c) for s, cs in known.items() for c in cs]


def fool(game: Game[Any]) -> Layout:
    n = game.players
    deck = tuple(make_deck(fool_rules.DECK_RANKS[game.options["deck"]]))
    c = len(deck)
    order = {card: i for i, card in enumerate(deck)}
    beats = [
        f"beat {a} {b}"
        for a in deck
        for b in deck
        if a[1] != b[1] or order[b] > order[a]  # higher in suit, or a trump (any suit may be trump)
    ]
    actions = [
        *(f"attack {card}" for card in deck),
        *beats,
        "take",
        *(f"add {card}" for card in deck),
        "pass",
    ]
    face_cards = sum(1 for card in deck if card[0] in fool_rules.FACE_RANKS)

    parts = [
        p.cards("hand", c, lambda v: v.obs["hand"]),
        p.played("played", n, c, ("attack", "add", "beat")),
        p.seat_cards("known_held", n, c, _known_held, obs=False),
        p.cards("table_attack", c, lambda v: [a for a, _ in v.obs["table"]]),
        p.cards("table_cover", c, lambda v: [b for _, b in v.obs["table"] if b is not None]),
        p.cards("discard", c, lambda v: v.obs["discard"]),
        p.choice("trump", SUITS, "trump"),
        p.card("trump_card", c, "trump_card"),
        p.card("first_attack_card", c, "first_attack_card"),
        p.key_number("stock", "stock", c),
        p.per_seat("hand_sizes", n, "hand_sizes", c),
        p.seats_in("out", n, "out"),
        p.seat_key("attacker", n, "attacker"),
        p.seat_key("defender", n, "defender"),
        p.flag("taking", "taking"),
        p.key_number("bout_limit", "bout_limit", 6),
        p.per_seat("scores", n, "scores", face_cards),
        p.seat_key("previous_fool", n, "previous_fool"),
        p.seat_key("fool", n, "fool"),
        *_common_tail(n, ("attack", "defend", "add", "over")),
    ]
    return Layout(actions, deck, parts)


LAYOUTS = {"merde": merde, "tiercon": tiercon, "regicide": regicide, "fool": fool}
