"""Régicide: a trick-taking game in which the winner of a trick may change the trump or turn
the ranking upside down (RULES.md, section "regicide — Régicide").

One deal: 9 cards each, someone opens the trump by turning the top card of the stock and
taking it, the rest of the stock fills every hand to ``42 // players`` cards, then the hands
are played out in tricks. The player (or team) with most tricks scores that many points;
the game ends after a deal in which someone reaches 50.

Phases of a deal, each with its actions:

- ``"open"``: ``open`` or ``pass``, from the dealer clockwise (the dealer may only ``open``
  once everyone has passed);
- ``"name_trump"``: the opener turned a joker and names the trump, ``trump c|d|h|s``;
- ``"play"``: ``play C``;
- ``"choose"``: the winner of a trick who did not lead it, before leading the next one,
  plays ``keep``, ``trump S``, ``invert`` or ``trump S invert``.

Sampling worlds (:meth:`Regicide.sample_state`): the cards a seat has not seen lie in the
other seats' hands and, before the trump is opened, in the stock (its top card is the one the
opener will turn), or, once the rest is dealt, among the cards set aside (2 with 4 players).
Those are the slots of an :class:`~atout.games.sampling.HiddenDeal`, each of the size the
observation shows (a hand's size less the turned card, which its opener holds where everyone
saw it go). The one obligation of play is following suit: a seat that played a card of another
suit (not a joker) to a trick led by a suit card had none of the led suit then, and since no
card is drawn during play, none of its hidden cards is of that suit. Every deal consistent
with that is equally likely; the stock's order is a uniform shuffle. The deck is laid out so
that the engine deals exactly that deal (which of a seat's cards came in its first nine is
seen by nobody, so it is arbitrary), the deal's actions (``deal_history``) are replayed with
``apply``, and what earlier deals left (deal number, dealer, totals, carried points,
``last_deal``) is carried over; later deals are shuffled by a seed drawn from ``rng``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from enum import StrEnum
from functools import lru_cache
from typing import Any, NamedTuple

from .core import (
    JOKERS,
    SUIT_NAMES,
    SUIT_SYMBOLS,
    SUITS,
    Game,
    IllegalAction,
    Option,
    State,
    card_text,
    cards_text,
)
from .sampling import HiddenDeal


class Phase(StrEnum):
    """Where a deal of régicide stands (see the module's text).
    The observation's ``phase``; a ``StrEnum``: it equals its text (``Phase.OPEN == "open"``)."""

    OPEN = "open"
    NAME_TRUMP = "name_trump"
    PLAY = "play"
    CHOOSE = "choose"
    OVER = "over"


# Read as module names in the hot paths: an enum member read as an attribute costs ~80 ns in 3.11
PHASE_OPEN, PHASE_NAME_TRUMP, PHASE_PLAY, PHASE_CHOOSE, PHASE_OVER = (
    Phase.OPEN, Phase.NAME_TRUMP, Phase.PLAY, Phase.CHOOSE, Phase.OVER)


RANK_ORDER = "A23456789K"  # low to high in the normal ranking
DECK: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANK_ORDER) + JOKERS
FIRST_HAND = 9  # cards each before the trump is opened
WINNING_TOTAL = 50

# Canonical order of a hand (and so of the legal actions): by suit, then rank, jokers last.
_HAND_ORDER = {card: i for i, card in enumerate(DECK)}
# Rank strength of the suit cards under each ranking; jokers are handled apart (above all).
_NORMAL = {card: RANK_ORDER.index(card[0]) for card in DECK if card not in JOKERS}
_INVERTED = {card: len(RANK_ORDER) - 1 - v for card, v in _NORMAL.items()}
_PLAY = {card: "play " + card for card in DECK}
_TRUMP = {suit: "trump " + suit for suit in SUITS}
_TRUMP_INVERT = {suit: f"trump {suit} invert" for suit in SUITS}


