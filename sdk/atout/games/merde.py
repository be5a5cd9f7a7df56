"""Merde (Zut, Eclipse): the exact-bid trick-taking game of the "Oh Hell" family.

RULES.md, section "merde". Deal ``i`` gives every player ``i`` cards; the next card of the
deck is turned and its suit is trump (none in the last deal); each player bids once the exact
number of tricks they will take; then tricks are played, following suit if able. A player who
takes exactly the bid scores ``10 + bid``, anyone else 0.

Speed: a random playout of a whole game is the benchmark (bench/engines.py), so the hot paths
work on precomputed tables: the action string of every card and bid is built once, each hand is
kept as its sorted "play C" actions and split by suit, and ``_do`` hands the next player's legal
actions to the cache as one of those lists, without copying it (``legal_actions()`` returns the
one copy). The trick is kept as the moves played, its winner updated card by card from a table
of card strengths, and a seeded deal only shuffles the cards it deals (``shuffle_top``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar, cast

from .core import (
    RANKS,
    SUIT_NAMES,
    SUIT_SYMBOLS,
    SUITS,
    Game,
    Option,
    State,
    card_text,
    cards_text,
    make_deck,
    parse_card,
)


class Phase(StrEnum):
    """Where a deal of merde stands: bidding, then playing its tricks; over at the end.
    The observation's ``phase``; a ``StrEnum``: it equals its text (``Phase.BID == "bid"``)."""

    BID = "bid"
    PLAY = "play"
    OVER = "over"


# Read as module names in the hot paths: an enum member read as an attribute costs ~80 ns in 3.11
PHASE_BID, PHASE_PLAY, PHASE_OVER = Phase.BID, Phase.PLAY, Phase.OVER


DECK: tuple[str, ...] = tuple(make_deck(RANKS))  # suit-major: 2c..Ac, 2d..Ad, 2h..Ah, 2s..As
PLAY = {card: "play " + card for card in DECK}  # the action string of each card, built once
CARD_OF = {move: card for card, move in PLAY.items()}  # the card a "play C" action plays


def _card_strength(card: str, trump: str | None, led: str) -> int:
    """How strongly ``card`` bids for a trick, given the trump suit (None: no trump) and the suit
    led: a trump beats any card of the suit led, which beats any other card (-1: it never takes
    the trick); within a suit, by rank. The trick goes to its strongest card."""
    rank = RANKS.index(card[0])
    if card[1] == trump:
        return 13 + rank
    return rank if card[1] == led else -1


