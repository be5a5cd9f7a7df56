"""Tierçon: a two-player game of the Belote / Klaberjass family with a stock (RULES.md).

Each deal gives both players nine cards; the next card is turned face up, names the trump
suit and is the last card of the stock to be drawn. The dealer's opponent leads; after each
trick, while the stock lasts, the winner draws and then the loser (after the first trick the
loser first cuts the stock). Combinations are announced on the first turn of the deal and only
the holder of the best one scores them; the king and queen of trumps make a marriage. Card
points and the last trick make 150 per deal. The game ends after a deal in which a player
reaches 501 points.

The stock is a list, top card first; the face-up card is kept apart (``_turned``) and is
drawn last. ``stock`` in the observation always counts the face-up card too.

Sampling worlds (:meth:`Tiercon.sample_state`, docs/rules/tiercon.md): the hidden cards lie in
slots, each seat's nine dealt cards, each card a seat drew (one slot per draw: when a card came
in decides which obligations it was under) and the face-down stock. The deal history says when
each played, exchanged or announced card was last in its hand and which cards a seat could not
hold at a trick (not following, not trumping, not beating once the stock is empty: judged
without the trump jack) or when it announced a sequence (not its neighbours); so each card may
have come in through an interval of its seat's slots (:func:`_plan`). :class:`_Chain` counts
and draws those deals uniformly; the deck is rebuilt (the same cut) and the history replayed.
"""

from __future__ import annotations

import copy
import random
from bisect import bisect_right
from enum import StrEnum
from functools import lru_cache
from itertools import accumulate
from math import comb
from typing import Any

from .core import SUIT_NAMES, SUITS, Game, State, card_text, cards_text, make_deck, shuffle
from .sampling import Inconsistent


class Phase(StrEnum):
    """Where a game of tiercon stands: playing, or cutting the stock; over at the end.
    The observation's ``phase``; a ``StrEnum``: it equals its text (``Phase.CUT == "cut"``)."""

    CUT = "cut"
    PLAY = "play"
    OVER = "over"


# Read as module names in the hot paths: an enum member read as an attribute costs ~80 ns in 3.11
PHASE_CUT, PHASE_PLAY, PHASE_OVER = Phase.CUT, Phase.PLAY, Phase.OVER


NATURAL = "789TJQKA"  # sequences use this order in every suit
PLAIN_ORDER = "789JQKTA"
# Decision (revised, RULES.md): the seed's trump order "7, 8, D, K, T 10, 9, V" is a
# transposition of its source's "7, 8, Q, K, 10, A, 9, J": in trumps, as in plain suits, the
# ace ranks above the ten (the Belote / Klaberjass order; trump card points rise with rank).
TRUMP_ORDER = "78QKTA9J"
PLAIN_POINTS = {"A": 11, "T": 10, "K": 3, "Q": 2, "J": 1}
# Decision (RULES.md): the seed's "Diamonds - 20 points" is the trump jack; so the deck holds
# 140 card points and, with the last trick, a deal is worth 150.
TRUMP_POINTS = {"J": 20, "9": 13, "A": 11, "T": 10, "K": 3, "Q": 2}
LAST_TRICK = 10
DEAL_POINTS = 150
TARGET = 501
HAND_SIZE = 9
MARRIAGE_POINTS = 20
FOUR_OF_A_KIND = {"J": 200, "Q": 100, "K": 100, "A": 100}

DECK: tuple[str, ...] = tuple(make_deck(NATURAL))  # suit-major, natural rank: also hand order
SORT_KEY = {card: i for i, card in enumerate(DECK)}
NATURAL_INDEX = {rank: i for i, rank in enumerate(NATURAL)}
PLAY = {card: "play " + card for card in DECK}
CUT = {k: f"cut {k}" for k in range(1, 32)}

# Per trump suit, precomputed once: the strength of each card (a higher strength beats a lower
# one of the same suit) and its card points.
STRENGTH: dict[str, dict[str, int]] = {}
POINTS: dict[str, dict[str, int]] = {}
for _trump in SUITS:
    STRENGTH[_trump] = {c: (TRUMP_ORDER if c[1] == _trump else PLAIN_ORDER).index(c[0]) for c in DECK}
    POINTS[_trump] = {c: (TRUMP_POINTS if c[1] == _trump else PLAIN_POINTS).get(c[0], 0) for c in DECK}
del _trump


def card_points(card: str, trump: str) -> int:
    """The card points of ``card`` when ``trump`` is the trump suit."""
    return POINTS[trump][card]


def beats(card: str, led: str, trump: str) -> bool:
    """Whether ``card``, played second, beats ``led``, the card led to the trick."""
    if card[1] == led[1]:
        return STRENGTH[trump][card] > STRENGTH[trump][led]
    return card[1] == trump


def round_count(points: int) -> int:
    """The counting player's figure rounded to ten: a last digit of 5 or less rounds down,
    6 or more rounds up (RULES.md: "135 is rounded to 130")."""
    low = points - points % 10
    return low + 10 if points % 10 >= 6 else low


def count_cards(tricks: list[int], points: list[int], dealer: int) -> list[int]:
    """The card points each seat scores for a deal, from the tricks each took and the card
    points (with the last trick) each took.

    Decision (RULES.md): the player with fewer tricks (on equal tricks, the dealer's opponent)
    counts their points and rounds them to ten; the other scores 150 minus that figure.
    """
    counter = 1 - dealer  # on equal tricks, the dealer's opponent
    if tricks[0] != tricks[1]:
        counter = 0 if tricks[0] < tricks[1] else 1
    cards = [0, 0]
    cards[counter] = round_count(points[counter])
    cards[1 - counter] = DEAL_POINTS - cards[counter]
    return cards