def card_strength(card: str, inverted: bool) -> int:
    """Rank of ``card`` within its suit, 0 (lowest) to 9, under the given ranking; jokers 10."""
    if card in JOKERS:
        return len(RANK_ORDER)
    return (_INVERTED if inverted else _NORMAL)[card]


def trick_winner(trick: list[tuple[int, str]], trump: str | None, inverted: bool) -> int:
    """The seat that wins a complete trick (a list of ``(seat, card)`` in play order)."""
    # The first joker played wins; else the highest trump; else the highest card of the suit led.
    for seat, card in trick:
        if card in JOKERS:
            return seat
    order = _INVERTED if inverted else _NORMAL
    led = trick[0][1][1]
    best_seat, best_key = trick[0][0], (0, -1)
    for seat, card in trick:
        suit = card[1]
        key = (2 if suit == trump else 1 if suit == led else 0, order[card])
        if key > best_key:
            best_seat, best_key = seat, key
    return best_seat


class RegicideState(State):
    FULL_DECK = DECK

    def __init__(
        self,
        game: Game[Any],
        seed: int | None,
        decks: Sequence[Sequence[str]] | None,
        dealer: int | None,
        **kwargs: Any,
    ) -> None:
        if kwargs:  # a ValueError naming the argument, as merde and tiercon do (not a TypeError)
            raise ValueError(f"regicide takes no {', '.join(map(repr, sorted(kwargs)))} argument")
        State.__init__(self, game, seed, decks, dealer)
        n = self.players
        self.teams: bool = game.options["teams"]
        self.tie: str = game.options["tie"]
        self.hand_size = len(DECK) // n  # 2 players: 21, 3: 14, 4: 10
        # Scoring units: seats, or the two partnerships 0+2 and 1+3 (unit = seat % 2).
        self.totals = [0] * (2 if self.teams else n)
        self.carry = 0  # tied points waiting for the next deal (option tie="carry")
        self.deal = 0
        self.dealer = self.first_dealer
        self.last_deal: dict[str, Any] | None = None
        self._start_deal()

    @staticmethod
    def _resume(
        game: Regicide,
        seed: int,
        deck: Sequence[str],
        dealer: int,
        deal: int,
        totals: Sequence[int],
        carry: int,
        last_deal: dict[str, Any] | None,
    ) -> RegicideState:
        """A private construction path (for :meth:`Regicide.sample_state`): a game whose
        current deal is deal number ``deal``, dealt by ``dealer`` from ``deck``, with the
        ``totals``, ``carry`` and ``last_deal`` that the earlier deals left; later deals are
        shuffled by ``seed``. Its ``history`` starts with this deal."""
        state = game.new_state(seed=seed, decks=[deck], dealer=dealer)
        # The first deal of a new state is dealt by its first dealer, so only its number and
        # what the earlier deals left change.
        state.deal = deal
        state.totals = list(totals)
        state.carry = carry
        state.last_deal = last_deal
        return state

    # -- the deal --------------------------------------------------------------------------

    def _start_deal(self) -> None:
        n = self.players
        self.deal += 1
        if self.deal > 1:
            # Later deals are dealt by the player to the left of the previous dealer.
            self.dealer = (self.dealer + 1) % n
        # Where this deal's actions start in the history: the observation's deal_history.
        self._deal_start = len(self.history)
        deck = self._next_deck()
        hands: list[list[str]] = [[] for _ in range(n)]
        for i in range(FIRST_HAND * n):
            hands[(self.dealer + 1 + i) % n].append(deck[i])
        for hand in hands:
            hand.sort(key=_HAND_ORDER.__getitem__)
        self.hands = hands
        self.stock = deck[FIRST_HAND * n :]  # face down, top first
        self.aside: list[str] = []
        # Decision (ours): taken tricks are public (every card of them was played face up),
        # but an observation shows only the current and the last completed trick of the deal.
        self.won: list[list[str]] = [[] for _ in range(n)]
        self.tricks_won = [0] * n
        self.trick: list[tuple[int, str]] = []
        # Decision (ours): a new deal starts with no last trick (the previous deal's cards are
        # in new hands); its result stays in last_deal.
        self.last_trick: list[tuple[int, str]] = []
        self.last_trick_winner: int | None = None
        # Changes of trump and ranking last until the end of the deal only.
        self.trump: str | None = None
        self.inverted = False
        self.opener: int | None = None
        self.turned: str | None = None
        self._revealed = set()  # the turned card of this deal, once taken
        self._passes = 0
        self.phase = PHASE_OPEN
        self.current_player = self.dealer  # the opening starts with the dealer

    def _open(self, seat: int) -> None:
        card = self.stock.pop(0)
        self.opener, self.turned = seat, card
        hand = self.hands[seat]
        hand.append(card)  # the opener takes the turned card, which everyone saw
        hand.sort(key=_HAND_ORDER.__getitem__)
        # Decision (ours): the turned card stays in the observations ("turned") all deal long.
        self._revealed.add(card)
        if card in JOKERS:
            self.phase = PHASE_NAME_TRUMP  # the opener keeps the joker and names the trump
        else:
            self.trump = card[1]
            self._deal_rest()

    def _deal_rest(self) -> None:
        # Decision (RULES.md): the rest of the stock is dealt one card at a time, clockwise from
        # the dealer's left, skipping full hands, until every hand holds 42 // n cards; the cards
        # left over (2 with 4 players) are set aside unseen.
        n, size, hands, stock = self.players, self.hand_size, self.hands, self.stock
        missing = sum(size - len(h) for h in hands)
        taken = 0
        while taken < missing:
            for offset in range(1, n + 1):
                hand = hands[(self.dealer + offset) % n]
                if len(hand) < size:
                    hand.append(stock[taken])
                    taken += 1
        for hand in hands:
            hand.sort(key=_HAND_ORDER.__getitem__)
        self.aside = stock[taken:]
        self.stock = []
        self.phase = PHASE_PLAY
        self.current_player = self.dealer  # the dealer leads the first trick

    def _unit(self, seat: int) -> int:
        return seat % 2 if self.teams else seat

    def _unit_tricks(self) -> list[int]:
        t = self.tricks_won
        return [t[0] + t[2], t[1] + t[3]] if self.teams else list(t)

    def _end_deal(self) -> None:
        tricks = self._unit_tricks()
        most = max(tricks)
        points = most + self.carry
        leaders = [u for u, t in enumerate(tricks) if t == most]
        if len(leaders) > 1:
            # A tie for most tricks goes to the tied player with the higher total so far.
            # Decision (ours): with teams, the tied teams' totals are compared.
            best = max(self.totals[u] for u in leaders)
            leaders = [u for u in leaders if self.totals[u] == best]
        award = [0] * len(self.totals)
        if len(leaders) == 1 or self.tie == "share":
            # tie="share": each of the players still tied scores the points.
            for u in leaders:
                award[u] = points
            self.carry = 0
        else:
            # tie="carry": the points go to the next deal's award, piling up over tied deals.
            self.carry = points
        for u, a in enumerate(award):
            self.totals[u] += a
        self.last_deal = {
            "total": [award[self._unit(s)] for s in range(self.players)],
            "tricks": list(self.tricks_won),
            "carried": self.carry,
        }
        # The game ends after a deal in which a player (team) reaches 50; the highest total
        # wins. Such a deal awarded points, so no carried points are ever left over at the end.
        if max(self.totals) >= WINNING_TOTAL:
            self.phase = PHASE_OVER
            self._game_over()
        else:
            self._start_deal()

    # -- actions ---------------------------------------------------------------------------

    def _playable(self, hand: list[str]) -> list[str]:
        trick = self.trick
        if not trick:
            return hand
        led = trick[0][1]
        if led in JOKERS:
            return hand  # Decision (RULES.md): after a joker lead, any card may be played.
        suit = led[1]
        follow = [c for c in hand if c[1] == suit]
        if not follow:
            return hand
        # Decision (RULES.md): a joker may be played at any time, even by a player able to
        # follow suit. Jokers come last in a hand, so the order stays canonical.
        return follow + [c for c in hand if c in JOKERS]

    def _legal_actions(self) -> list[str]:
        phase = self.phase
        if phase == PHASE_PLAY:
            seat = self.current_player
            assert seat is not None
            return [_PLAY[c] for c in self._playable(self.hands[seat])]
        if phase == PHASE_CHOOSE:
            # Decision (ours): listed keep, trump S (suit order, the current trump left out),
            # invert, then trump S invert in the same suit order.
            others = [s for s in SUITS if s != self.trump]
            return ["keep", *(_TRUMP[s] for s in others), "invert", *(_TRUMP_INVERT[s] for s in others)]
        if phase == PHASE_OPEN:
            # If all pass, the dealer must open.
            return ["open"] if self._passes == self.players else ["open", "pass"]
        return [_TRUMP[s] for s in SUITS]  # name_trump

    def _do(self, action: str) -> None:
        seat = self.current_player
        assert seat is not None
        phase = self.phase
        if phase == PHASE_PLAY:
            self._play(seat, action[5:])
        elif phase == PHASE_CHOOSE:
            words = action.split()  # keep | invert | trump S | trump S invert
            if words[0] == "trump":
                self.trump = words[1]
            if words[-1] == "invert":
                self.inverted = not self.inverted  # a second inversion restores the order
            self.phase = PHASE_PLAY  # the chooser now leads
        elif phase == PHASE_OPEN:
            if action == "open":
                self._open(seat)
            else:
                self._passes += 1
                self.current_player = (seat + 1) % self.players
        else:  # name_trump
            self.trump = action[-1]
            self._deal_rest()

    def _play(self, seat: int, card: str) -> None:
        self.hands[seat].remove(card)
        trick = self.trick
        trick.append((seat, card))
        if len(trick) < self.players:
            self.current_player = (seat + 1) % self.players
            return
        winner = trick_winner(trick, self.trump, self.inverted)
        self.won[winner].extend(c for _, c in trick)
        self.tricks_won[winner] += 1
        self.last_trick, self.last_trick_winner, self.trick = trick, winner, []
        if not self.hands[winner]:
            self._end_deal()  # no choice follows the last trick of a deal
            return
        self.current_player = winner
        # Decision (revised, RULES.md): the winner chooses only if that seat did not lead the
        # trick. So the dealer, who leads the first trick, has no choice after winning it; and
        # it is the seat that counts, also in team play: a partner winning the leader's trick
        # has the choice.
        self.phase = PHASE_CHOOSE if winner != trick[0][0] else PHASE_PLAY

    # -- reasons for illegal actions -------------------------------------------------------

    def _why_illegal(self, action: str, original: str) -> str:
        words = action.split()
        verb = words[0] if words else ""
        phase = self.phase
        why = ""
        if phase == PHASE_OPEN:
            if action == "pass":
                why = "everyone passed, so the dealer must open"
            elif verb in ("play", "keep", "invert", "trump"):
                why = "the trump is not opened yet: open the top card of the stock or pass"
        elif phase == PHASE_NAME_TRUMP:
            why = (
                f"you turned {self.turned}: name the trump suit with 'trump c', 'trump d',"
                " 'trump h' or 'trump s'"
            )
        elif phase == PHASE_CHOOSE:
            trump = self.trump
            assert trump is not None  # a trick was played: the trump is opened
            if action in (f"trump {trump}", f"trump {trump} invert"):
                why = f"{SUIT_NAMES[trump]} is already trump"
            elif verb == "play":
                why = (
                    "you won the trick: first choose keep, trump (another suit), invert, or trump"
                    " (another suit) and invert, then lead"
                )
            elif verb == "trump":
                why = "say 'trump' and a suit letter (c, d, h or s), then 'invert' to invert too"
            elif verb == "invert":
                why = "to change the trump and invert at once, say 'trump S invert'"
        elif verb in ("keep", "invert", "trump"):
            last = self.last_trick
            if not self.trick and last and last[0][0] == self.last_trick_winner == self.current_player:
                why = "you led the last trick and won it, so you lead without changing the rules"
            else:
                why = "only the winner of a trick who did not lead it may change the rules, before leading"
        elif verb in ("open", "pass"):
            assert self.trump is not None  # the play phase: the trump is opened
            why = f"the trump is already opened ({SUIT_NAMES[self.trump]})"
        elif verb == "play" and len(words) == 2:
            why = self._why_not_playable(words[1])
        return self._generic_reason(original, why)

    def _why_not_playable(self, card: str) -> str:
        if card not in _HAND_ORDER:
            return f"{card!r} is not a card of régicide (ranks A 2 3 4 5 6 7 8 9 K, jokers RJ BJ)"
        seat = self.current_player
        assert seat is not None
        hand = self.hands[seat]
        if card not in hand:
            return f"you do not hold {card}"
        suit = self.trick[0][1][1]
        follow = ", ".join(c for c in hand if c[1] == suit)
        return f"must follow {SUIT_NAMES[suit]} (you hold {follow})"

    # -- views -----------------------------------------------------------------------------

    @property
    def scores(self) -> list[int]:
        """Running totals per seat; with teams, the team's total on each member."""
        return [self.totals[self._unit(s)] for s in range(self.players)]

    def observation(self, seat: int) -> dict[str, Any]:
        self._check_seat(seat)
        return {
            "game": "regicide",
            "seat": seat,
            "players": self.players,
            "teams": [[0, 2], [1, 3]] if self.teams else None,
            "deal": self.deal,
            "dealer": self.dealer,
            "phase": self.phase,
            "current_player": self.current_player,
            "hand": list(self.hands[seat]),
            "hand_sizes": [len(h) for h in self.hands],
            "hand_size": self.hand_size,
            "stock": len(self.stock),
            "aside": len(self.aside),
            "passes": self._passes if self.phase == PHASE_OPEN else None,
            "opener": self.opener,
            "turned": self.turned,
            "trump": self.trump,
            "inverted": self.inverted,
            "trick": [[s, c] for s, c in self.trick],
            "last_trick": [[s, c] for s, c in self.last_trick],
            "last_trick_winner": self.last_trick_winner,
            "choice": self.phase == PHASE_CHOOSE,
            "tricks_won": list(self.tricks_won),
            "team_tricks_won": self._unit_tricks() if self.teams else None,
            "scores": self.scores,
            "carry": self.carry,
            # A copy: an observation is the seat's own data (DESIGN.md, "The engine API"), and
            # changing it must not change the state.
            "last_deal": None
            if self.last_deal is None
            else {k: list(v) if isinstance(v, list) else v for k, v in self.last_deal.items()},
            # Every action is public: the deal's actions so far, [seat, action] in order (a
            # seat's past failures to follow suit are only visible here).
            "deal_history": [[s, a] for s, a in self.history[self._deal_start :]],
        }

    def _locations(self) -> dict[str, list[str]]:
        places = {f"hand:{s}": list(h) for s, h in enumerate(self.hands)}
        places["hidden:stock"] = list(self.stock)
        places["hidden:aside"] = list(self.aside)
        places["trick"] = [c for _, c in self.trick]
        for s, cards in enumerate(self.won):
            places[f"tricks:{s}"] = list(cards)
        return places

    def __str__(self) -> str:
        ranking = "inverted (K low, A high)" if self.inverted else "normal (A low, K high)"
        trump = f"{SUIT_SYMBOLS[self.trump]} {SUIT_NAMES[self.trump]}" if self.trump else "not chosen yet"
        teams = ", teams 0+2 vs 1+3" if self.teams else ""
        lines = [
            f"Régicide (regicide), {self.players} players{teams}: deal {self.deal},"
            f" dealer seat {self.dealer}, phase {self.phase}",
            f"Trump: {trump}; ranking {ranking}",
        ]
        if self.opener is not None:
            assert self.turned is not None  # set with the opener
            lines.append(f"Opened by seat {self.opener}, who turned {card_text(self.turned)}")
        elif self.stock:
            lines.append(f"Stock: {len(self.stock)} cards face down, {self._passes} passed")
        for s, hand in enumerate(self.hands):
            mark = "  <- to act" if s == self.current_player else ""
            lines.append(f"Seat {s}: {cards_text(hand)}  ({self.tricks_won[s]} tricks){mark}")
        if self.trick:
            lines.append("Trick: " + ", ".join(f"seat {s} {card_text(c)}" for s, c in self.trick))
        if self.last_trick:
            shown = ", ".join(f"seat {s} {card_text(c)}" for s, c in self.last_trick)
            lines.append(f"Last trick: {shown}; won by seat {self.last_trick_winner}")
        carry = f" (carried: {self.carry})" if self.carry else ""
        lines.append("Scores: " + " ".join(str(x) for x in self.scores) + carry)
        if self.current_player is None:
            lines.append("Game over; ranking: " + " ".join(str(p) for p in self.ranking))
        return "\n".join(lines)


