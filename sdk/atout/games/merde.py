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

Sampling worlds (``Merde.sample_state``, for search bots): the cards a seat has not seen (the
other hands, the cards dealt to nobody) are drawn uniformly among the deals consistent with its
observation, as :class:`atout.games.sampling.HiddenDeal` draws them but counted seat by seat
(:class:`_VoidDeal`, much faster for merde's many hands). The slots are the hands of the
seats that showed out of a suit in this deal, one each, and one more for the other hands and
the undealt cards together (nothing tells those apart; its cards are then shared out by a
shuffle). Following suit is merde's only obligation, so the one constraint is: a seat that did
not follow suit in this deal holds no card of the suit led (a hand only loses cards). The deal
is rebuilt as a deck (each hand: the cards drawn plus those it played; then the turned card,
then the undealt cards in a random order), its ``deal_history`` replayed with ``apply``; the
scores, dealer, last deal and last trick carry over from the observation; the later deals are
shuffled by the state's own generator, seeded from the caller's. See :class:`_Worlds`.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from enum import StrEnum
from functools import lru_cache
from math import comb
from typing import Any, ClassVar, cast

from .core import (
    RANKS,
    SUIT_NAMES,
    SUIT_SYMBOLS,
    SUITS,
    Game,
    IllegalAction,
    Option,
    State,
    card_text,
    cards_text,
    make_deck,
    parse_card,
    shuffle,
)
from .sampling import Inconsistent, ObservationCache


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
    _shared_tables = frozenset({"_strengths", "_strength"})  # parts of STRENGTH: clone() shares them

    def __init__(
        self, game: Game[Any], seed: int | None, decks: Any, dealer: int | None, **kwargs: Any
    ) -> None:
        if kwargs:
            raise ValueError(f"merde takes no {', '.join(map(repr, kwargs))} argument")
        State.__init__(self, game, seed, decks, dealer)
        self._setup(game)
        self._start_deal()

    def _setup(self, game: Game[Any]) -> None:
        """Everything but the first deal (apart from __init__ for :meth:`_at_deal`)."""
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

    # -- the deal -----------------------------------------------------------------------------

    def _start_deal(self, deck: list[str] | None = None) -> None:
        """Deal the next deal: from ``deck`` when given (only :meth:`_at_deal` gives one, and
        then ``_next_deck`` neither shuffles nor counts it), else from ``_next_deck``."""
        n = self.players
        self.deal += 1
        # the deal's first action is the next one (_start_deal runs inside the previous deal's
        # last apply, after history has recorded it): observation's "deal_history" starts here
        self._deal_start = len(self.history)
        # RULES.md, "Dealer": each later deal is dealt by the player to the left of the last dealer.
        self.dealer = dealer = (self.dealer + 1) % n
        size = self.deal  # deal i gives i cards to everyone
        dealt = n * size
        if deck is None:  # the hands and the card turned for trump: the rest is unused
            deck = self._next_deck(dealt + 1)
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

    @classmethod
    def _at_deal(
        cls,
        game: Game[Any],
        seed: int,
        deal: int,
        dealer: int,
        deck: list[str],
        totals: list[int],
        last_deal: dict[str, list[Any]] | None,
        last_trick: list[list[Any]] | None,
        last_trick_winner: int | None,
    ) -> MerdeState:
        """The private construction path of :meth:`Merde.sample_state` (``new_state`` always
        starts at the first deal): a state at the start of deal ``deal``, dealt by ``dealer``
        from ``deck`` (a full deck, not checked: the sampler builds it), as if the earlier
        deals had left these running ``totals``, ``last_deal`` and last trick. Its history
        starts there; the deals after it are shuffled by its generator, seeded by ``seed``."""
        state = cls.__new__(cls)
        State.__init__(state, game, seed, [], None)
        state._setup(game)
        n = state.players
        state.deal = deal - 1  # _start_deal moves both on by one
        state.dealer = (dealer - 1) % n
        state.first_dealer = (dealer - deal + 1) % n
        state.totals = totals
        state.last_deal = last_deal
        if last_trick:
            state._last_trick = (last_trick[0][0], [PLAY[card] for _, card in last_trick])
        state.last_trick_winner = last_trick_winner
        state._start_deal(deck)
        return state

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


# -- sampling worlds -----------------------------------------------------------------------------

# every key of an observation (MerdeState.observation): a sampler is given nothing else
OBSERVATION_KEYS = frozenset((
    "game", "seat", "players", "hand", "current_player", "phase", "deal", "deals",
    "cards_per_player", "dealer", "turned", "trump", "bids", "bids_total_vs_tricks", "tricks_won",
    "hand_sizes", "trick", "last_trick", "last_trick_winner", "scores", "last_deal", "deal_history",
))


@lru_cache(maxsize=4096)
def _compositions(total: int, bounds: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Every way to write ``total`` as a sum of ``len(bounds)`` parts, part i at most bounds[i]."""
    if len(bounds) == 1:
        return ((total,),) if total <= bounds[0] else ()
    rest = sum(bounds[1:])
    return tuple(
        (first, *tail)
        for first in range(max(0, total - rest), min(total, bounds[0]) + 1)
        for tail in _compositions(total - first, bounds[1:])
    )


class _VoidDeal:
    """The consistent deals of the unseen cards into the hands of the seats that showed out of
    a suit (``rooms``: how many cards each holds) and one pool (every other hidden place),
    drawn uniformly, as :class:`atout.games.sampling.HiddenDeal` draws them.

    Why not HiddenDeal itself: it counts the deals group of cards by group, the state being the
    room left in every slot, and merde has few groups (the suits, by which seats showed out of
    them) but up to six hands: at seven players, with five seats void in something, one
    observation took HiddenDeal 0.18 s to count (9,440 splits). Here the count runs seat by
    seat instead, the state being the cards left in each group (294 states, 2 ms for that
    position): ``_count(j, left)`` is the number of ways for seats j.. to take their cards
    from ``left`` (each seat only from the groups it may hold), the pool taking the rest. A
    draw walks the seats, choosing how many cards of each group a seat takes with the weight
    of the deals that choice leaves, and which ones by taking them in turn from a shuffle of
    each group: every consistent deal equally likely. The choices at each (seat, cards left)
    are kept with their cumulative weights: a draw is then one binary search per seat.
    """

    def __init__(
        self, groups: list[list[str]], rooms: list[int], allowed: list[tuple[int, ...]], pool: int
    ) -> None:
        self.groups, self.rooms, self.allowed = groups, rooms, allowed
        if sum(map(len, groups)) != sum(rooms) + pool or pool < 0:
            raise Inconsistent(
                f"{sum(map(len, groups))} hidden cards for hands of {rooms} and {pool} other places"
            )
        # the groups a voided seat may take from: only their cards need a shuffle of their own
        self._split = sorted({g for groups_of in allowed for g in groups_of})
        self._count = lru_cache(maxsize=None)(self._count_from)
        self._choices: dict[tuple[int, tuple[int, ...]], tuple[list[tuple[int, ...]], list[int]]] = {}
        self.count = self._count(0, tuple(map(len, groups)))
        if not self.count:
            raise Inconsistent(
                f"no deal of the hidden cards gives hands of {rooms} only suits their seats may hold"
            )

    def _options(self, j: int, left: tuple[int, ...]) -> list[tuple[tuple[int, ...], int]]:
        """Each way seat j can take its cards from ``left``: the cards of each group it takes,
        and the number of ways to choose them."""
        allowed = self.allowed[j]
        out = []
        for taken in _compositions(self.rooms[j], tuple(left[g] for g in allowed)):
            ways = 1
            for g, k in zip(allowed, taken, strict=True):
                ways *= comb(left[g], k)
            out.append((taken, ways))
        return out

    def _after(self, j: int, left: tuple[int, ...], taken: tuple[int, ...]) -> tuple[int, ...]:
        after = list(left)
        for g, k in zip(self.allowed[j], taken, strict=True):
            after[g] -= k
        return tuple(after)

    def _count_from(self, j: int, left: tuple[int, ...]) -> int:
        if j == len(self.rooms):
            return 1  # the pool takes what is left: its size is right by the totals
        return sum(ways * self._count(j + 1, self._after(j, left, taken))
                   for taken, ways in self._options(j, left))

    def sample(self, rng: random.Random) -> list[list[str]]:
        """One consistent deal, uniformly at random: each voided seat's cards, then the pool's
        (in no particular order: the caller shuffles the pool)."""
        groups = [list(cards) for cards in self.groups]
        for g in self._split:
            shuffle(groups[g], rng)
        at = [0] * len(groups)
        left = tuple(map(len, groups))
        out: list[list[str]] = []
        for j, allowed in enumerate(self.allowed):
            entry = self._choices.get((j, left))
            if entry is None:
                choices, bounds, total = [], [], 0
                for taken, ways in self._options(j, left):
                    weight = ways * self._count(j + 1, self._after(j, left, taken))
                    if weight:
                        total += weight
                        choices.append(taken)
                        bounds.append(total)
                entry = self._choices[j, left] = (choices, bounds)
            choices, bounds = entry
            taken = choices[bisect_right(bounds, rng.randrange(bounds[-1]))]
            hand: list[str] = []
            for g, k in zip(allowed, taken, strict=True):
                hand += groups[g][at[g] : at[g] + k]
                at[g] += k
            out.append(hand)
            left = self._after(j, left, taken)
        out.append([card for g, cards in enumerate(groups) for card in cards[at[g] :]])
        return out


class _Worlds:
    """The worlds consistent with one observation, worked out once and drawn many times.

    The hidden cards are every card the seat has not seen (it has seen its hand, the turned
    card and the cards played in this deal). They lie in the other seats' hands as they are
    now and in the stock (the cards dealt to nobody and not turned). A seat that did not
    follow suit at a trick of this deal held none of the suit led then; since a hand only
    loses cards during a deal, none of its hidden cards is of that suit. Following suit is
    merde's only obligation (no duty to trump or to beat), so these are all the constraints
    the deal history implies. The seats with such a void get a slot each in :class:`_VoidDeal`;
    the other hands and the stock share one (no constraint tells them apart). A seat's hand at
    the deal's start is then its hidden cards plus those it played; the deck is built so that
    dealing it from the dealer's left gives exactly those hands, then the turned card, then
    the stock.
    """

    def __init__(self, game: Merde, observation: dict[str, Any]) -> None:
        if not isinstance(observation, dict):
            raise ValueError(f"a merde observation is a dict, not {type(observation).__name__}")
        missing = sorted(OBSERVATION_KEYS - set(observation))
        if observation.get("game") != "merde":
            raise ValueError(f"not a merde observation: its game is {observation.get('game')!r}")
        if missing:
            raise ValueError(f"not a merde observation: it lacks {', '.join(missing)}")
        n, deals = game.players, game.options["deals"]
        if observation["players"] != n or observation["deals"] != deals:
            raise ValueError(
                f"an observation of {observation['players']} players and {observation['deals']} "
                f"deals, for a game of {n} players and {deals} deals"
            )
        try:
            self._read(n, observation)
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise ValueError(f"malformed merde observation: {type(exc).__name__} {exc}") from None
        self.observation = observation
        self.checked = False  # whether a world has shown this very observation yet

    def _read(self, n: int, obs: dict[str, Any]) -> None:
        seat, deal, dealer, size = obs["seat"], obs["deal"], obs["dealer"], obs["cards_per_player"]
        for key, value, top in (("seat", seat, n - 1), ("dealer", dealer, n - 1), ("deal", deal, None)):
            if not isinstance(value, int) or value < 0 or (top is not None and value > top):
                raise ValueError(f"malformed merde observation: {key} {value!r}")
        if size != deal:
            raise ValueError(f"malformed merde observation: deal {deal} of {size} cards each")
        played: list[list[str]] = [[] for _ in range(n)]  # each seat's cards played this deal
        voids: list[set[str]] = [set() for _ in range(n)]  # the suits each seat showed out of
        plays, led = 0, ""
        for entry in obs["deal_history"]:
            who, action = entry if isinstance(entry, list | tuple) and len(entry) == 2 else (-1, 0)
            if not (isinstance(who, int) and 0 <= who < n and isinstance(action, str)):
                raise ValueError(f"malformed merde observation: deal_history has {entry!r}")
            if action.startswith("play "):
                card = action[5:]
                if card not in PLAY:
                    raise ValueError(f"malformed merde observation: deal_history has {action!r}")
                if plays % n == 0:
                    led = card[1]  # tricks are n cards each: this one leads
                elif card[1] != led:
                    voids[who].add(led)  # RULES.md, "Play": it held no card of the suit led
                plays += 1
                played[who].append(card)
        hand, turned = list(obs["hand"]), obs["turned"]
        seen = hand + [card for cards in played for card in cards] + ([turned] if turned else [])
        if not set(seen) <= set(DECK) or len(set(seen)) != len(seen):
            raise ValueError("malformed merde observation: a card is unknown or seen twice")
        sizes = obs["hand_sizes"]
        if len(sizes) != n or sizes[seat] != len(hand) or any(
            sizes[s] + len(played[s]) != size for s in range(n)
        ):
            raise ValueError(
                f"malformed merde observation: hand sizes {sizes} and the cards played do not "
                f"make {size} cards each"
            )
        # A slot per seat that showed out of a suit; the other seats' hands and the stock may
        # hold any hidden card: one slot for all of them, its cards then shared out at random
        # (each way to share them is equally consistent, and there are as many for any cards).
        voided = [s for s in range(n) if s != seat and voids[s]]
        free = [s for s in range(n) if s != seat and not voids[s]]
        stock = len(DECK) - n * size - (1 if turned else 0)
        unseen = set(seen)
        hidden = [card for card in DECK if card not in unseen]
        # the hidden cards by group: the suits that the same voided seats showed out of
        group_of: dict[tuple[int, ...], int] = {}
        suit_group = {}
        for suit in SUITS:
            voided_in = tuple(j for j, s in enumerate(voided) if suit in voids[s])
            suit_group[suit] = group_of.setdefault(voided_in, len(group_of))
        groups: list[list[str]] = [[] for _ in group_of]
        for card in hidden:
            groups[suit_group[card[1]]].append(card)
        allowed = [tuple(g for key, g in group_of.items() if j not in key) for j in range(len(voided))]
        self.deal = _VoidDeal(
            groups, [sizes[s] for s in voided], allowed, stock + sum(sizes[s] for s in free)
        )
        self.seat, self.voided, self.played, self.hand = seat, voided, played, hand
        self.free = [(s, sizes[s]) for s in free]
        self.deal_number, self.dealer, self.size, self.turned = deal, dealer, size, turned
        self.actions = [action for _, action in obs["deal_history"]]
        scores, last_deal = list(obs["scores"]), obs["last_deal"]
        if obs["phase"] == PHASE_OVER:
            # the scores include the last deal's points, which its replay adds again
            scores = [total - points for total, points in zip(scores, last_deal["total"], strict=True)]
        self.totals = scores
        self.last_deal = None if last_deal is None else {
            "total": list(last_deal["total"]),
            "bids": list(last_deal["bids"]),
            "tricks": list(last_deal["tricks"]),
        }
        self.last_trick, self.last_trick_winner = obs["last_trick"], obs["last_trick_winner"]

    def draw(self, game: Merde, rng: random.Random) -> MerdeState:
        """One world: a deal drawn uniformly among the consistent ones, its history replayed."""
        slots = self.deal.sample(rng)
        n, size, dealer = game.players, self.size, self.dealer
        top: list[str] = [""] * (n * size)
        played = self.played
        for i, seat in enumerate(self.voided):
            top[(seat - dealer - 1) % n :: n] = played[seat] + slots[i]
        top[(self.seat - dealer - 1) % n :: n] = played[self.seat] + self.hand
        pool = slots[-1]
        shuffle(pool, rng)  # (it holds the cards group by group)
        at = 0
        for seat, held in self.free:
            top[(seat - dealer - 1) % n :: n] = played[seat] + pool[at : at + held]
            at += held
        if self.turned:
            top.append(self.turned)
        top += pool[at:]  # the stock
        last_deal = self.last_deal
        state = MerdeState._at_deal(
            game,
            rng.getrandbits(64),
            self.deal_number,
            dealer,
            top,
            self.totals[:],
            None if last_deal is None else {key: value[:] for key, value in last_deal.items()},
            self.last_trick,
            self.last_trick_winner,
        )
        try:
            for action in self.actions:
                state.apply(action)
        except IllegalAction as exc:
            raise Inconsistent(f"the deal history does not replay from any deal: {exc}") from None
        if not self.checked:
            # the first world of an observation must show it exactly; this also refuses an
            # observation no game can reach (bids, scores or tricks that do not add up)
            seen = state.observation(self.seat)
            wrong = sorted(key for key in OBSERVATION_KEYS if seen[key] != self.observation[key])
            if wrong:
                raise ValueError(f"an observation no merde game reaches: its {', '.join(wrong)} disagree")
            self.checked = True
        return state


# The worlds of the last observations sampled, by a cheap key; an entry is used only when its
# observation equals the one asked about. A search bot samples many worlds per decision.
_WORLDS_KEPT = 64
_WORLDS: ObservationCache[_Worlds] = ObservationCache(_WORLDS_KEPT)


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

    def sample_state(self, observation: dict[str, Any], rng: random.Random) -> MerdeState:
        """A world the observing seat cannot tell from the real one (see ``Game.sample_state``).

        The hidden cards (the other hands, the stock) are drawn uniformly among the deals
        consistent with the observation: a seat that did not follow suit in this deal holds
        none of the suit led then (see :class:`_Worlds`). The deal is rebuilt as a deck and its
        ``deal_history`` replayed; scores, dealer, the last deal and the last trick carry over
        from the observation; the later deals are shuffled from ``rng``. The work per
        observation is done once and kept for the next calls with an equal observation."""
        options = self.options
        try:
            key: tuple[Any, ...] | None = (
                self.players, options["deals"], options["zero_bid"], observation.get("seat"),
                observation.get("deal"), len(observation.get("deal_history") or ()),
                tuple(observation.get("hand") or ()),
            )
        except (AttributeError, TypeError):
            key = None  # not an observation: _Worlds says why, nothing is kept
        worlds = _WORLDS.get(key, observation, lambda mine: _Worlds(self, mine))
        return worlds.draw(self, rng)

    def _check_options(self, values: dict[str, Any]) -> None:
        deals, players = values["deals"], values["players"]
        if deals * players > len(DECK):
            raise ValueError(
                f"option 'deals': {deals} deals for {players} players need {deals * players} "
                f"cards in the last deal; allowed: at most {len(DECK) // players} deals"
            )