def sequence_points(length: int) -> int:
    """Points of a sequence of ``length`` cards: tierce 20, fifty 50, five to eight 100."""
    return 20 if length == 3 else 50 if length == 4 else 100


def combination_points(cards: list[str]) -> int:
    """Points of an announced combination (a sequence, or four of a kind)."""
    if cards[0][0] == cards[-1][0]:
        return FOUR_OF_A_KIND[cards[0][0]]
    return sequence_points(len(cards))


class TierconState(State):
    """The play of one game of Tierçon. See the module docstring and RULES.md."""

    FULL_DECK = DECK
    _shared_tables = frozenset({"_strength", "_points"})  # STRENGTH's and POINTS': clone() shares them

    def __init__(self, game: Game[Any], seed: int | None, decks: Any, dealer: int | None, **kw: Any) -> None:
        if kw:
            raise ValueError(f"unknown argument(s) for a tiercon game: {', '.join(sorted(kw))}")
        State.__init__(self, game, seed, decks, dealer)
        self._totals = [0, 0]
        self._deal_no = 0
        self._last_deal: dict[str, list[int]] | None = None
        self._start_deal(self.first_dealer)

    # -- the deal ------------------------------------------------------------------------------

    def _start_deal(self, dealer: int) -> None:
        deck = self._next_deck()
        self._deal_no += 1
        self.dealer = dealer
        opponent = 1 - dealer
        # Nine cards each, one at a time, starting with the dealer's opponent: the dealer
        # receives the last card. The next card is turned face up and names the trump suit.
        self._hands: list[list[str]] = [[], []]
        self._hands[opponent] = sorted(deck[0:18:2], key=SORT_KEY.__getitem__)
        self._hands[dealer] = sorted(deck[1:18:2], key=SORT_KEY.__getitem__)
        self._turned: str | None = deck[18]
        self._trump_card = deck[18]  # the card turned up at the deal: seen by both, for good
        self._deal_start = len(self.history)  # where this deal's actions begin in the history
        self.trump = deck[18][1]
        self._stock = deck[19:]  # face down, top first; the face-up card is drawn after them
        self._strength = STRENGTH[self.trump]
        self._points = POINTS[self.trump]
        self._jack = "J" + self.trump  # the trump jack, never forced (RULES.md)
        self._trick: list[tuple[int, str]] = []
        self._tricks: list[tuple[tuple[tuple[int, str], ...], int]] = []  # (cards, winner)
        self._won: list[list[str]] = [[], []]
        self._tricks_won = [0, 0]
        self._played = [False, False]  # has the seat played a card this deal?
        # announcements: (seat, action, points, comparison key), in the order made
        self._declared: list[tuple[int, str, int, tuple[int, int, int, bool, int]]] = []
        self._in_sequence: list[set[str]] = [set(), set()]
        self._combination_winner: int | None = None
        self._combination_points = [0, 0]
        self._marriage: int | None = None
        self._exchanged_by: int | None = None
        self._cut: int | None = None
        # Decision (ours): cards shown to all are tracked per deal; a new deal hides them again.
        self._revealed = set()
        self.phase = PHASE_PLAY
        self._leader = opponent
        self.current_player = opponent  # the dealer's opponent leads the first trick

    def _stock_count(self) -> int:
        return len(self._stock) + (self._turned is not None)

    def _draw(self, seat: int) -> None:
        if self._stock:
            card = self._stock.pop(0)
        else:
            turned = self._turned
            assert turned is not None
            card, self._turned = turned, None
            self._revealed.add(card)  # everyone saw the face-up card go into this hand
        hand = self._hands[seat]
        hand.append(card)
        hand.sort(key=SORT_KEY.__getitem__)

    # -- legal actions ---------------------------------------------------------------------------

    def _legal_actions(self) -> list[str]:
        seat = self.current_player
        assert seat is not None
        if self.phase == PHASE_CUT:
            return [CUT[k] for k in range(1, len(self._stock))]
        actions: list[str] = []
        if not self._played[seat]:
            # Combinations only on the first turn of the deal (nine cards), before playing.
            # Decision (ours): at any point of that turn, before or after the marriage or the
            # exchange (the card taken by the exchange may complete a sequence).
            actions.extend(self._declarable(seat))
        if self._can_marry(seat):
            actions.append("marriage")
        if self._can_exchange(seat):
            actions.append("exchange")
        actions.extend(PLAY[c] for c in self._playable(seat))
        return actions

    def _playable(self, seat: int) -> list[str]:
        """The cards ``seat`` may play now, by the obligations of RULES.md."""
        hand = self._hands[seat]
        if not self._trick:
            return hand  # the leader may lead any card
        led = self._trick[0][1]
        jack = self._jack
        if jack not in hand or len(hand) == 1:
            return self._obliged(hand, led)  # a hand holding nothing but the trump jack plays it
        # Decision (revised, RULES.md): the trump jack is never forced. The obligations are
        # judged as if the jack were not in the hand; the jack itself may be played whenever
        # the ordinary obligations (jack included) would allow it. So a jack that is the only
        # trump need not answer a trump lead nor trump a plain suit, and a trump lead that only
        # the jack could beat may be answered with a lower trump.
        allowed = self._obliged([c for c in hand if c != jack], led)
        if jack in self._obliged(hand, led):
            allowed = [c for c in hand if c == jack or c in allowed]  # hand order
        return allowed

    def _obliged(self, hand: list[str], led: str) -> list[str]:
        """The cards of ``hand`` the ordinary obligations allow in answer to ``led``."""
        suit = led[1]
        same = [c for c in hand if c[1] == suit]
        if same and not self._stock_count():
            # Once the stock is empty: follow suit and beat the led card if able; holding the
            # suit but unable to beat, any card of the suit. (So a trump lead must be
            # overtrumped if possible.)
            strength = self._strength
            higher = [c for c in same if strength[c] > strength[led]]
            return higher or same
        if same:
            return same
        # Void in the suit led: a trump if able, otherwise any card. Decision (ours): RULES.md
        # asks only for "a trump" here; any trump beats a plain-suit lead, so any trump will do
        # (there is no overtrump obligation on a plain-suit lead).
        trump = self.trump
        trumps = [c for c in hand if c[1] == trump]
        return trumps or hand

    def _declarable(self, seat: int) -> list[str]:
        """The combinations ``seat`` may still announce: every maximal run of three or more in a
        suit (written whole, ascending) and every four of a kind of J, Q, K, A."""
        hand = self._hands[seat]
        done = {a for s, a, _, _ in self._declared if s == seat}
        used = self._in_sequence[seat]
        found: list[str] = []
        for suit in SUITS:
            run: list[str] = []
            for rank in NATURAL + "x":  # "x" closes the last run
                card = rank + suit
                if card in hand:
                    run.append(card)
                    continue
                # Decision (ours): a run sharing a card with a sequence already announced (it
                # can happen after an exchange) cannot be announced: "not in two sequences",
                # and a sequence is announced at its full length only.
                if len(run) >= 3 and not used.intersection(run):
                    found.append("declare " + " ".join(run))
                run = []
        for rank in "JQKA":
            if all(rank + s in hand for s in SUITS):
                found.append("declare " + " ".join(rank + s for s in SUITS))
        return [a for a in found if a not in done]

    def _can_marry(self, seat: int) -> bool:
        hand = self._hands[seat]
        trump = self.trump
        return self._marriage is None and "K" + trump in hand and "Q" + trump in hand

    def _can_exchange(self, seat: int) -> bool:
        return (
            self._exchanged_by is None and self._stock_count() >= 2 and "7" + self.trump in self._hands[seat]
        )

    # -- doing ---------------------------------------------------------------------------------

    def _do(self, action: str) -> None:
        seat = self.current_player
        assert seat is not None
        if action.startswith("play "):
            self._play(seat, action[5:])
        elif action.startswith("cut "):
            self._do_cut(int(action[4:]))
        elif action.startswith("declare "):
            self._declare(seat, action)
        elif action == "marriage":
            self._marriage = seat
            self._revealed.update(("K" + self.trump, "Q" + self.trump))
        elif action == "exchange":
            # The seven of trumps becomes the face-up card; the face-up card goes to the hand.
            seven = "7" + self.trump
            turned = self._turned
            assert turned is not None
            hand = self._hands[seat]
            hand.remove(seven)
            hand.append(turned)
            hand.sort(key=SORT_KEY.__getitem__)
            self._revealed.add(turned)
            self._turned = seven
            self._exchanged_by = seat
        else:  # pragma: no cover - apply() only passes legal actions
            raise AssertionError(action)

    def _declare(self, seat: int, action: str) -> None:
        cards = action.split()[1:]
        points = combination_points(cards)
        four_of_a_kind = cards[0][0] == cards[-1][0]
        # Best combination: more points; more cards; higher top card in natural order (four of
        # a kind: its rank); a combination in the trump suit; the one announced first.
        # Decision (ours): a four of a kind is in no suit for the trump criterion (it never
        # gets that far: no two four-of-a-kinds or a four-of-a-kind and a sequence can tie on
        # points, cards and top card).
        key = (
            points,
            len(cards),
            NATURAL_INDEX[cards[-1][0]],
            not four_of_a_kind and cards[0][1] == self.trump,
            -len(self._declared),
        )
        self._declared.append((seat, action, points, key))
        if not four_of_a_kind:
            self._in_sequence[seat].update(cards)
        self._revealed.update(cards)  # announced cards are shown to the opponent

    def _play(self, seat: int, card: str) -> None:
        self._hands[seat].remove(card)
        self._played[seat] = True
        trick = self._trick
        trick.append((seat, card))
        if len(trick) == 1:
            self.current_player = 1 - seat
            return
        (first, led), (second, answer) = trick
        winner = second if beats(answer, led, self.trump) else first
        loser = 1 - winner
        self._won[winner] += (led, answer)
        self._tricks_won[winner] += 1
        self._tricks.append((tuple(trick), winner))  # a tuple once done, which clone() shares
        self._trick = []
        self._leader = winner
        if len(self._tricks) == 1:
            self._compare_combinations()  # both players have played to the first trick
        if not self._hands[winner]:
            self._end_deal(winner)
            return
        if self._stock_count():
            if len(self._tricks) == 1 and len(self._stock) >= 2:
                # After the first trick the loser cuts the stock before anyone draws.
                self.phase = PHASE_CUT
                self.current_player = loser
                return
            self._draw(winner)
            self._draw(loser)
        self.current_player = winner

    def _do_cut(self, k: int) -> None:
        # The top k face-down cards go beneath the others; the face-up card stays last.
        self._stock = self._stock[k:] + self._stock[:k]
        self._cut = k
        self.phase = PHASE_PLAY
        winner = self._leader
        self._draw(winner)
        self._draw(1 - winner)
        self.current_player = winner

    def _compare_combinations(self) -> None:
        """Only the holder of the best combination scores, and scores all they announced."""
        if not self._declared:
            return
        # If only one player announced, that player holds the best combination.
        best = max(self._declared, key=lambda d: d[3])
        holder = best[0]
        self._combination_winner = holder
        self._combination_points[holder] = sum(d[2] for d in self._declared if d[0] == holder)

    def _end_deal(self, last_winner: int) -> None:
        points = self._points
        counted = [sum(points[c] for c in self._won[s]) for s in (0, 1)]
        counted[last_winner] += LAST_TRICK
        cards = count_cards(self._tricks_won, counted, self.dealer)
        # Then each adds the combinations and the marriage they are credited with. A marriage
        # neither beats nor is beaten by combinations: it always scores.
        marriage = [MARRIAGE_POINTS if self._marriage == s else 0 for s in (0, 1)]
        combinations = list(self._combination_points)
        total = [cards[s] + combinations[s] + marriage[s] for s in (0, 1)]
        for s in (0, 1):
            self._totals[s] += total[s]
        self._last_deal = {
            "total": total,
            "cards": cards,
            "combinations": combinations,
            "marriage": marriage,
        }
        if max(self._totals) >= TARGET:
            # The game ends; the higher total wins, equal totals draw (ranking from scores).
            self.phase = PHASE_OVER
            self._game_over()
            return
        # Decision (RULES.md): the taker of the last trick deals the next deal.
        self._start_deal(last_winner)

    # -- views ---------------------------------------------------------------------------------

    @property
    def scores(self) -> list[int]:
        return list(self._totals)

    def observation(self, seat: int) -> dict[str, Any]:
        self._check_seat(seat)
        stock = self._stock_count()
        # Decision (RULES.md): every completed trick of the deal is shown while the stock holds
        # at least four cards (the face-up one included); after that, only the last one.
        shown = self._tricks if stock >= 4 else self._tricks[-1:]
        return {
            "game": "tiercon",
            "seat": seat,
            "players": 2,
            "hand": list(self._hands[seat]),
            "current_player": self.current_player,
            "phase": self.phase,
            "deal": self._deal_no,
            "dealer": self.dealer,
            "trump": self.trump,
            "scores": list(self._totals),
            "target": TARGET,
            "leader": self._leader,
            "trick": [[s, c] for s, c in self._trick],
            "stock": stock,
            "turned": self._turned,
            "cut": self._cut,
            "tricks": [{"cards": [[s, c] for s, c in t], "winner": w} for t, w in shown],
            "tricks_won": list(self._tricks_won),
            "opponent_hand_size": len(self._hands[1 - seat]),
            "declared": [[s, a, p] for s, a, p, _ in self._declared],
            "combination_winner": self._combination_winner,
            "combination_points": list(self._combination_points),
            "marriage": [] if self._marriage is None else [self._marriage],
            "exchange_done": self._exchanged_by is not None,
            "last_deal": None
            if self._last_deal is None
            else {k: list(v) for k, v in self._last_deal.items()},
            "trump_card": self._trump_card,
            "deal_history": [[s, a] for s, a in self.history[self._deal_start :]],
        }

    def _resume(self, deal: int, totals: list[int], last_deal: dict[str, list[int]] | None) -> None:
        """The private construction path of :meth:`Tiercon.sample_state`: this fresh state (its
        first deal dealt from the caller's deck, nothing played yet) becomes deal ``deal`` of a
        game whose totals were ``totals`` before it and whose previous deal scored ``last_deal``.
        Its ``history`` then holds this deal's actions only (earlier deals are not replayed)."""
        self._deal_no = deal
        self._totals = list(totals)
        self._last_deal = None if last_deal is None else {k: list(v) for k, v in last_deal.items()}

    def _locations(self) -> dict[str, list[str]]:
        return {
            "hand:0": list(self._hands[0]),
            "hand:1": list(self._hands[1]),
            "hidden:stock": list(self._stock),
            "turned": [self._turned] if self._turned is not None else [],
            "trick": [c for _, c in self._trick],
            "won:0": list(self._won[0]),
            "won:1": list(self._won[1]),
        }

    def _why_illegal(self, action: str, original: str) -> str:
        seat = self.current_player
        assert seat is not None
        words = action.split()
        verb = words[0] if words else ""
        trump_name = SUIT_NAMES[self.trump]

        def reason(why: str) -> str:
            return self._generic_reason(original, why)

        if self.phase == PHASE_CUT:
            if verb == "cut":
                m = len(self._stock)
                return reason(f"cut between 1 and {m - 1} cards (the stock has {m} face down)")
            return reason("the loser of the first trick must cut the stock first")
        if verb == "cut":
            return reason("the stock is cut only by the loser of the first trick, right after it")
        hand = self._hands[seat]
        if verb == "play":
            if len(words) != 2 or words[1] not in SORT_KEY:
                return reason("say 'play' and one card of the 32-card deck, like 'play Th'")
            if words[1] not in hand:
                return reason(f"you do not hold {words[1]}")
            return reason(self._obligation())
        if verb == "declare":
            if self._played[seat]:
                return reason(
                    "combinations are announced only on your first turn of the deal, before playing a card"
                )
            if any(s == seat and a == action for s, a, _, _ in self._declared):
                return reason(f"you already announced {action[8:]}")
            options = self._declarable(seat)
            if options:
                return reason(
                    "not a combination you may announce (a sequence is written ascending at its"
                    " full length, a four of a kind in suit order c d h s)"
                )
            return reason("you hold no combination to announce")
        if verb == "marriage":
            if self._marriage is not None:
                return reason("the marriage was already announced this deal")
            return reason(f"you do not hold the king and queen of trumps ({trump_name})")
        if verb == "exchange":
            if self._exchanged_by is not None:
                return reason("the seven of trumps was already exchanged this deal")
            if "7" + self.trump not in hand:
                return reason(f"you do not hold the seven of trumps (7{self.trump})")
            return reason(
                f"the stock must hold at least 2 cards to exchange (it holds {self._stock_count()})"
            )
        return reason(f"unknown action {verb!r}; tiercon actions are declare, marriage, exchange, cut, play")

    def _obligation(self) -> str:
        """Why a held card may not be played now (the second player's obligations)."""
        seat = self.current_player
        assert seat is not None
        allowed = self._playable(seat)
        held = ", ".join(allowed)
        led = self._trick[0][1]
        suit = SUIT_NAMES[led[1]]
        if allowed[0][1] == led[1]:
            if not self._stock_count() and all(self._strength[c] > self._strength[led] for c in allowed):
                return f"the stock is empty: must follow {suit} and beat {led} (you hold {held})"
            return f"must follow {suit} (you hold {held})"
        return f"void in {suit}, must play a trump (you hold {held})"

    def __str__(self) -> str:
        trump = self.trump
        lines = [
            f"Tierçon (tiercon), deal {self._deal_no}: dealer seat {self.dealer}, "
            f"trump {SUIT_NAMES[trump]} {card_text('7' + trump)[-1]}"
        ]
        if self._turned is not None:
            lines.append(f"Stock: {len(self._stock)} face down, then {card_text(self._turned)} face up")
        else:
            lines.append("Stock: empty")
        for s in (0, 1):
            tag = " (dealer)" if s == self.dealer else ""
            lines.append(
                f"Seat {s}{tag}: {cards_text(self._hands[s])}   "
                f"tricks {self._tricks_won[s]}, score {self._totals[s]}"
            )
        for s, action, points, _ in self._declared:
            lines.append(f"Announced by seat {s}: {cards_text(action.split()[1:])} ({points})")
        if self._marriage is not None:
            lines.append(f"Marriage announced by seat {self._marriage} (20)")
        if self._trick:
            lines.append("Trick: " + ", ".join(f"seat {s} {card_text(c)}" for s, c in self._trick))
        elif self._tricks:
            cards, winner = self._tricks[-1]
            played = ", ".join(f"seat {s} {card_text(c)}" for s, c in cards)
            lines.append(f"Last trick: {played}, won by seat {winner}")
        if self._last_deal is not None:
            lines.append(f"Last deal: {self._last_deal['total'][0]} / {self._last_deal['total'][1]}")
        if self.current_player is None:
            lines.append(f"Game over. Scores: {self._totals[0]} / {self._totals[1]}")
        else:
            doing = "to cut the stock" if self.phase == PHASE_CUT else "to play"
            lines.append(f"Scores: {self._totals[0]} / {self._totals[1]}; seat {self.current_player} {doing}")
        return "\n".join(lines)