# -- sampling worlds -------------------------------------------------------------------------

_OBSERVATION_KEYS = frozenset((
    "game", "seat", "players", "teams", "deal", "dealer", "phase", "current_player", "hand",
    "hand_sizes", "hand_size", "stock", "aside", "passes", "opener", "turned", "trump",
    "inverted", "trick", "last_trick", "last_trick_winner", "choice", "tricks_won",
    "team_tricks_won", "scores", "carry", "last_deal", "deal_history",
))


class _Plan(NamedTuple):
    """How to deal one observation's worlds: draw ``deal``, put the cards of its slot ``i`` at
    the deck positions ``slots[i]``, the known cards already lying in ``template``."""

    deal: HiddenDeal
    template: tuple[str, ...]  # the deck, "" where a drawn card goes
    slots: tuple[tuple[int, ...], ...]


def _rest_order(players: int, dealer: int, opener: int) -> list[int]:
    """The seats that receive the stock's cards after the turned one, in order (as
    ``RegicideState._deal_rest`` deals them)."""
    size = len(DECK) // players
    held = [FIRST_HAND + (s == opener) for s in range(players)]
    order: list[int] = []
    while any(h < size for h in held):
        for offset in range(1, players + 1):
            seat = (dealer + offset) % players
            if held[seat] < size:
                order.append(seat)
                held[seat] += 1
    return order


