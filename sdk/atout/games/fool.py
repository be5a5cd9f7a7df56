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
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any, cast

from .core import RANKS, SUIT_NAMES, SUITS, Game, Option, State, card_text, cards_text, make_deck
from .core import ranking_from_scores as ranking_by_count


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