# STRENGTH[trump][led][move]: the _card_strength of the card a move plays, built once
STRENGTH = {
    trump: {led: {PLAY[card]: _card_strength(card, trump, led) for card in DECK} for led in SUITS}
    for trump in (*SUITS, None)
}
ORDER_OF = {PLAY[card]: i for i, card in enumerate(DECK)}  # hands are listed by suit, then rank
# A hand holds at most 17 cards (3 players, deals x players <= 52).
BIDS = [f"bid {n}" for n in range(len(DECK) // 3 + 1)]
BID_OF = {action: n for n, action in enumerate(BIDS)}
BIDS_UP_TO = [BIDS[: size + 1] for size in range(len(BIDS))]  # the legal bids with `size` cards in hand
DEFAULT_DEALS = {3: 15, 4: 13, 5: 10, 6: 8, 7: 7}  # RULES.md, "Deals"

ALL = "all"  # the key, beside the suits, under which a hand keeps all its moves


class MerdeState(State):
    FULL_DECK = DECK

    def __init__(
        self, game: Game[Any], seed: int | None, decks: Any, dealer: int | None, **kwargs: Any
    ) -> None:
        if kwargs:
            raise ValueError(f"merde takes no {', '.join(map(repr, kwargs))} argument")
        State.__init__(self, game, seed, decks, dealer)
        n = self.players
        self.deals: int = game.options["deals"]
        self._five_plus = game.options["zero_bid"] == "five_plus_tricks"
        self.totals = [0] * n  # running scores
        self._next_seat = [(seat + 1) % n for seat in range(n)]  # the seat to the left of each
        # the seats in playing order from each seat: who played each card of a trick
        self._order = [tuple((first + k) % n for k in range(n)) for first in range(n)]
        self.deal = 0  # 1-based number of the deal being played
        self.dealer = (self.first_dealer - 1) % n  # _start_deal moves it to the first dealer
        self.last_deal: dict[str, list[Any]] | None = None  # see DESIGN.md, "last_deal"
        # Decision (ours): the last completed trick stays shown until the next one is complete,
        # across the start of a new deal too (the last trick of a deal is otherwise never seen
        # in an observation, since the next deal starts at once).
        self._last_trick: tuple[int, list[str]] | None = None  # (its leader, its moves)
        self.last_trick_winner: int | None = None
        # The trick in play is kept as the moves played, in order from the leader's (the hot
        # path only appends a string); `trick` spells it out as [seat, card] pairs.
        self._trick: list[str] = []
        self._leader = 0  # the seat that led the trick
        self._led = ""  # the suit of the trick's first card
        self._strengths: dict[str, dict[str, int]] = {}  # STRENGTH[trump] for this deal
        self._strength: dict[str, int] = {}  # STRENGTH[trump][led] for this trick
        self._best = -1  # the strength of the card winning the trick so far
        self._winner = 0  # the seat that played it
        self._deal_start = 0  # where the current deal's actions start in self.history
        self._start_deal()

    # -- the deal -----------------------------------------------------------------------------

    def _start_deal(self) -> None:
        n = self.players
        self.deal += 1
        # the deal's first action is the next one (_start_deal runs inside the previous deal's
        # last apply, after history has recorded it): observation's "deal_history" starts here
        self._deal_start = len(self.history)
        # RULES.md, "Dealer": each later deal is dealt by the player to the left of the last dealer.
        self.dealer = dealer = (self.dealer + 1) % n
        size = self.deal  # deal i gives i cards to everyone
        dealt = n * size
        deck = self._next_deck(dealt + 1)  # the hands and the card turned for trump: the rest is unused
        # One card at a time from the top, starting with the player to the dealer's left: card k
        # goes to seat (dealer + 1 + k) % n, so seat s gets every n-th card from its offset.
        # A hand is kept as its "play C" moves, all of them under ALL and split by suit.
        # Decision (ours): hands and legal plays are listed by suit (clubs, diamonds, hearts,
        # spades), then rank; the legal plays are then always one of these lists, which only
        # _do changes (removing the card played), so the legal-actions cache can be one of them.
        dealt_moves = list(map(PLAY.__getitem__, deck[:dealt]))
        self._hands: list[dict[str, list[str]]] = []
        for seat in range(n):
            moves = dealt_moves[(seat - dealer - 1) % n :: n]
            moves.sort(key=ORDER_OF.__getitem__)
            hand = {ALL: moves, "c": [], "d": [], "h": [], "s": []}
            for move in moves:
                hand[move[6]].append(move)
            self._hands.append(hand)
        # RULES.md, "Trump": the next card is turned and its suit is trump; the last deal of the
        # game is played without trump and turns no card.
        # Decision (RULES.md): a deal that leaves no card to turn is also played without trump.
        # (With deals x players <= 52 only the last deal can use up the deck.)
        if size < self.deals and dealt < len(deck):
            self.turned: str | None = deck[dealt]
            self.trump: str | None = deck[dealt][1]
            self._stock = deck[dealt + 1 :]  # the rest of the deck takes no part
        else:
            self.turned = self.trump = None
            self._stock = deck[dealt:]
        self._strengths = STRENGTH[self.trump]
        self.cards_per_player = size
        self.bids: list[int | None] = [None] * n
        self.tricks_won = [0] * n
        self.phase = PHASE_BID
        # RULES.md, "Bidding": from the player to the dealer's left, ending with the dealer.
        self.current_player = (dealer + 1) % n
        self._legal = BIDS_UP_TO[size]

    def _end_deal(self) -> None:
        points = []
        for bid, won in zip(self.bids, self.tricks_won, strict=True):
            if won != bid:
                points.append(0)  # "bankrupt"
            elif bid == 0 and self._five_plus:
                points.append(5 + self.cards_per_player)  # option zero_bid="five_plus_tricks"
            else:
                points.append(10 + won)
        for seat, p in enumerate(points):
            self.totals[seat] += p
        # Decision (ours): the breakdown beside "total" is each seat's bid and tricks taken.
        self.last_deal = {"total": points, "bids": self.bids, "tricks": self.tricks_won}
        if self.deal == self.deals:
            self.phase = PHASE_OVER
            self._game_over()
        else:
            self._start_deal()

    # -- actions ------------------------------------------------------------------------------

    def _legal_actions(self) -> list[str]:
        if self.phase == PHASE_BID:
            # RULES.md: 0 to the number of cards in hand; nobody passes; the sum is free.
            return BIDS_UP_TO[self.cards_per_player]
        seat = self.current_player
        assert seat is not None
        hand = self._hands[seat]
        if self._trick:
            # Following suit means playing the suit of the trick's first card, if able.
            same = hand[self._led]
            if same:
                return same
        return hand[ALL]  # leading, or void in the suit led: any card

    def _do(self, action: str) -> None:
        seat = self.current_player
        assert seat is not None
        if self.phase == PHASE_BID:
            self.bids[seat] = BID_OF[action]
            self.current_player = seat = self._next_seat[seat]
            if seat == self._next_seat[self.dealer]:
                # The dealer bid last; the player to the dealer's left leads the first trick.
                self.phase = PHASE_PLAY
                self._legal = self._hands[seat][ALL]
            else:
                self._legal = BIDS_UP_TO[self.cards_per_player]
            return
        suit = action[6]  # "play Ts"
        hand = self._hands[seat]
        hand[ALL].remove(action)
        hand[suit].remove(action)
        trick = self._trick
        if not trick:
            self._leader = seat
            self._led = suit
            # The trick goes to the highest trump in it, else to the highest card of the suit
            # led: the strength of each card for this trump and suit led, looked up.
            self._strength = strength = self._strengths[suit]
            self._best, self._winner = strength[action], seat
        else:
            played = self._strength[action]
            if played > self._best:
                self._best, self._winner = played, seat
        trick.append(action)
        seat = self._next_seat[seat]
        if seat == self._leader:  # everyone has played
            self._end_trick()
            return
        self.current_player = seat
        # The next player's legal plays are known here: fill the cache that apply() emptied,
        # rather than have _legal_actions() find them again. Follow suit if able. The cache is
        # the hand's own list, not a copy: only the next _do changes it, after apply() has
        # emptied the cache, and legal_actions() hands out copies.
        hand = self._hands[seat]
        self._legal = hand[self._led] or hand[ALL]

    def _end_trick(self) -> None:
        winner = self._winner
        self.tricks_won[winner] += 1
        self._last_trick, self.last_trick_winner = (self._leader, self._trick), winner
        self._trick = []
        moves = self._hands[winner][ALL]
        if moves:
            self.current_player = winner  # the winner leads the next trick, with any card
            self._legal = moves
        else:
            self._end_deal()

    def _why_illegal(self, action: str, original: str) -> str:
        words = action.split()
        verb = words[0] if words else ""
        if self.phase == PHASE_BID:
            top = self.cards_per_player
            if verb == "play":
                why = "the bidding is not over: bid first"
            elif verb == "pass":
                why = f"nobody may pass: bid 0 to {top}"
            elif verb != "bid" or len(words) != 2:
                why = "bid with 'bid N'"
            elif not words[1].isdigit():
                why = f"a bid is a whole number of tricks from 0 to {top}"
            else:
                why = f"a bid is from 0 to {top} (the number of cards in your hand)"
            return self._generic_reason(original, why)
        seat = self.current_player
        assert seat is not None
        if verb == "bid":
            why = "the bidding is over: play a card"
        elif verb != "play" or len(words) != 2:
            why = "play a card with 'play C'"
        else:
            try:
                card = parse_card(original.split()[1])  # as typed, for the message
            except ValueError as exc:
                return self._generic_reason(original, str(exc))
            hand = self.hand(seat)
            if card not in hand:
                why = f"you do not hold {card}"
            else:
                same = [c for c in hand if c[1] == self._led]
                why = f"must follow {SUIT_NAMES[self._led]} (you hold {', '.join(same)})"
        return self._generic_reason(original, why)

    # -- what players see ---------------------------------------------------------------------

    def hand(self, seat: int) -> list[str]:
        """The cards in ``seat``'s hand, by suit (clubs, diamonds, hearts, spades) then rank."""
        return [CARD_OF[move] for move in self._hands[seat][ALL]]

    @property
    def trick(self) -> list[list[Any]]:
        """The trick in play: a fresh list of [seat, card] in play order."""
        return self._pairs(self._leader, self._trick)

    @property
    def last_trick(self) -> list[list[Any]] | None:
        """The last completed trick as [seat, card] in play order; None before the first."""
        return None if self._last_trick is None else self._pairs(*self._last_trick)

    def _pairs(self, leader: int, moves: list[str]) -> list[list[Any]]:
        # [seat, card] for each move of a trick led by `leader` (an unfinished trick has fewer
        # moves than seats: zip stops there; strict=False would cost a keyword call)
        return [[seat, CARD_OF[move]] for seat, move in zip(self._order[leader], moves)]  # noqa: B905

    @property
    def scores(self) -> list[int]:
        return self.totals[:]

    def observation(self, seat: int) -> dict[str, Any]:
        self._check_seat(seat)
        bids = self.bids
        total_vs = None
        if None not in bids:
            # RULES.md: once everyone has bid, over/under/exact is public.
            total = sum(cast("list[int]", bids))
            size = self.cards_per_player
            total_vs = "over" if total > size else "under" if total < size else "exact"
        order, last, last_deal = self._order, self._last_trick, self.last_deal
        return {
            "game": "merde",
            "seat": seat,
            "players": self.players,
            "hand": [CARD_OF[move] for move in self._hands[seat][ALL]],
            "current_player": self.current_player,
            "phase": self.phase,
            "deal": self.deal,
            "deals": self.deals,
            "cards_per_player": self.cards_per_player,
            "dealer": self.dealer,
            "turned": self.turned,
            "trump": self.trump,
            "bids": bids[:],
            "bids_total_vs_tricks": total_vs,
            "tricks_won": self.tricks_won[:],
            "hand_sizes": [len(hand[ALL]) for hand in self._hands],
            # the tricks as _pairs() spells them, inline: observation() is a hot path too
            "trick": [[s, CARD_OF[m]] for s, m in zip(order[self._leader], self._trick)],  # noqa: B905
            "last_trick": None
            if last is None
            else [[s, CARD_OF[m]] for s, m in zip(order[last[0]], last[1])],  # noqa: B905
            "last_trick_winner": self.last_trick_winner,
            "scores": self.totals[:],
            "last_deal": None
            if last_deal is None
            else {
                "total": last_deal["total"][:],
                "bids": last_deal["bids"][:],
                "tricks": last_deal["tricks"][:],
            },
            # every action of this deal so far, in order (all public): a world sampler needs
            # them, a seat that did not follow suit is only seen there
            "deal_history": [[s, a] for s, a in self.history[self._deal_start :]],
        }

    def _locations(self) -> dict[str, list[str]]:
        places = {f"hand:{seat}": self.hand(seat) for seat in range(self.players)}
        places["turned"] = [self.turned] if self.turned else []
        places["hidden:stock"] = self._stock[:]
        places["trick"] = [card for _, card in self.trick]
        elsewhere = {card for cards in places.values() for card in cards}
        places["played"] = [card for card in DECK if card not in elsewhere]  # this deal's tricks
        return places

    def __str__(self) -> str:
        trump = "no trump"
        if self.trump:
            assert self.turned is not None  # the trump is the turned card's suit
            trump = f"trump {SUIT_SYMBOLS[self.trump]} (turned {card_text(self.turned)})"
        lines = [
            f"Merde, {self.players} players: deal {self.deal} of {self.deals} "
            f"({self.cards_per_player} card{'s' if self.cards_per_player > 1 else ''} each), "
            f"dealer seat {self.dealer}, {trump}"
        ]
        for seat in range(self.players):
            hand = self.hand(seat)
            bid = self.bids[seat]
            lines.append(
                f"Seat {seat}: {cards_text(hand):<40} bid {'-' if bid is None else bid}, "
                f"tricks {self.tricks_won[seat]}, score {self.totals[seat]}"
            )
        if self.trick:
            lines.append("Trick: " + ", ".join(f"seat {s} {card_text(c)}" for s, c in self.trick))
        if self.current_player is None:
            lines.append(f"Game over. Scores {self.totals}, ranking {self.ranking}")
        else:
            doing = "to bid" if self.phase == PHASE_BID else "to play"
            lines.append(f"Seat {self.current_player} {doing}")
        return "\n".join(lines)


class Merde(Game[MerdeState]):
    id = "merde"
    name = "Merde"
    RULES_VERSION = 1  # see Game.RULES_VERSION
    min_players = 3
    max_players = 7
    default_players = 4
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option(
            "deals",
            None,
            "number of deals; deal i gives every player i cards (default by players: "
            "3: 15, 4: 13, 5: 10, 6: 8, 7: 7); deals x players must be at most 52",
            minimum=1,
        ),
        Option(
            "zero_bid",
            "ten",
            "score of a made zero bid: 'ten' (10 + 0, like any made bid) or "
            "'five_plus_tricks' (5 + the number of cards each player held in that deal)",
            choices=("ten", "five_plus_tricks"),
        ),
    )
    SUMMARY = (
        "Exact-bid trick taking (Oh Hell family) with a 52-card deck, 3 to 7 players. Deal i "
        "gives everyone i cards; the next card is turned for trump (no trump in the last deal). "
        "From the dealer's left, each player bids once the exact number of tricks they will "
        "take (0 to hand size, no pass, any total). The dealer's left leads; follow suit if "
        "able; highest trump, else highest card of the suit led, wins. Exactly the bid scores "
        "10 + bid, anything else 0. Highest total after the last deal wins."
    )
    state_class = MerdeState

    def _default(self, opt: Option, players: int) -> Any:
        if opt.name == "deals":
            return DEFAULT_DEALS[players]
        return opt.default

    def _check_options(self, values: dict[str, Any]) -> None:
        deals, players = values["deals"], values["players"]
        if deals * players > len(DECK):
            raise ValueError(
                f"option 'deals': {deals} deals for {players} players need {deals * players} "
                f"cards in the last deal; allowed: at most {len(DECK) // players} deals"
            )