@lru_cache(maxsize=256)
def _plan(
    players: int,
    seat: int,
    dealer: int,
    hand: tuple[str, ...],
    turned: str | None,
    history: tuple[tuple[int, str], ...],
) -> _Plan:
    """The slots, constraints and deck layout of an observation (cached: a search bot samples
    many worlds of one observation). Raises ValueError when they cannot fit together."""
    n = players
    played: list[list[str]] = [[] for _ in range(n)]
    voids: list[set[str]] = [set() for _ in range(n)]
    opener: int | None = None
    dealt = False  # the rest of the stock dealt
    trick: list[str] = []
    for who, action in history:
        if not (isinstance(who, int) and 0 <= who < n and isinstance(action, str)):
            raise ValueError(f"deal_history holds {[who, action]!r}, not a [seat, action] pair")
        if action == "open":
            opener = who
            dealt = turned not in JOKERS
        elif opener is not None and not dealt:
            dealt = True  # the opener named the trump after turning a joker
        if action.startswith("play "):
            card = action[5:]
            if card not in _HAND_ORDER:
                raise ValueError(f"deal_history plays {card!r}, not a card of régicide")
            # Following suit is the one obligation: a suit card of another suit played to a
            # suit card led means none of the led suit was left (a joker may always be played).
            if trick and trick[0] not in JOKERS and card not in JOKERS and card[1] != trick[0][1]:
                voids[who].add(trick[0][1])
            trick.append(card)
            if len(trick) == n:
                trick = []
            played[who].append(card)
    if (opener is None) != (turned is None) or (turned is not None and turned not in _HAND_ORDER):
        raise ValueError(f"turned {turned!r} does not fit the deal's history (opener {opener!r})")
    # The deck positions each seat's cards come from: the first nine, then the stock's.
    first = FIRST_HAND * n
    positions = [[k * n + (s - dealer - 1) % n for k in range(FIRST_HAND)] for s in range(n)]
    rest: list[int] = []  # positions of the stock (before the deal's rest) or of the aside
    if dealt:
        assert opener is not None
        order = _rest_order(n, dealer, opener)
        for i, s in enumerate(order):
            positions[s].append(first + 1 + i)
        rest = list(range(first + 1 + len(order), len(DECK)))
    else:
        rest = list(range(first + (opener is not None), len(DECK)))
    template = [""] * len(DECK)
    if turned is not None:
        template[first] = turned
    seen = set() if turned is None else {turned}
    slots: list[tuple[int, ...]] = []
    slot_seats: list[int | None] = []
    for s in range(n):
        known = [c for c in (played[s] + list(hand) if s == seat else played[s]) if c != turned]
        if len(known) > len(positions[s]) or (s == seat and len(known) != len(positions[s])):
            raise ValueError(f"seat {s} holds and played {len(known) + (s == opener)} cards this deal,"
                             f" but the deal gives it {len(positions[s]) + (s == opener)}")
        for p, card in zip(positions[s], known, strict=False):
            if card in seen or card not in _HAND_ORDER:
                raise ValueError(f"the observation shows {card!r} twice or it is not a card of régicide")
            seen.add(card)
            template[p] = card
        if s != seat:
            slots.append(tuple(positions[s][len(known):]))
            slot_seats.append(s)
    if rest:
        slots.append(tuple(rest))
        slot_seats.append(None)
    hidden = [c for c in DECK if c not in seen]
    allowed: dict[str, list[int]] = {}
    if any(voids):
        for card in hidden:
            if card not in JOKERS:
                allowed[card] = [i for i, s in enumerate(slot_seats) if s is None or card[1] not in voids[s]]
    deal = HiddenDeal(hidden, [len(p) for p in slots], allowed)
    return _Plan(deal, tuple(template), tuple(slots))


