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
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from .core import SUIT_NAMES, SUITS, Game, State, card_text, cards_text, make_deck


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
        self.trump = deck[18][1]
        self._stock = deck[19:]  # face down, top first; the face-up card is drawn after them
        self._strength = STRENGTH[self.trump]
        self._points = POINTS[self.trump]
        self._jack = "J" + self.trump  # the trump jack, never forced (RULES.md)
        self._trick: list[tuple[int, str]] = []
        self._tricks: list[tuple[list[tuple[int, str]], int]] = []  # (cards, winner)
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
        self._tricks.append((trick, winner))
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
        }

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