# -- sampling worlds (Tiercon.sample_state) ---------------------------------------------------

SUIT_CARDS = {suit: [c for c in DECK if c[1] == suit] for suit in SUITS}
HELD = 1 << 30  # the "exit" of a card still held: after every action of the deal
OBSERVATION_KEYS = frozenset((
    "game", "seat", "players", "hand", "current_player", "phase", "deal", "dealer", "trump",
    "scores", "target", "leader", "trick", "stock", "turned", "cut", "tricks", "tricks_won",
    "opponent_hand_size", "declared", "combination_winner", "combination_points", "marriage",
    "exchange_done", "last_deal", "trump_card", "deal_history",
))  # fmt: skip


@lru_cache(maxsize=1024)
def _forbidden(led: str, card: str, stock_left: bool, trump: str) -> frozenset[str]:
    """The cards the second player to a trick held none of, having answered ``led`` with
    ``card`` (RULES.md's obligations; ``stock_left``: the stock still held cards). The trump
    jack is never forced, so it is never ruled out: the obligations are judged without it."""
    jack = "J" + trump
    suit = led[1]
    if card[1] == suit:
        if stock_left or beats(card, led, trump):
            return frozenset()  # following suit (and beating, once the stock is empty) is free
        strength = STRENGTH[trump]  # followed without beating: nothing of the suit beat the lead
        return frozenset(c for c in SUIT_CARDS[suit] if strength[c] > strength[led] and c != jack)
    out = {c for c in SUIT_CARDS[suit] if c != jack}  # did not follow: void in the suit led
    if card[1] != trump:
        out.update(c for c in SUIT_CARDS[trump] if c != jack)  # nor trumped: no trump either
    return frozenset(out)