class Regicide(Game[RegicideState]):
    id = "regicide"
    name = "Régicide"
    # See Game.RULES_VERSION. 2: only a winner who did not lead the trick may change the rules
    # (the dealer no longer chooses after winning the first trick); the choice trump S invert.
    RULES_VERSION = 2
    min_players = 2
    max_players = 4
    # Decision (ours): two players by default, the seed's own advice ("the best option is
    # playing with 2 players").
    default_players = 2
    OPTIONS = (
        Option(
            "teams",
            False,
            "4 players only: two partnerships, seats 0+2 against 1+3, counting tricks and points together",
            choices=(False, True),
        ),
        Option(
            "tie",
            "carry",
            "when players tied for most tricks also tie on total: 'carry' adds the points to the"
            " next deal's award, 'share' gives the points to each of them",
            choices=("carry", "share"),
        ),
    )
    SUMMARY = (
        "A trick-taking game for 2, 3 or 4 players (or two teams of two) with 42 cards: A 2-9 K"
        " in four suits, ace low, plus two jokers above everything. After 9 cards each, a player"
        " opens the trump by turning the top card of the stock and taking it; the rest of the stock"
        " then fills the hands. Follow suit if able; a joker may always be played, and the first"
        " joker wins the trick. The winner of a trick who did not lead it (so never the dealer"
        " after the first trick) may keep the rules, change the trump, invert the ranking, or"
        " change the trump and invert at once. The player (team) with most tricks scores that"
        " many points; the game ends when someone reaches 50."
    )
    state_class = RegicideState

    def __init__(self, players: int | None = None, **options: Any) -> None:
        # Decision (ours): asking for teams without a player count means the 2 vs 2 game, so
        # players defaults to 4 then (teams with another explicit count is still an error).
        if players is None and options.get("teams") is True:
            players = 4
        super().__init__(players, **options)

    def sample_state(self, observation: dict[str, Any], rng: random.Random) -> RegicideState:
        """A world the observing seat cannot tell from the real one (see the module's text,
        "Sampling worlds"): the hidden cards drawn uniformly among the deals in which the
        deal's history replays legally, so ``observation(seat)`` of the result equals
        ``observation``. Raises ValueError when ``observation`` is not one of this game (or
        :class:`~atout.games.sampling.Inconsistent`, a ValueError, when no deal fits it)."""
        obs = observation
        if not isinstance(obs, Mapping) or obs.get("game") != "regicide":
            game = obs.get("game") if isinstance(obs, Mapping) else type(obs).__name__
            raise ValueError(f"not a regicide observation (game {game!r})")
        missing = _OBSERVATION_KEYS.difference(obs)
        if missing:
            raise ValueError(f"the regicide observation lacks {', '.join(sorted(missing))}")
        if obs["players"] != self.players or (obs["teams"] is not None) != self.options["teams"]:
            raise ValueError(
                f"an observation of {obs['players']} players (teams: {obs['teams'] is not None}) for a game"
                f" of {self.players} (teams: {self.options['teams']})")
        seat = obs["seat"]
        try:
            plan = _plan(self.players, seat, obs["dealer"], tuple(obs["hand"]), obs["turned"],
                         tuple(map(tuple, obs["deal_history"])))
            deal, dealer, carry = obs["deal"], obs["dealer"], obs["carry"]
            scores, last = obs["scores"], obs["last_deal"]
            teams = self.options["teams"]
            totals = [scores[0], scores[1]] if teams else list(scores)
            if obs["phase"] == PHASE_OVER:
                # The game ended with this deal: replaying it scores it again, so start from
                # the totals before it (that deal awarded points, so nothing was carried after).
                award = last["total"][:2] if teams else list(last["total"])
                tricks = last["tricks"]
                most = max(tricks[0] + tricks[2], tricks[1] + tricks[3]) if teams else max(tricks)
                totals = [t - a for t, a in zip(totals, award, strict=True)]
                carry = max(award) - most
                last = None  # replaced by that deal's result
            elif last is not None:
                last = {k: list(v) if isinstance(v, list) else v for k, v in last.items()}
        except (TypeError, KeyError, IndexError, AttributeError) as exc:
            raise ValueError(f"malformed regicide observation: {exc}") from None
        hands = plan.deal.sample(rng)
        deck = list(plan.template)
        for places, cards in zip(plan.slots, hands, strict=True):
            for place, card in zip(places, cards, strict=True):
                deck[place] = card
        state = RegicideState._resume(self, rng.getrandbits(64), deck, dealer, deal, totals, carry, last)
        for who, action in obs["deal_history"]:
            try:
                if state.current_player != who:
                    raise IllegalAction(f"seat {state.current_player} is to act, not seat {who}")
                state.apply(action)
            except IllegalAction as exc:
                raise ValueError(f"the observation's deal_history does not replay: {exc}") from None
        if state.observation(seat) != obs:
            got = state.observation(seat)
            wrong = sorted(k for k in _OBSERVATION_KEYS if got[k] != obs[k])
            raise ValueError(
                f"the regicide observation does not follow from its deal_history: {', '.join(wrong)}")
        return state

    def _check_options(self, values: dict[str, Any]) -> None:
        if values["teams"] and values["players"] != 4:
            raise ValueError(
                f"option 'teams': True needs 4 players (two teams of two), not {values['players']}"
            )
