"""Fool compris: Durak where what counts is how many face cards you beat (RULES.md, ``fool``).

A game is a series of bouts. The attacker leads one card to the defender (the next player to
the left who still has cards); the defender covers it (``beat X Y``) or gives up (``take``).
Once every attack card is covered, the others may add cards of a rank already on the table,
the attacker first; the defender must answer each one. A defender who covers everything
scores the face cards (``T J Q K A``) among the attack cards. Everyone then refills to six
from the stock. The last player holding cards is the fool, which only decides who deals the
next game. The player who beat the most face cards wins (place 1, shared on a tie); every other
player is a loser and shares place 2 (RULES.md, **Result (revised)**).

Phases: ``"attack"`` (the attacker leads the bout's first card), ``"defend"`` (the defender
answers the one uncovered attack card), ``"add"`` (a player is asked to add or pass; also
after ``take``), ``"over"``.

Sampling worlds (:meth:`Fool.sample_state`, docs/rules/fool.md "Sampling worlds"): the hidden
cards lie in slots (each seat's dealt hand, each batch a seat drew after a bout, the stock not
yet drawn); a card a seat played first came from one of its slots filled before; seen cards (a
defender's pick-up, the first-attack card, the turned card) are where they were seen; the
first-attack card rules lower cards out of every dealt hand. Nobody is obliged to beat or add,
so nothing else constrains the deal. Decks are drawn uniformly among the consistent ones
(:class:`_Worlds`), the stock's undrawn order at random, and the observation's
``deal_history`` replayed on them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from enum import StrEnum
from math import comb
from typing import Any, cast

from .core import (
    RANKS,
    SUIT_NAMES,
    SUITS,
    Game,
    IllegalAction,
    Option,
    State,
    card_text,
    cards_text,
    make_deck,
    shuffle,
)
from .core import ranking_from_scores as ranking_by_count
from .sampling import Inconsistent, ObservationCache


class Phase(StrEnum):
    """Where a bout of fool stands (see the module's text).
    The observation's ``phase``; a ``StrEnum``: it equals its text (``Phase.ATTACK == "attack"``)."""

    ATTACK = "attack"
    DEFEND = "defend"
    ADD = "add"
    OVER = "over"


# Read as module names in the hot paths: an enum member read as an attribute costs ~80 ns in 3.11
PHASE_ATTACK, PHASE_DEFEND, PHASE_ADD, PHASE_OVER = Phase.ATTACK, Phase.DEFEND, Phase.ADD, Phase.OVER


HAND_SIZE = 6
MAX_ATTACKS = 6
REPETITIONS = 3  # the same position at a bout's start this many times: the game ends (FoolState._repeated)
FACE_RANKS = frozenset("TJQKA")
DECK_RANKS = {36: "6789TJQKA", 52: RANKS}

RANK_VALUE = {r: i for i, r in enumerate(RANKS)}
# Hands and legal actions list cards suit by suit (c d h s), low to high within a suit.
CARD_ORDER = {card: i for i, card in enumerate(make_deck(RANKS))}
# Decision (RULES.md): the lowest card (when nobody holds a trump) is by rank, ties by suit c d h s.
LOWEST_CARD_KEY = {card: (RANK_VALUE[card[0]], SUITS.index(card[1])) for card in CARD_ORDER}
ATTACK = {card: "attack " + card for card in CARD_ORDER}
ADD = {card: "add " + card for card in CARD_ORDER}


def _sort(cards: list[str]) -> None:
    cards.sort(key=CARD_ORDER.__getitem__)


def winner_and_losers(beaten: Sequence[int]) -> list[int]:
    """Places for face cards beaten: 1 for the most (shared on a tie), 2 for everyone else."""
    best = max(beaten)
    return [1 if b == best else 2 for b in beaten]


class FoolState(State):
    """One game of Fool compris. See the module docstring for the phases."""

    def __init__(
        self,
        game: Game[Any],
        seed: int | None,
        decks: Sequence[Sequence[str]] | None,
        dealer: int | None,
        previous_fool: int | None = None,
    ) -> None:
        n = game.players
        if previous_fool is not None:
            if type(previous_fool) is not int or not 0 <= previous_fool < n:
                raise ValueError(f"previous_fool {previous_fool!r} is not a seat (0..{n - 1})")
            # Decision (ours): in a later game the previous fool deals; a different dealer is an error.
            if dealer is not None and dealer != previous_fool:
                raise ValueError(
                    f"dealer {dealer!r} contradicts previous_fool {previous_fool!r}: the previous fool deals"
                )
            dealer = previous_fool
        self.FULL_DECK = tuple(make_deck(DECK_RANKS[game.options["deck"]]))
        super().__init__(game, seed, decks, dealer)
        self.previous_fool = previous_fool
        self.dealer = self.first_dealer
        self.hands: list[list[str]] = [[] for _ in range(n)]
        self.stock: list[str] = []  # the top is the END of the list; the turned card is stock[0]
        self.table: list[list[str | None]] = []  # [attack card, covering card or None]
        self.discard: list[str] = []
        self.beaten = [0] * n  # face cards beaten: the score
        self.attacker: int | None = None
        self.defender: int | None = None
        self.phase = PHASE_ATTACK
        self.taking = False
        self.bout_limit = 0
        self.fool: int | None = None
        self.last_bout: dict[str, Any] | None = None
        self.first_attack_card: str | None = None
        self._table_ranks: set[str] = set()
        self._attacks = 0
        self._askers: list[int] = []  # who may add, in the order they are asked
        self._ask = 0  # index in _askers of the player being asked
        # (attacker, stock size, hands) at the start of each bout -> times seen
        self._positions: dict[tuple[int, int, tuple[str, ...]], int] = {}
        self._deal()

    # -- the deal ----------------------------------------------------------------------------

    def _relabelled(self, deck: list[str], table: dict[str, str]) -> list[str]:
        """The suit permutation keeps the game the same except in one case: when no hand holds a
        trump, the first attacker holds the lowest card, ties broken by suit order ``c d h s``
        (RULES.md). Decision (ours): then the trump goes where the permutation sends it, and
        the three plain suits keep their order among themselves (the one relabelling of them
        that keeps the tie-break); otherwise the permutation applies as given."""
        dealt = HAND_SIZE * self.players
        if dealt < len(deck):
            trump = deck[dealt][1]
            if all(c[1] != trump for c in deck[:dealt]):
                new_trump = table["A" + trump][1]
                plain = [s for s in SUITS if s != trump]
                target = [s for s in SUITS if s != new_trump]
                to = dict(zip(plain, target, strict=True))
                to[trump] = new_trump
                return [c[0] + to[c[1]] for c in deck]
        return [table[c] for c in deck]

    def _deal(self) -> None:
        n = self.players
        deck = self._next_deck()
        dealt = HAND_SIZE * n
        for i in range(dealt):
            self.hands[(self.dealer + 1 + i) % n].append(deck[i])
        for hand in self.hands:
            _sort(hand)
        if dealt < len(deck):
            # The next card is turned face up and put under the stock: trump, and drawn last.
            self.trump_card = deck[dealt]
            self.stock = deck[dealt + 1 :][::-1]
            self.stock.insert(0, self.trump_card)
            self._trump_in_stock = True
        else:
            # Decision (RULES.md): with no card left (36 cards, 6 players), the last card dealt
            # is shown to all and its suit is trump.
            self.trump_card = deck[dealt - 1]
            self._revealed.add(self.trump_card)
            self._trump_in_stock = False
        self.trump = self.trump_card[1]
        self._start_bout(self._first_attacker())

    def _first_attacker(self) -> int:
        n = self.players
        if self.previous_fool is not None:
            step = -1 if self.game.options["first_attack"] == "right_of_fool" else 1
            return (self.previous_fool + step) % n
        trumps = [(RANK_VALUE[c[0]], s, c) for s in range(n) for c in self.hands[s] if c[1] == self.trump]
        if trumps:
            _, seat, card = min(trumps)
        else:
            _, seat, card = min((LOWEST_CARD_KEY[c], s, c) for s in range(n) for c in self.hands[s])
        # Decision (ours): the card that designates the first attacker is shown to all, as
        # Durak players show their lowest trump; it stays in the hand.
        self.first_attack_card = card
        self._revealed.add(card)
        return seat

    # -- bouts -------------------------------------------------------------------------------

    def _next_with_cards(self, seat: int) -> int:
        """The first player from ``seat`` clockwise (``seat`` included) who holds cards."""
        n = self.players
        for k in range(n):
            s = (seat + k) % n
            if self.hands[s]:
                return s
        raise AssertionError("nobody holds cards")  # pragma: no cover - the game is over then

    def _start_bout(self, attacker: int) -> None:
        # Decision (ours): when the player due to attack is out, the next player to the left
        # who holds cards attacks.
        attacker = self._next_with_cards(attacker)
        defender = self._next_with_cards((attacker + 1) % self.players)
        if self._repeated(attacker):
            return
        self.attacker, self.defender = attacker, defender
        self.phase = PHASE_ATTACK
        self.taking = False
        self.table = []
        self._table_ranks = set()
        self._attacks = 0
        # Decision (RULES.md): at most 6 attack cards, and never more than the defender held
        # at the start of the bout.
        self.bout_limit = min(MAX_ATTACKS, len(self.hands[defender]))
        # The attacker has the first right to add, then the others clockwise; never the defender.
        n = self.players
        self._askers = [s for s in ((attacker + k) % n for k in range(n)) if s != defender]
        self.current_player = attacker

    def _repeated(self, attacker: int) -> bool:
        """Decision (ours; RULES.md is silent): while nobody needs to draw (the stock is empty,
        or every hand holds six cards or more), cards only change hands by takes, and play can
        go round in circles for ever (first-legal play does, in about one deal in twenty with 3
        players). When a bout is about to start for the third time with the same attacker, the
        same hands and the same stock, the game ends there, as a threefold repetition ends a
        chess game: nobody is the fool, and the result goes by face cards beaten, as always (only
        takes happened while the position came round, and a take scores nothing)."""
        key = (attacker, len(self.stock), tuple("".join(hand) for hand in self.hands))
        seen = self._positions[key] = self._positions.get(key, 0) + 1
        if seen < REPETITIONS:
            return False
        self.fool = None
        self.phase = PHASE_OVER
        self.attacker = self.defender = None
        self._game_over()
        return True

    def _put_attack(self, seat: int, card: str) -> None:
        self.hands[seat].remove(card)
        self.table.append([card, None])
        self._table_ranks.add(card[0])
        self._attacks += 1

    def _ask_from(self, index: int) -> None:
        """Ask the next player who may add, from ``_askers[index]`` on; end the bout if none."""
        if self._attacks < self.bout_limit:
            # Every player who may add is asked, even one with no fitting card (RULES.md);
            # a player with no cards at all is not asked.
            for i in range(index, len(self._askers)):
                seat = self._askers[i]
                if self.hands[seat]:
                    self.phase = PHASE_ADD
                    self._ask = i
                    self.current_player = seat
                    return
        # Decision (RULES.md): once the limit is reached nobody is asked to add.
        self._end_bout()

    def _end_bout(self) -> None:
        attacker, defender = self.attacker, self.defender
        assert attacker is not None and defender is not None
        table = [card for pair in self.table for card in pair if card is not None]
        if self.taking:
            self.hands[defender].extend(table)
            _sort(self.hands[defender])
            scored = 0
        else:
            # A full defence: the table is discarded and the defender scores the face cards
            # among the attack cards covered in this bout.
            self.discard.extend(table)
            # (the first card of a pair is always there: only its cover may be None)
            scored = sum(1 for attack, _ in self.table if cast(str, attack)[0] in FACE_RANKS)
            self.beaten[defender] += scored
        self.last_bout = {
            "attacker": attacker,
            "defender": defender,
            "table": [list(pair) for pair in self.table],
            "taken": self.taking,
            "face_cards": scored,
        }
        self.table = []
        self._table_ranks = set()
        self._refill(attacker)
        # Decision (ours): the end of the game is only checked when a bout ends. A player who
        # runs out mid-bout is simply not asked to add; a defender still answers the card in
        # front of them even if nobody else holds cards.
        holders = [s for s in range(self.players) if self.hands[s]]
        if len(holders) <= 1:
            # The last player holding cards is the fool; nobody when every hand is empty.
            self.fool = holders[0] if holders else None
            self.phase = PHASE_OVER
            self.attacker = self.defender = None
            self._game_over()
            return
        # After a full defence the defender attacks next; after a take, the player to the
        # defender's left. Players with no cards (the stock being empty) are skipped.
        self._start_bout(defender if not self.taking else (defender + 1) % self.players)

    def _refill(self, attacker: int) -> None:
        # The attacker draws first, then the others clockwise from the attacker's left.
        n = self.players
        stock = self.stock
        for k in range(n):
            if not stock:
                return
            hand = self.hands[(attacker + k) % n]
            if len(hand) >= HAND_SIZE:
                continue
            while len(hand) < HAND_SIZE and stock:
                card = stock.pop()
                if not stock and self._trump_in_stock:
                    # the turned trump, drawn last: everyone saw it go into this hand
                    self._trump_in_stock = False
                    self._revealed.add(card)
                hand.append(card)
            _sort(hand)

    # -- rules helpers -----------------------------------------------------------------------

    def beats(self, attack: str, cover: str) -> bool:
        """Whether ``cover`` beats ``attack``: higher in the same suit, or a trump on a plain card."""
        if cover[1] == attack[1]:
            return RANK_VALUE[cover[0]] > RANK_VALUE[attack[0]]
        return cover[1] == self.trump

    def _uncovered(self) -> str | None:
        for attack, cover in self.table:
            if cover is None:
                return attack
        return None

    # -- actions -----------------------------------------------------------------------------

    def _legal_actions(self) -> list[str]:
        seat = self.current_player
        assert seat is not None
        hand = self.hands[seat]
        phase = self.phase
        if phase == PHASE_ATTACK:
            # Decision (ours): the attacker must lead a card; a bout cannot be declined.
            return [ATTACK[c] for c in hand]
        if phase == PHASE_DEFEND:
            attack = self._uncovered()
            assert attack is not None
            beats = self.beats
            return [f"beat {attack} {c}" for c in hand if beats(attack, c)] + ["take"]
        ranks = self._table_ranks
        return [ADD[c] for c in hand if c[0] in ranks] + ["pass"]

    def _do(self, action: str) -> None:
        seat = self.current_player
        assert seat is not None
        verb = action[:4]
        if verb == "atta":  # attack X
            self._put_attack(seat, action[7:])
            self.phase = PHASE_DEFEND
            self.current_player = self.defender
        elif verb == "beat":  # beat X Y
            attack, cover = action[5:7], action[8:10]
            self.hands[seat].remove(cover)
            for pair in self.table:
                if pair[0] == attack:
                    pair[1] = cover
                    break
            self._table_ranks.add(cover[0])
            # Every attack card is covered now: the others may add, the attacker first.
            self._ask_from(0)
        elif verb == "take":
            self.taking = True
            # The others may still add, in the same order, before the defender takes.
            self._ask_from(0)
        elif verb == "add ":  # add X
            self._put_attack(seat, action[4:])
            if self.taking:
                # each added card gives the first right to add back to the attacker
                self._ask_from(0)
            else:
                # the defender must answer it; then the right to add starts again
                self.phase = PHASE_DEFEND
                self.current_player = self.defender
        else:  # pass
            self._ask_from(self._ask + 1)

    def _why_illegal(self, action: str, original: str) -> str:
        seat = self.current_player
        assert seat is not None
        words = action.split()
        verb, args = (words[0], words[1:]) if words else ("", [])
        hand = self.hands[seat]
        why = ""
        bad_card = next((a for a in args if a not in CARD_ORDER), None)
        if self.phase == PHASE_ATTACK:
            if verb == "attack" and len(args) == 1:
                why = self._card_problem(args[0], hand)
            elif verb == "pass":
                why = "the attacker may not pass: a bout starts with 'attack C'"
            else:
                why = f"seat {seat} attacks seat {self.defender}: lead a card with 'attack C'"
        elif self.phase == PHASE_DEFEND:
            attack = self._uncovered()
            assert attack is not None
            if verb == "beat" and len(args) == 2:
                x, y = args
                if bad_card is not None:
                    why = f"{bad_card!r} is not a card"
                elif x != attack:
                    why = f"{x} is not an uncovered attack card (the card to beat is {attack})"
                elif y not in hand:
                    why = f"you do not hold {y} (you hold {' '.join(hand)})"
                elif attack[1] == self.trump:
                    why = f"{y} does not beat {x}: a trump is beaten only by a higher trump"
                else:
                    why = (
                        f"{y} does not beat {x}: cover with a higher {SUIT_NAMES[x[1]][:-1]}"
                        f" or any trump (trump is {SUIT_NAMES[self.trump]})"
                    )
            else:
                why = f"seat {seat} defends: answer {attack} with 'beat {attack} C' or 'take'"
        else:
            if verb == "add" and len(args) == 1:
                why = self._card_problem(args[0], hand)
                if not why:
                    ranks = ", ".join(r for r in RANKS if r in self._table_ranks)
                    why = f"{args[0]} does not fit: the ranks on the table are {ranks}"
            elif verb in ("beat", "take"):
                why = f"only the defender (seat {self.defender}) may {verb}"
            else:
                why = "you may 'add C' (a card of a rank on the table) or 'pass'"
        return self._generic_reason(original, why)

    @staticmethod
    def _card_problem(card: str, hand: list[str]) -> str:
        if card not in CARD_ORDER:
            return f"{card!r} is not a card"
        if card not in hand:
            return f"you do not hold {card} (you hold {' '.join(hand) or 'nothing'})"
        return ""

    # -- views -------------------------------------------------------------------------------

    @property
    def scores(self) -> list[int]:
        return list(self.beaten)

    @property
    def ranking(self) -> list[int]:
        """RULES.md, **Result (revised)**: "the player who beat the most face cards is the winner,
        all other players are considered losers". The most face cards take place 1 (ties share
        it); everyone else shares place 2, whatever their count. Face counts 5, 3, 0, 0 place
        1, 2, 2, 2; when everyone beat as many, everyone shares place 1."""
        return winner_and_losers(self.beaten)

    def _out(self) -> list[int]:
        if self.stock:
            return []
        return [s for s in range(self.players) if not self.hands[s]]

    def observation(self, seat: int) -> dict[str, Any]:
        self._check_seat(seat)
        return {
            "game": "fool",
            "seat": seat,
            "players": self.players,
            "hand": list(self.hands[seat]),
            "current_player": self.current_player,
            "dealer": self.dealer,
            "trump": self.trump,
            # Decision (ours): the turned card stays in the observation all game: everyone saw it.
            "trump_card": self.trump_card,
            "scores": self.scores,
            "face_cards_beaten": self.scores,
            "stock": len(self.stock),
            "phase": self.phase,
            "attacker": self.attacker,
            "defender": self.defender,
            "table": [list(pair) for pair in self.table],
            "taking": self.taking,
            "bout_limit": self.bout_limit,
            "hand_sizes": [len(h) for h in self.hands],
            "out": self._out(),
            "discard": list(self.discard),
            "discard_count": len(self.discard),
            "last_bout": self.last_bout,
            "first_attack_card": self.first_attack_card,
            "previous_fool": self.previous_fool,
            "fool": self.fool,
            # fool is one deal: its deal history is the whole game's (Fool.sample_state reads it)
            "deal_history": [[s, a] for s, a in self.history],
        }

    def _locations(self) -> dict[str, list[str]]:
        places = {f"hand:{s}": list(h) for s, h in enumerate(self.hands)}
        if self._trump_in_stock:
            places["hidden:stock"] = self.stock[1:]
            places["trump_card"] = self.stock[:1]  # face up under the stock
        else:
            places["hidden:stock"] = list(self.stock)
        places["table"] = [c for pair in self.table for c in pair if c is not None]
        places["discard"] = list(self.discard)
        return places

    def __str__(self) -> str:
        trump = f"{SUIT_NAMES[self.trump]} (turned {card_text(self.trump_card)})"
        lines = [
            f"Fool compris ({self.players} players, {len(self.FULL_DECK)} cards) — dealer: seat"
            f" {self.dealer}, trump: {trump}, stock: {len(self.stock)}"
        ]
        if self.phase == PHASE_OVER:
            fool = "nobody" if self.fool is None else f"seat {self.fool}"
            lines.append(f"Game over: the fool is {fool}")
        else:
            taking = ", defender takes" if self.taking else ""
            lines.append(
                f"Bout: seat {self.attacker} attacks seat {self.defender} (limit {self.bout_limit}{taking});"
                f" phase: {self.phase}; to act: seat {self.current_player}"
            )
            table = "  ".join(
                f"{card_text(cast(str, a))}/{card_text(c) if c else '-'}"
                for a, c in self.table
            )
            lines.append(f"Table: {table or '-'}")
        out = self._out()
        for s, hand in enumerate(self.hands):
            tag = " (out)" if s in out else ""
            lines.append(f"Seat {s}: {cards_text(hand)}  — face cards beaten: {self.beaten[s]}{tag}")
        lines.append(f"Discard: {len(self.discard)} cards")
        return "\n".join(lines)


class Fool(Game[FoolState]):
    id = "fool"
    name = "Fool compris"
    # See Game.RULES_VERSION. 2: a position repeated three times at a bout's start ends the game;
    # 3: one winner (most face cards beaten) against the losers, who all share place 2.
    RULES_VERSION = 3
    REPLAYS_SINCE = 2  # version 3 changed only the ranking: version 2's games replay as stored
    min_players = 2
    max_players = 6
    # Decision (ours): four players by default, a usual Durak table.
    default_players = 4
    OPTIONS = (
        Option("deck", 36, "36 cards (6 to ace) or 52 cards (2 to ace)", choices=(36, 52)),
        Option(
            "first_attack",
            "right_of_fool",
            "in later games of a series, the first attacker sits to the right or to the left of the"
            " previous fool",
            choices=("right_of_fool", "left_of_fool"),
        ),
    )
    SUMMARY = (
        "Durak where you count the face cards you beat. Six cards each; the turned card under the"
        " stock sets trump. The attacker leads a card to the player on their left, who covers it"
        " with a higher card of its suit or a trump ('beat X Y') or takes the table ('take'). Once"
        " everything is covered the others, attacker first, may add cards of ranks on the table"
        " (at most 6 per bout, and no more than the defender held). A defender who covers"
        " everything scores the face cards (10, J, Q, K, A) among the attack cards. Everyone"
        " refills to six from the stock. The last player holding cards is the fool and deals the"
        " next game. Whoever beat the most face cards wins; everyone else shares second place."
    )
    state_class = FoolState

    @classmethod
    def ranking_under(cls, version: int, state: State) -> list[int]:
        """Version 2 ranked every player by face cards beaten (5, 3, 0, 0 placed 1, 2, 3, 3)."""
        if version <= 2:
            return ranking_by_count(state.scores)
        return list(state.ranking)

    def sample_state(self, observation: dict[str, Any], rng: random.Random) -> FoolState:
        """A world the observing seat cannot tell from the real one (see ``Game.sample_state``).

        The deck is rebuilt, uniformly among the decks consistent with the observation, and
        ``deal_history`` (the whole game's) replayed on it. The hidden cards lie in *slots*:
        each seat's six dealt cards, each batch of cards a seat drew after a bout (their sizes
        follow from the public history), and the stock still to be drawn. Constraints: a card a
        seat played (attack, beat or add) for the first time was in one of its slots dealt or
        drawn before that moment; a card a defender picked up, the first-attack card (in its
        attacker's dealt hand) and the turned trump card (under the stock, drawn last; with 36
        cards and 6 players the dealer's last dealt card) are where they were seen; and when
        the first attacker was named by the lowest trump (or, nobody holding a trump, by the
        lowest card), no dealt hand held a lower trump (or any trump, or a lower card). Fool
        has no obligation to beat or to add (``take`` and ``pass`` are always legal), so those
        are all the constraints. The order of the stock not yet drawn is random. See
        :class:`_Worlds` for the counting. The work per observation is done once and kept for
        the next calls with an equal observation."""
        try:
            history = observation.get("deal_history")
            key: tuple[Any, ...] = (
                self.players, self.options["deck"], self.options["first_attack"],
                observation.get("seat"), len(history) if isinstance(history, list) else -1,
                tuple(observation.get("hand") or ()),
            )
        except (AttributeError, TypeError):
            raise ValueError("a fool observation is a dict (a seat's observation)") from None
        return _WORLDS.get(key, observation, lambda mine: _Worlds(self, mine)).draw(rng)


# -- sampling worlds (Fool.sample_state) ------------------------------------------------------

_WORLDS_KEPT = 8  # observations whose worlds were counted (fool's counting is dear; few repeat)
_WORLDS: ObservationCache[_Worlds] = ObservationCache(_WORLDS_KEPT)

_OBSERVATION_KEYS = (
    "game", "seat", "players", "hand", "dealer", "trump_card", "stock", "hand_sizes", "phase",
    "first_attack_card", "previous_fool", "deal_history",
)


def _take(pool: list[str], k: int, rng: random.Random) -> list[str]:
    """``k`` cards of ``pool`` chosen uniformly at random, removed from it."""
    size = len(pool)
    for i in range(k):
        j = rng.randrange(i, size)
        pool[i], pool[j] = pool[j], pool[i]
    chosen = pool[:k]
    del pool[:k]
    return chosen


def _pick(weights: Sequence[int], rng: random.Random) -> int:
    """An index drawn with probability proportional to its (big integer) weight."""
    pick = rng.randrange(sum(weights))
    for i, w in enumerate(weights):
        if pick < w:
            return i
        pick -= w
    raise AssertionError("unreachable")  # pragma: no cover


class _SeatSlots:
    """One seat's slots: block 0 is its dealt hand, block j >= 1 its j-th draw. A card with
    deadline j may lie in blocks 0..j (it was played after the j-th draw and before the next);
    a *low* card (lower than the first-attack card) never in block 0. The cards of a deadline
    are allowed in every block up to it, so filling the blocks from the last to the first,
    every card already available stays available: the only state is how many low and plain
    cards are waiting, and the deals count exactly with binomials (``ways``)."""

    def __init__(self, sizes: list[int], low: list[list[str]], plain: list[list[str]]) -> None:
        self.sizes, self.low, self.plain = sizes, low, plain
        self._memo: dict[tuple[int, int, int], int] = {}

    def _f(self, j: int, lp: int, np_: int) -> int:
        """Deals of blocks j..0 with lp low and np_ plain cards waiting (deadline j's added)."""
        if j == 0:
            return 1 if lp == 0 and np_ == self.sizes[0] else 0
        key = (j, lp, np_)
        got = self._memo.get(key)
        if got is None:
            k = self.sizes[j]
            low, plain = len(self.low[j - 1]), len(self.plain[j - 1])
            got = sum(comb(lp, a) * comb(np_, k - a) * self._f(j - 1, lp - a + low, np_ - k + a + plain)
                      for a in range(max(0, k - np_), min(k, lp) + 1))
            self._memo[key] = got
        return got

    def ways(self, extra_low: int, extra_plain: int) -> int:
        """The deals of this seat's cards with ``extra_*`` more cards held (deadline: the last)."""
        m = len(self.sizes) - 1
        return self._f(m, len(self.low[m]) + extra_low, len(self.plain[m]) + extra_plain)

    def sample(self, extra_low: list[str], extra_plain: list[str], rng: random.Random) -> list[list[str]]:
        """One deal of the seat's cards into its blocks, uniformly (block j: its cards)."""
        m = len(self.sizes) - 1
        low, plain = self.low[m] + extra_low, self.plain[m] + extra_plain
        blocks: list[list[str]] = [[] for _ in self.sizes]
        for j in range(m, 0, -1):
            k, lp, np_ = self.sizes[j], len(low), len(plain)
            nl, nn = len(self.low[j - 1]), len(self.plain[j - 1])
            splits = range(max(0, k - np_), min(k, lp) + 1)
            a = splits[_pick([comb(lp, a) * comb(np_, k - a) * self._f(j - 1, lp - a + nl, np_ - k + a + nn)
                              for a in splits], rng)]
            blocks[j] = _take(low, a, rng) + _take(plain, k - a, rng)
            low += self.low[j - 1]
            plain += self.plain[j - 1]
        assert not low
        blocks[0] = plain
        return blocks


class _Worlds:
    """The consistent decks of one observation, counted once, drawn uniformly (Fool.sample_state).

    The public history gives every slot's size: six dealt cards a seat, and the batches drawn
    after each bout (the attacker first, then clockwise, up to six, the turned card last). It
    also tells which seat played each card first, and when: that card came from one of that
    seat's slots filled before. Cards never seen (not the observer's, never played) are shared
    among the other seats' hidden holdings and the stock; a seat's number of ways to arrange
    its cards in its slots depends only on how many *low* cards (see :class:`_SeatSlots`) it got,
    so the low cards' split between seats is drawn first, weighted by those counts and the
    binomials of which cards, then each seat's arrangement. Every consistent deck is equally
    likely (HiddenDeal draws equal sets per slot but could not weigh a seat's arrangements,
    which is why this counting is its own)."""

    def __init__(self, game: Fool, obs: dict[str, Any]) -> None:
        self.game = game
        self.obs = obs
        self._read(obs)
        # one check per observation: the first world must give the observation back exactly
        world = self.draw(random.Random(0))
        if world.observation(self.seat) != obs:
            again = world.observation(self.seat)
            differ = sorted(k for k in obs if again.get(k) != obs[k])
            raise ValueError(
                f"this fool observation does not follow from its deal history: {', '.join(differ)} differ")

    def _read(self, obs: dict[str, Any]) -> None:
        game, n = self.game, self.game.players
        missing = [k for k in _OBSERVATION_KEYS if k not in obs]
        if obs.get("game", "fool") != "fool":
            raise ValueError(f"this is an observation of {obs.get('game')!r}, not of fool")
        if missing:
            raise ValueError(f"this fool observation lacks {', '.join(missing)}")
        if obs["players"] != n:
            raise ValueError(
                f"this observation is of a {obs['players']}-player game; this fool game has {n} players")
        seat, dealer = obs["seat"], obs["dealer"]
        if type(seat) is not int or not 0 <= seat < n or type(dealer) is not int or not 0 <= dealer < n:
            raise ValueError(f"this fool observation's seat or dealer is not a seat (0..{n - 1})")
        deck = make_deck(DECK_RANKS[game.options["deck"]])
        known = set(deck)
        hand, history = obs["hand"], obs["deal_history"]
        shown = [*hand, obs["trump_card"], obs["first_attack_card"]]
        bad = [c for c in shown if c is not None and c not in known]
        if bad:
            raise ValueError(f"card {bad[0]!r} is not in this game's {len(deck)}-card deck")
        self.seat, self.dealer, self.history = seat, dealer, history
        self.previous_fool = obs["previous_fool"]
        trump_card, fac = obs["trump_card"], obs["first_attack_card"]
        if (fac is None) != (self.previous_fool is not None):
            raise ValueError(
                "a fool observation names a first-attack card exactly when there is no previous fool")
        dealt = HAND_SIZE * n
        size = len(deck) - dealt  # the stock, the turned card included
        self.deck_size, self.dealt, self.stock_size, self.trump_card = len(deck), dealt, size, trump_card
        sizes = [HAND_SIZE] * n
        public: list[set[str]] = [set() for _ in range(n)]  # seen cards each seat holds
        first: dict[str, tuple[int, int]] = {}  # card -> (seat, action index) of its first play
        fixed_dealt: list[list[str]] = [[] for _ in range(n)]  # seen cards of each dealt hand
        if size == 0:
            fixed_dealt[dealer].append(trump_card)
            public[dealer].add(trump_card)
        first_attacker = history[0][0] if history else obs.get("attacker")
        if fac is not None:
            if type(first_attacker) is not int or not 0 <= first_attacker < n:
                raise ValueError("this fool observation does not say who attacked first")
            if fac not in fixed_dealt[first_attacker]:
                fixed_dealt[first_attacker].append(fac)
            public[first_attacker].add(fac)
        draws: list[tuple[int, int, int, int]] = []  # (seat, cards, after action index, first g)
        stock = size
        table: list[str] = []
        attacker = defender = -1
        taking = in_bout = False

        def end_bout(t: int) -> None:
            nonlocal stock
            if taking:
                public[defender].update(table)
                sizes[defender] += len(table)
            for k in range(n):
                s = (attacker + k) % n
                if not stock:
                    break
                d = min(HAND_SIZE - sizes[s], stock)
                if d > 0:
                    draws.append((s, d, t, size - stock))
                    stock -= d
                    sizes[s] += d
                    if not stock:
                        public[s].add(trump_card)  # the turned card, drawn last

        def play(s: int, card: str, t: int) -> None:
            if card not in known:
                raise ValueError(f"card {card!r} in the deal history is not in this game's deck")
            sizes[s] -= 1
            table.append(card)
            if card in public[s]:
                public[s].remove(card)
            elif card in first or any(card in p for p in public) or (card == trump_card and size):
                raise ValueError(f"the deal history plays {card} twice: not a fool game")
            else:
                first[card] = (s, t)

        for t, step in enumerate(history):
            if not (isinstance(step, list) and len(step) == 2 and type(step[0]) is int
                    and 0 <= step[0] < n and isinstance(step[1], str)):
                raise ValueError(f"deal_history[{t}] is not a [seat, action] pair: {step!r}")
            s, words = step[0], step[1].split()
            verb, args = (words[0], words[1:]) if words else ("", [])
            if verb == "attack" and len(args) == 1:
                if in_bout:
                    end_bout(t - 1)
                in_bout, attacker, defender, taking, table = True, s, -1, False, []
                play(s, args[0], t)
            elif verb == "beat" and len(args) == 2 and in_bout:
                defender = s
                play(s, args[1], t)
            elif verb == "take" and not args and in_bout:
                defender, taking = s, True
            elif verb == "add" and len(args) == 1 and in_bout:
                play(s, args[0], t)
            elif verb != "pass" or args or not in_bout:
                raise ValueError(f"deal_history[{t}]: {step[1]!r} is not a fool action here")
        if in_bout and obs["phase"] in ("attack", "over"):
            end_bout(len(history) - 1)
        if sizes != obs["hand_sizes"] or stock != obs["stock"]:
            raise ValueError(
                "this fool observation's hand sizes or stock do not follow from its deal history")
        if not all(c in hand for c in public[seat]):
            raise ValueError("this fool observation's hand lacks cards its seat was seen to hold")

        # low cards: lower than the first-attack card, so in no dealt hand
        trump = trump_card[1]
        if fac is None:
            low: frozenset[str] = frozenset()
        elif fac[1] == trump:
            low = frozenset(c for c in deck if c[1] == trump and RANK_VALUE[c[0]] < RANK_VALUE[fac[0]])
        else:
            low = frozenset(c for c in deck if c[1] == trump or LOWEST_CARD_KEY[c] < LOWEST_CARD_KEY[fac])
        fixed = {trump_card, *(c for f in fixed_dealt for c in f)}

        # each seat's slots and known cards
        self.draws = draws
        self.fixed_dealt = fixed_dealt
        self.models: list[_SeatSlots] = []
        self.held: list[int] = []  # hidden cards each other seat holds now
        for s in range(n):
            mine = [i for i, (who, *_rest) in enumerate(draws) if who == s]
            blocks = [HAND_SIZE - len(fixed_dealt[s])]
            ends = []
            for i in mine:
                _, d, t_end, g0 = draws[i]
                blocks.append(d - (1 if size and g0 + d == size else 0))  # the turned card is seen
                ends.append(t_end)
            m = len(mine)
            lows: list[list[str]] = [[] for _ in range(m + 1)]
            plains: list[list[str]] = [[] for _ in range(m + 1)]
            for card, (who, t) in first.items():
                if who == s and card not in fixed:
                    j = sum(1 for e in ends if e < t)
                    (lows if card in low else plains)[j].append(card)
            held = sizes[s] - len(public[s])
            if s == seat:
                for card in hand:
                    if card not in public[s]:
                        (lows if card in low else plains)[m].append(card)
                held = 0
            placed = sum(len(x) for x in lows) + sum(len(x) for x in plains) + held
            if placed != sum(blocks) or held < 0:
                raise ValueError(
                    f"this fool observation's seat {s} holds other than its deal and draws give it")
            self.models.append(_SeatSlots(blocks, lows, plains))
            self.held.append(held)
        seen = set(first) | set(hand) | fixed
        hidden = [c for c in deck if c not in seen]
        self.hidden_low = [c for c in hidden if c in low]
        self.hidden_plain = [c for c in hidden if c not in low]
        self.rest = stock - 1 if stock else 0  # the stock still to draw, the turned card apart
        self.others = [s for s in range(n) if s != seat]
        if len(hidden) != sum(self.held) + self.rest:
            raise ValueError("this fool observation's hidden cards do not fill the other hands and the stock")
        if self.models[seat].ways(0, 0) == 0:
            raise Inconsistent("no deal of the observing seat's cards fits its deal history")
        # the low cards' split among the other seats, seat by seat: _g[i][lr] = the deals of
        # seats others[i:] and the stock with lr low cards left
        total_left = [0] * (len(self.others) + 1)
        total_left[-1] = self.rest
        for i in range(len(self.others) - 1, -1, -1):
            total_left[i] = total_left[i + 1] + self.held[self.others[i]]
        self.total_left = total_left
        nlow = len(self.hidden_low)
        self._g: list[list[int]] = [[0] * (nlow + 1) for _ in range(len(self.others) + 1)]
        for lr in range(nlow + 1):
            self._g[-1][lr] = 1 if lr <= self.rest else 0
        for i in range(len(self.others) - 1, -1, -1):
            for lr in range(nlow + 1):
                self._g[i][lr] = sum(w for _, w in self._splits(i, lr))
        if self._g[0][nlow] == 0:
            raise Inconsistent("no deal of the hidden cards fits this fool observation")
        # the consistent deals, as sets of cards per slot (each dealt hand, each draw, the stock)
        self.count = self.models[seat].ways(0, 0) * self._g[0][nlow]
        # where each seat's dealt cards go in the deck (the turned card apart), and each draw's
        last = dealt if size else dealt - 1  # with no stock, the turned card is the last dealt
        self.dealt_places = [[i for i in range(last) if (dealer + 1 + i) % n == s] for s in range(n)]
        self.draw_places = [
            [dealt + 1 + g for g in range(g0, g0 + d) if g < size - 1] for _, d, _, g0 in draws]
        self._split_memo: dict[tuple[int, int], tuple[list[int], list[int]]] = {}

    def _splits(self, i: int, lr: int) -> list[tuple[int, int]]:
        """(low cards for seat others[i], weight) with ``lr`` low cards left."""
        s = self.others[i]
        h, nr = self.held[s], self.total_left[i] - lr
        model, after = self.models[s], self._g[i + 1]
        return [(x, comb(lr, x) * comb(nr, h - x) * model.ways(x, h - x) * after[lr - x])
                for x in range(max(0, h - nr), min(h, lr) + 1)]

    def _low_for(self, i: int, lr: int, rng: random.Random) -> int:
        """How many of the ``lr`` low cards left seat others[i] holds, drawn by their deals."""
        got = self._split_memo.get((i, lr))
        if got is None:
            splits = self._splits(i, lr)
            got = self._split_memo[i, lr] = ([x for x, _ in splits], [w for _, w in splits])
        xs, weights = got
        return xs[0] if len(xs) == 1 else xs[_pick(weights, rng)]

    def draw(self, rng: random.Random) -> FoolState:
        n, dealer, dealt, size = self.game.players, self.dealer, self.dealt, self.stock_size
        low, plain = list(self.hidden_low), list(self.hidden_plain)
        blocks: list[list[list[str]]] = [[] for _ in range(n)]
        for i, s in enumerate(self.others):
            x = self._low_for(i, len(low), rng)
            held = self.held[s]
            blocks[s] = self.models[s].sample(_take(low, x, rng), _take(plain, held - x, rng), rng)
        blocks[self.seat] = self.models[self.seat].sample([], [], rng)
        deck: list[str] = [""] * self.deck_size
        for s in range(n):
            cards = blocks[s][0] + [c for c in self.fixed_dealt[s] if c != self.trump_card or size]
            shuffle(cards, rng)
            for i, c in zip(self.dealt_places[s], cards, strict=True):
                deck[i] = c
        if size:
            deck[dealt] = self.trump_card
        else:
            deck[dealt - 1] = self.trump_card
        nth = [0] * n
        for (s, *_), places in zip(self.draws, self.draw_places, strict=True):
            nth[s] += 1
            cards = blocks[s][nth[s]]
            shuffle(cards, rng)
            for i, c in zip(places, cards, strict=True):
                deck[i] = c
        rest = low + plain
        shuffle(rest, rng)
        for i, c in zip(range(self.deck_size - len(rest), self.deck_size), rest, strict=True):
            deck[i] = c
        state = self.game.new_state(seed=rng.getrandbits(64), decks=[deck], dealer=dealer,
                                    previous_fool=self.previous_fool)
        for t, (seat, action) in enumerate(self.history):
            if state.current_player != seat:
                raise ValueError(f"deal_history[{t}]: seat {seat} acts where fool's rules give the turn"
                                 f" to seat {state.current_player}")
            try:
                state.apply(action)
            except IllegalAction as error:
                raise ValueError(f"deal_history[{t}] does not replay: {error}") from None
        return state