def _action(item: Any) -> tuple[int, str, list[str]]:
    """A ``deal_history`` entry as (seat, verb, arguments); ValueError when it is not one."""
    if not (
        isinstance(item, list | tuple) and len(item) == 2 and item[0] in (0, 1) and isinstance(item[1], str)
    ):
        raise ValueError(f"not a tiercon observation: deal_history entry {item!r} is not [seat, action]")
    verb, *args = item[1].split() or [""]
    cards_ok = all(a in SORT_KEY for a in args)
    if not (
        (verb == "play" and len(args) == 1 and cards_ok)
        or (verb == "declare" and len(args) >= 3 and cards_ok)
        or (verb == "cut" and len(args) == 1 and args[0].isdigit())
        or (verb in ("marriage", "exchange") and not args)
    ):
        raise ValueError(f"not a tiercon observation: unknown action {item[1]!r} in deal_history")
    return item[0], verb, args


class _Chain:
    """Uniform draws of the cards that went through one seat's hand (and, for the seat the
    observer cannot see, of the face-down stock) into that seat's slots: its ``first`` dealt
    cards (slot 0), the cards it drew one at a time (slots 1..k, in order) and the stock.

    Each card is given as ``(card, lo, hi, stock)``: it may lie in the seat's slots ``lo..hi``
    (an interval: a card must have come in before the seat played or showed it, and after the
    last obligation that rules it out while it was held; ``hi < lo``: none) or, if ``stock``,
    in the stock. The deals are counted, once, by walking the draws from the last to the first
    with the pool of cards each could take, as counts per kind of card (its ``lo``, and whether
    it may lie in the stock): the cards a pool holds are interchangeable for what is left, so
    the count of a pool is shared by all the deals that reach it. A draw walks the same way,
    picking at each draw a kind with the probability of the deals that choice leaves and a
    card of that kind at random: every consistent deal (sets for slot 0 and the stock, one
    card per draw) is equally likely. (:class:`atout.games.sampling.HiddenDeal` would count
    the same deals, but with every single-card draw slot's room in its state it takes tens of
    milliseconds per position late in a deal, and milliseconds per draw.)
    """

    __slots__ = ("count", "first", "fixed", "kinds", "memo", "steps", "stock_size", "tables")

    def __init__(self, cards: list[tuple[str, int, int, bool]], draws: int, first: int, stock: int) -> None:
        self.first = first
        self.stock_size = stock
        kinds: dict[tuple[int, bool], int] = {}
        # steps[i]: the cards whose last possible slot is draw i, by kind; fixed: those that may
        # lie only in slot 0 or the stock: (slot 0 only, either, stock only)
        self.steps: list[list[list[str]]] = [[] for _ in range(draws + 1)]
        self.fixed: tuple[list[str], list[str], list[str]] = ([], [], [])
        self.kinds: list[tuple[int, bool]] = []
        for card, lo, hi, may_stock in cards:
            if hi < lo or (hi == 0 and lo == 0):
                if hi >= lo:  # slot 0, and maybe the stock
                    self.fixed[1 if may_stock else 0].append(card)
                elif may_stock:
                    self.fixed[2].append(card)
                else:
                    raise Inconsistent(f"{card} cannot have come into its hand at any point")
                continue
            kind = kinds.get((lo, may_stock))
            if kind is None:
                kind = kinds[lo, may_stock] = len(self.kinds)
                self.kinds.append((lo, may_stock))
                for step in self.steps:
                    step.append([])
            self.steps[hi][kind].append(card)
        self.memo: dict[tuple[int, tuple[int, ...]], int] = {}
        self.tables: dict[
            tuple[int, tuple[int, ...]], tuple[list[tuple[int, tuple[int, ...]]], list[int]]
        ] = {}
        self.count = self._count(draws, (0,) * (len(self.kinds) + 1))
        if not self.count:
            raise Inconsistent("no deal of the hidden cards fits what was played")

    def _choices(self, i: int, pool: tuple[int, ...]) -> list[tuple[int, tuple[int, ...], int]]:
        """At draw ``i`` with ``pool`` (counts per kind, then the cards bound for the stock, the
        cards whose last slot is ``i`` not yet in): (kind, pool after, weight) of each choice."""
        entering = self.steps[i]
        counts = [n + len(entering[k]) for k, n in enumerate(pool[:-1])]
        out = []
        for kind, (lo, _) in enumerate(self.kinds):
            if lo > i or not counts[kind]:
                continue
            after = counts.copy()
            after[kind] -= 1
            stocked = pool[-1]
            for other, (other_lo, may_stock) in enumerate(self.kinds):
                if other_lo == i and after[other]:  # no earlier draw can take them: the stock
                    if not may_stock:
                        break
                    stocked += after[other]
                    after[other] = 0
            else:
                left = (*after, stocked)
                weight = counts[kind] * self._count(i - 1, left)
                if weight:
                    out.append((kind, left, weight))
        return out

    def _count(self, i: int, pool: tuple[int, ...]) -> int:
        key = (i, pool)
        found = self.memo.get(key)
        if found is None:
            found = self._final(pool) if i == 0 else sum(weight for _, _, weight in self._choices(i, pool))
            self.memo[key] = found
        return found

    def _final(self, pool: tuple[int, ...]) -> int:
        """The ways to split what is left between slot 0 and the stock."""
        only0, either, stocked = len(self.fixed[0]), len(self.fixed[1]), pool[-1] + len(self.fixed[2])
        for kind, (_, may_stock) in enumerate(self.kinds):  # every kind left has lo == 0
            if may_stock:
                either += pool[kind]
            else:
                only0 += pool[kind]
        need = self.first - only0
        if need < 0 or need > either or either - need + stocked != self.stock_size:
            return 0
        return comb(either, need)

    def sample(self, rng: random.Random) -> tuple[list[str], list[str], list[str]]:
        """One consistent deal, uniformly: slot 0's cards, the drawn cards in order, the
        stock's cards (slot 0 and the stock in a random order)."""
        draws = len(self.steps) - 1
        pool: list[list[str]] = [[] for _ in self.kinds]
        counts: tuple[int, ...] = (0,) * (len(self.kinds) + 1)
        drawn: list[str] = []
        stocked: list[str] = list(self.fixed[2])
        for i in range(draws, 0, -1):
            for kind, cards in enumerate(self.steps[i]):
                pool[kind].extend(cards)
            key = (i, counts)
            table = self.tables.get(key)
            if table is None:  # the choices at this draw and pool, with their running weights
                choices = self._choices(i, counts)
                total = list(accumulate(weight for _, _, weight in choices))
                table = self.tables[key] = ([(kind, left) for kind, left, _ in choices], total)
            kind, counts = table[0][bisect_right(table[1], rng.randrange(table[1][-1]))]
            cards = pool[kind]
            drawn.append(cards.pop(rng.randrange(len(cards))))
            for other, (lo, _) in enumerate(self.kinds):
                if lo == i and pool[other]:
                    stocked += pool[other]
                    pool[other] = []
        drawn.reverse()
        first = list(self.fixed[0])
        either = list(self.fixed[1])
        for kind, (_, may_stock) in enumerate(self.kinds):
            (either if may_stock else first).extend(pool[kind])
        shuffle(either, rng)
        need = self.first - len(first)
        first += either[:need]
        stocked += either[need:]
        shuffle(first, rng)
        shuffle(stocked, rng)
        return first, drawn, stocked


class _Plan:
    """What sampling one observation needs, worked out once: the deck's known cards, and per
    seat a :class:`_Chain` and the deck positions of its slots (slot 0, the draws, the stock).
    ``checked``: an observation whose replay was found equal to it."""

    __slots__ = ("chains", "checked", "deck")

    def __init__(self, deck: list[str], chains: list[tuple[_Chain, list[int], list[int], list[int]]]) -> None:
        self.deck = deck
        self.chains = chains
        self.checked: dict[str, Any] | None = None

    @property
    def count(self) -> int:
        """The number of consistent deals (the observer's own timeline included)."""
        return self.chains[0][0].count * self.chains[1][0].count

    def fill(self, rng: random.Random) -> list[str]:
        deck = list(self.deck)
        for chain, first, draws, stock in self.chains:
            dealt, drawn, stocked = chain.sample(rng)
            for cards, where in ((dealt, first), (drawn, draws), (stocked, stock)):
                for position, card in zip(where, cards, strict=True):
                    deck[position] = card
        return deck


@lru_cache(maxsize=64)
def _plan(seat: int, dealer: int, trump_card: str, hand: tuple[str, ...], history: tuple[Any, ...]) -> _Plan:
    """The slots of one position's hidden cards and the constraints its deal history implies.

    Slots: each seat's nine dealt cards, each card a seat drew from the face-down stock (one
    slot per draw: when a card came in decides which obligations it was under) and the
    face-down cards still in the stock. The face-up card is known (``trump_card``); the seven
    of trumps taken for it, and the face-up card the last loser draws, are where they were seen.

    Every card that went through a seat's hand (played by it, exchanged by it, held now by the
    observer, announced by it) lies in one of that seat's slots; a card nobody has seen lies in
    the other seat's slots or in the stock. A card may lie in a slot that it entered from (the
    deal: before every action; a draw: after the action that drew it) when it was in that
    hand at every action that shows it there (played it, announced it, exchanged it) and
    none of the seat's obligations while it was held rules it out: the second player to a trick
    who did not follow suit held none of the suit (nor a trump, if it did not trump), one who
    followed without beating once the stock was empty held no higher card of the suit (the
    trump jack never counts: it is never forced), and a sequence is announced whole, so its
    neighbours in the suit were not held when it was announced.
    """
    trump = trump_card[1]
    seven = "7" + trump
    other = 1 - seat
    owners: list[int] = []  # per slot: the seat whose hand it fills (-1: the stock)
    entries: list[int] = []  # per slot: the action after which its cards were in the hand
    positions: list[list[int]] = []  # per slot: its positions in the deck
    first = 1 - dealer  # dealt the first card
    for s in (0, 1):
        owners.append(s)
        entries.append(-1)
        positions.append(list(range(0 if s == first else 1, 18, 2)))
    exits: dict[str, tuple[int, int]] = {}  # card -> (seat, action at which it left the hand)
    reveals: dict[str, list[tuple[int, int]]] = {}  # card -> [(seat, action showing it held)]
    rules: list[list[tuple[int, frozenset[str]]]] = [[], []]  # per seat: (action, not held)
    draws: list[tuple[int, int]] = []  # face-down draws in stock order (after the cut): (seat, action)
    trick: list[tuple[int, str]] = []
    tricks = 0
    stock = 14  # the face-up card included
    first_winner = 0
    cut: int | None = None
    exchanged = False

    def draw(s: int, t: int) -> None:
        nonlocal stock
        if stock > 1:
            draws.append((s, t))  # the face-up card (stock == 1) is known: no slot
        stock -= 1

    for t, item in enumerate(history):
        s, verb, args = _action(item)
        if verb == "play":
            card = args[0]
            if trick:
                rule = _forbidden(trick[0][1], card, stock > 0, trump)
                if rule:
                    rules[s].append((t, rule))
            if card != trump_card and not (exchanged and card == seven):
                if card in exits:
                    raise ValueError(f"not a tiercon observation: {card} is played twice in deal_history")
                exits[card] = (s, t)
            trick.append((s, card))
            if len(trick) == 2:
                (a, led), (b, answer) = trick
                winner = b if beats(answer, led, trump) else a
                trick = []
                tricks += 1
                if tricks == 1:
                    first_winner = winner  # both draw after the cut
                elif stock:
                    draw(winner, t)
                    draw(1 - winner, t)
        elif verb == "cut":
            cut = int(args[0])
            if not 1 <= cut <= 12 or tricks != 1 or draws:
                raise ValueError(f"not a tiercon observation: 'cut {cut}' where no such cut is possible")
            draw(first_winner, t)
            draw(1 - first_winner, t)
        elif verb == "declare":
            for card in args:
                reveals.setdefault(card, []).append((s, t))
            if args[0][0] != args[-1][0]:  # a sequence: announced whole, its neighbours not held
                low, high = NATURAL.index(args[0][0]) - 1, NATURAL.index(args[-1][0]) + 1
                rule = frozenset(NATURAL[i] + args[0][1] for i in (low, high) if 0 <= i < len(NATURAL))
                if rule:
                    rules[s].append((t, rule))
        elif verb == "marriage":
            for card in ("K" + trump, "Q" + trump):
                reveals.setdefault(card, []).append((s, t))
        else:  # exchange: the seven leaves the hand, the face-up card comes in (both seen)
            exchanged = True
            exits[seven] = (s, t)
    for s, t in draws:
        owners.append(s)
        entries.append(t)
        positions.append([19 + (len(positions) - 2 + (cut or 0)) % 13])
    stock_slot = len(owners)
    owners.append(-1)
    entries.append(-1)
    positions.append([19 + (q + (cut or 0)) % 13 for q in range(len(draws), 13)])

    held = set(hand)
    parts: tuple[list[tuple[str, int, int, bool]], list[tuple[str, int, int, bool]]] = ([], [])
    mine = (
        [s for s in range(len(owners)) if owners[s] == seat],
        [s for s in range(len(owners)) if owners[s] == other],
    )
    for card in DECK:
        if card == trump_card:
            continue
        owner, leaves = exits.get(card, (seat if card in held else other, HELD))
        shown = reveals.get(card, ())
        if any(s != owner for s, _ in shown) or any(t > leaves for _, t in shown):
            raise Inconsistent(f"{card} was announced by a seat that cannot have held it then")
        # In the hand from the action after its slot's entry to the action it left at: so it
        # came in before it left and before it was shown, and after the last obligation of the
        # seat that rules it out while held (the slots are in time order: an interval).
        last = min([leaves, *(t for _, t in shown)])
        since = max((t for t, rule in rules[owner] if t < leaves and card in rule), default=-1)
        slots = mine[owner != seat]
        places = [i for i, slot in enumerate(slots) if since <= entries[slot] < last]
        lo, hi = (places[0], places[-1]) if places else (1, 0)
        assert places == list(range(lo, hi + 1)), (card, places)  # an interval, as said
        parts[owner != seat].append((card, lo, hi, card not in exits and card not in held and not shown))

    chains: list[tuple[_Chain, list[int], list[int], list[int]]] = []
    for part, slots, owner in zip(parts, mine, (seat, other), strict=True):
        face_down = positions[stock_slot] if owner == other else []
        chain = _Chain(part, len(slots) - 1, 9, len(face_down))
        chains.append((chain, positions[slots[0]], [positions[slot][0] for slot in slots[1:]], face_down))
    deck = [""] * 32
    deck[18] = trump_card
    return _Plan(deck, chains)


class Tiercon(Game[TierconState]):
    id = "tiercon"
    name = "Tierçon"
    # See Game.RULES_VERSION. 2: the trump ace ranks above the ten; the trump jack is never forced.
    RULES_VERSION = 2
    min_players = 2
    max_players = 2
    default_players = 2
    OPTIONS = ()
    SUMMARY = (
        "Two players, 32 cards, Belote family. Nine cards each; the next card is turned up, names "
        "trump and is the last card of the stock. Plain order 7 8 9 J Q K 10 A, trump order "
        "7 8 Q K 10 A 9 J. While the stock lasts: follow suit, else trump, else any; after each "
        "trick the winner then the loser draws (after the first trick the loser cuts the stock). "
        "Once the stock is empty: follow suit and beat if able, else trump. The trump jack is never "
        "forced: the obligations are judged as if it were not in the hand. On the first turn a "
        "player may announce sequences (20/50/100) and four jacks (200), queens, kings or aces "
        "(100): only the best holder scores. King and queen of trumps: marriage, 20. The trump "
        "seven may be exchanged for the turned card. Card points and the last trick make 150 per "
        "deal; first to 501 after a deal wins."
    )
    state_class = TierconState

    def sample_state(self, observation: dict[str, Any], rng: random.Random) -> TierconState:
        """A world the observing seat cannot tell from the real one (see ``Game.sample_state``):
        the other seat's hand and the face-down stock are drawn uniformly among the deals that
        replay ``deal_history`` legally (:func:`_plan` says which cards may lie where); the
        order of the stock's remaining cards and the later deals are random too.

        The observation does not say which of the observer's own cards were dealt and which
        drawn when; that is drawn the same way, among the ways that make its own plays legal
        (it changes nothing else: the other cards' draw does not depend on it)."""
        obs = observation
        if not isinstance(obs, dict):
            raise ValueError(f"not a tiercon observation: a {type(obs).__name__}, not a dict")
        if obs.get("game") != "tiercon":
            raise ValueError(f"not a tiercon observation: its game is {obs.get('game')!r}")
        if obs.get("players") != self.players:
            raise ValueError(
                f"not an observation of this game: {obs.get('players')!r} players, not {self.players}"
            )
        missing = OBSERVATION_KEYS - obs.keys()
        if missing:
            raise ValueError(f"not a tiercon observation: missing key(s) {', '.join(sorted(missing))}")
        seat, dealer, trump_card, hand = obs["seat"], obs["dealer"], obs["trump_card"], obs["hand"]
        history = obs["deal_history"]
        try:
            if seat not in (0, 1) or dealer not in (0, 1) or trump_card not in SORT_KEY:
                raise ValueError("not a tiercon observation: seat, dealer or trump_card is not valid")
            if not all(c in SORT_KEY for c in hand) or not isinstance(history, list):
                raise ValueError("not a tiercon observation: hand or deal_history is not valid")
            plan = _plan(seat, dealer, trump_card, tuple(hand), tuple(map(tuple, history)))
        except TypeError:  # something unhashable or not iterable where cards or actions belong
            raise ValueError(
                "not a tiercon observation: hand, trump_card or deal_history is not valid"
            ) from None
        state = self.new_state(seed=rng.getrandbits(64), decks=[plan.fill(rng)], dealer=dealer)
        totals, last_deal = obs["scores"], obs["last_deal"]
        if obs["phase"] == PHASE_OVER and last_deal is not None:  # the last deal is in the history
            totals = [a - b for a, b in zip(totals, last_deal["total"], strict=True)]
        state._resume(obs["deal"], totals, last_deal)
        for s, action in history:
            if state.current_player != s:
                raise ValueError(
                    f"not a tiercon observation: seat {s} cannot act now in its deal_history ({action!r})"
                )
            state.apply(action)
        if obs != plan.checked:
            if state.observation(seat) != obs:
                raise ValueError("not a tiercon observation: it differs from the replay of its deal_history")
            plan.checked = copy.deepcopy(obs)
        return state
