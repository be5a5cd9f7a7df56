"""The shared core of the rules engines: cards, actions, options, and the Game/State base.

Cards are plain two-character strings (``"Th"`` is the ten of hearts, ``"RJ"`` and ``"BJ"``
are regicide's jokers): cheap to compare, hash and serialise, and already their own text
form. Actions are strings too (``"beat Kd 9s"``); :class:`Action` parses and formats them
for code that wants the parts. Engines keep their speed in a few hot paths (legal actions
cached until the next move, precomputed action strings); the rest is plain code.

Seats are ``0..n-1`` clockwise; "the player to the left of X" is ``(X + 1) % n``.
"""

from __future__ import annotations

import copy
import random
import sys
import types
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from itertools import chain
from types import MappingProxyType
from typing import Any, ClassVar, Generic, NamedTuple, TypeVar

RANKS = "23456789TJQKA"
SUITS = "cdhs"
SUIT_NAMES = {"c": "clubs", "d": "diamonds", "h": "hearts", "s": "spades"}
SUIT_SYMBOLS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
JOKERS = ("RJ", "BJ")

# Spellings a person might type, mapped to the canonical rank letter.
_RANK_ALIASES = {"10": "T", "t": "T", "j": "J", "q": "Q", "k": "K", "a": "A"}


class IllegalAction(ValueError):  # noqa: N818 - the public name DESIGN.md gives
    """An action the rules do not allow now. The state is unchanged."""


def make_deck(ranks: str, suits: str = SUITS, jokers: Sequence[str] = ()) -> list[str]:
    """Every card of ``ranks`` in every suit of ``suits`` (suit-major), then the jokers."""
    return [r + s for s in suits for r in ranks] + list(jokers)


def parse_card(text: str) -> str:
    """The canonical code of a card written by a person: ``"10h"``, ``"th"``, ``"Th"`` -> ``"Th"``.

    Raises ``ValueError`` naming the text when it is not a card.
    """
    t = text.strip()
    if t.upper() in JOKERS:
        return t.upper()
    if len(t) < 2:
        raise ValueError(f"not a card: {text!r} (cards are rank then suit, like 'Th' or 'RJ')")
    rank, suit = t[:-1], t[-1].lower()
    rank = _RANK_ALIASES.get(rank.lower(), rank.upper())
    if rank not in RANKS or suit not in SUITS or len(rank) != 1:
        raise ValueError(f"not a card: {text!r} (cards are rank then suit, like 'Th' or 'RJ')")
    return rank + suit


def card_text(card: str) -> str:
    """A card as a person reads it: ``"Th"`` -> ``"10♥"``, ``"RJ"`` -> ``"Joker(R)"``."""
    if card in JOKERS:
        return f"Joker({card[0]})"
    rank = "10" if card[0] == "T" else card[0]
    return rank + SUIT_SYMBOLS[card[1]]


def cards_text(cards: Iterable[str]) -> str:
    return " ".join(card_text(c) for c in cards) or "-"


class Action(NamedTuple):
    """An action split into its verb and arguments; ``str()`` gives the action string back.

    >>> Action.parse("beat Kd 9s")
    Action.parse('beat Kd 9s')
    >>> str(Action("play", ("Qh",)))
    'play Qh'
    """

    verb: str
    args: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Action:
        words = text.split()
        if not words:
            raise ValueError("empty action")
        return cls(words[0].lower(), tuple(words[1:]))

    def __str__(self) -> str:
        return " ".join((self.verb, *self.args))

    def __repr__(self) -> str:
        return f"Action.parse({str(self)!r})"


def normalise_action(text: str) -> str:
    """Canonical spelling of an action a person typed: verb lower-case, cards canonical.

    ``"  Beat kd 10S "`` -> ``"beat Kd Ts"``. Arguments that are not cards (numbers, suit
    letters) are kept, lower-cased. Never raises: a hopeless text comes back tidied only.
    """
    words = text.split()
    if not words:
        return ""
    out = [words[0].lower()]
    for w in words[1:]:
        try:
            out.append(parse_card(w))
        except ValueError:
            out.append(w.lower())
    return " ".join(out)


@dataclass(frozen=True)
class Option:
    """One game option: its name, default, the values allowed, and what it means.

    Either ``choices`` lists the allowed values, or the option is an integer of at least
    ``minimum``. A default of ``None`` means the game computes it (from the player count).
    """

    name: str
    default: Any
    doc: str
    choices: tuple[Any, ...] = ()
    minimum: int | None = None

    def allowed_text(self) -> str:
        if self.choices:
            return " or ".join(repr(v) for v in self.choices)
        return f"an integer >= {self.minimum}"

    def check(self, value: Any) -> None:
        if self.choices:
            # type() too, so that True is not taken for 1 nor 36.0 for 36
            ok = any(value == v and type(value) is type(v) for v in self.choices)
        else:
            ok = _is_int(value) and (self.minimum is None or value >= self.minimum)
        if not ok:
            raise ValueError(
                f"option {self.name!r}: {value!r} is not allowed; allowed: {self.allowed_text()}"
            )

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "default": self.default,
            "allowed": self.allowed_text(),
            "choices": list(self.choices),
            "doc": self.doc,
        }


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_SHUFFLE_WALKS: dict[int, tuple[tuple[int, int], ...]] = {}


def shuffle(cards: list[Any], rng: random.Random) -> None:
    """Shuffle ``cards`` in place: exactly what ``rng.shuffle(cards)`` does, about twice as fast.

    The same Fisher-Yates walk as CPython's ``Random.shuffle`` (3.11 to 3.13), drawing every
    index with ``getrandbits`` as ``Random._randbelow`` does, so a seed deals the same cards
    either way; it only saves the method calls. A seeded game shuffles once per deal, and for
    short deals that shuffle is a good part of a random playout's time (bench/engines.py).
    """
    walk = _SHUFFLE_WALKS.get(len(cards))
    if walk is None:  # (i, bits needed to draw 0..i) for i from the last index down to 1
        walk = tuple((i, (i + 1).bit_length()) for i in range(len(cards) - 1, 0, -1))
        _SHUFFLE_WALKS[len(cards)] = walk
    getrandbits = rng.getrandbits
    for i, bits in walk:
        j = getrandbits(bits)
        while j > i:  # draw again until j is in 0..i, as _randbelow(i + 1) does
            j = getrandbits(bits)
        cards[i], cards[j] = cards[j], cards[i]


_TOP_WALKS: dict[tuple[int, int], tuple[tuple[int, int, int], ...]] = {}


def shuffle_top(cards: list[Any], rng: random.Random, needed: int) -> None:
    """Shuffle ``cards`` in place just enough that the top ``needed`` are uniformly random.

    The top ``needed`` cards are a uniformly random draw, in a uniformly random order, from the
    whole list, and the list stays a permutation of its cards (the rest in no particular
    order). It is a Fisher-Yates walk from the top that stops after ``needed`` cards, so it
    draws one random index per card needed instead of one per card: a seeded merde deal only
    uses its ``players x i + 1`` top cards, and the shuffle is a good part of a random
    playout's time (bench/engines.py). Not the same cards as :func:`shuffle` for a seed.
    """
    size = len(cards)
    walk = _TOP_WALKS.get((size, needed))
    if walk is None:  # (i, m, bits): swap position i with i + a draw in 0..m-1, m = size - i
        walk = tuple((i, size - i, (size - i - 1).bit_length()) for i in range(min(needed, size - 1)))
        _TOP_WALKS[size, needed] = walk
    getrandbits = rng.getrandbits
    for i, m, bits in walk:
        j = getrandbits(bits)
        while j >= m:  # draw again until j is in 0..m-1: every j equally likely
            j = getrandbits(bits)
        j += i
        cards[i], cards[j] = cards[j], cards[i]


def suit_map(suit_permutation: str | None) -> dict[str, str] | None:
    """The card relabelling of a suit permutation: ``"hdsc"`` sends clubs to hearts, diamonds
    to diamonds, hearts to spades and spades to clubs (``suit_permutation[i]`` is the new suit of
    ``SUITS[i]``); jokers stay. ``None`` (or ``"cdhs"``) is the identity: no map.

    Raises ``ValueError`` when the text is not a permutation of ``cdhs``.
    """
    if suit_permutation is None:
        return None
    if not isinstance(suit_permutation, str) or sorted(suit_permutation) != sorted(SUITS):
        raise ValueError(f"suit_permutation {suit_permutation!r} is not a permutation of {SUITS!r}")
    if suit_permutation == SUITS:
        return None
    table = _SUIT_MAPS.get(suit_permutation)
    if table is None:
        to = dict(zip(SUITS, suit_permutation, strict=True))
        table = {r + s: r + to[s] for s in SUITS for r in RANKS}
        table.update({j: j for j in JOKERS})
        _SUIT_MAPS[suit_permutation] = table
    return dict(table)  # the caller's own copy: the cached one is never changed


_SUIT_MAPS: dict[str, dict[str, str]] = {}


def relabel_action(action: str, suit_permutation: str | None) -> str:
    """``action`` with every card and suit argument relabelled by ``suit_permutation`` (the
    same action in the disguised game; the order of its arguments is kept, so a game that
    writes a set of cards in suit order, such as tiercon's four of a kind, may list them in
    another order)."""
    table = suit_map(suit_permutation)
    if table is None:
        return action
    to = dict(zip(SUITS, suit_permutation or SUITS, strict=True))
    verb, *args = action.split()
    return " ".join([verb, *(table.get(a, to.get(a, a)) for a in args)])


def ranking_from_scores(scores: Sequence[float]) -> list[int]:
    """Places by score, 1 = best; equal scores share the better place and skip the next ones.

    Scores 9, 9, 5 rank 1, 1, 3.
    """
    return [1 + sum(1 for other in scores if other > s) for s in scores]


# covariant: a Game[FoolState] is a Game[State] (state_class is only ever read)
StateT = TypeVar("StateT", bound="State", covariant=True)


class Game(Generic[StateT]):
    """A ruleset with fixed options; a factory for states (of the class ``StateT``).

    Subclasses set ``id``, ``name``, ``min_players``, ``max_players``, ``OPTIONS``, ``SUMMARY``,
    ``RULES_VERSION`` and ``state_class``, and may override :meth:`_check_options` for checks
    across options.
    """

    id: ClassVar[str]
    name: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    allowed_players: ClassVar[tuple[int, ...] | None] = None  # when not a plain range
    default_players: ClassVar[int]
    OPTIONS: ClassVar[tuple[Option, ...]] = ()
    SUMMARY: ClassVar[str] = ""
    # The version of the rules this engine implements, in describe() as "rules_version". Bump
    # it when a rule change makes old action logs replay differently (an action that was legal
    # no longer is, or leads to another position): a stored match keeps the version it was
    # played under. Every game sets its own; 1 is the first version.
    RULES_VERSION: ClassVar[int] = 1
    # The oldest rules version whose action logs this engine plays exactly as they were played:
    # a later version changed only how a finished game is ranked (see ranking_under). Matches of
    # those versions still replay here; None: only matches of RULES_VERSION do.
    REPLAYS_SINCE: ClassVar[int | None] = None
    state_class: type[StateT]  # set by each game's class (a ClassVar cannot be generic)

    def __init__(self, players: int | None = None, **options: Any) -> None:
        if players is None:
            players = self.default_players
        counts = self.player_counts()
        if not _is_int(players) or players not in counts:
            raise ValueError(
                f"option 'players': {players!r} is not allowed for {self.id}; allowed: "
                + ", ".join(str(c) for c in counts)
            )
        known = {o.name: o for o in self.OPTIONS}
        for name in options:
            if name not in known:
                raise ValueError(
                    f"unknown option {name!r} for {self.id}; options are: players"
                    + "".join(", " + o for o in known)
                )
        values: dict[str, Any] = {"players": players}
        for opt in self.OPTIONS:
            if opt.name in options:
                opt.check(options[opt.name])
                values[opt.name] = options[opt.name]
            else:
                values[opt.name] = self._default(opt, players)
        self._check_options(values)
        self.players: int = players
        self.options = MappingProxyType(values)

    @classmethod
    def player_counts(cls) -> tuple[int, ...]:
        if cls.allowed_players is not None:
            return cls.allowed_players
        return tuple(range(cls.min_players, cls.max_players + 1))

    def _default(self, opt: Option, players: int) -> Any:
        return opt.default

    def _check_options(self, values: dict[str, Any]) -> None:
        """Checks that involve several options; raise ValueError naming the option."""

    @classmethod
    def replays(cls, version: int) -> bool:
        """Whether a game played under rules ``version`` replays on this engine, action for
        action (``RULES_VERSION``, or a version since ``REPLAYS_SINCE``)."""
        since = cls.RULES_VERSION if cls.REPLAYS_SINCE is None else cls.REPLAYS_SINCE
        return since <= version <= cls.RULES_VERSION

    @classmethod
    def ranking_under(cls, version: int, state: State) -> list[int]:
        """The ranking the finished ``state`` had under rules ``version`` (one that
        :meth:`replays`): its ranking today unless a version changed how games are ranked."""
        return list(state.ranking)

    @classmethod
    def describe(cls) -> dict[str, Any]:
        """The ruleset as data: id, name, rules version, player counts, options and a summary of
        the rules."""
        return {
            "id": cls.id,
            "name": cls.name,
            "rules_version": cls.RULES_VERSION,
            "players": list(cls.player_counts()),
            "default_players": cls.default_players,
            "options": [o.describe() for o in cls.OPTIONS],
            "summary": cls.SUMMARY,
        }

    def new_state(
        self,
        seed: int | None = None,
        decks: Sequence[Sequence[str]] | None = None,
        dealer: int | None = None,
        suit_permutation: str | None = None,
        **kwargs: Any,
    ) -> StateT:
        """A new game. ``seed`` drives shuffles and draws by lot; ``decks`` fixes the deck of
        each deal (top first, deals beyond the list fall back to the seed); ``dealer`` fixes
        the first dealer.

        ``suit_permutation`` (see :func:`suit_map`; default: none) disguises the seeded deals:
        every deck the seed shuffles is relabelled by it before it is dealt, so the trump and
        every action follow and the game is the same game with other suits (the arena uses it
        for duplicate rotations). A game whose rules are not symmetric in its suits relabels
        only as far as keeps the game the same (fool: :meth:`State._relabelled`). Decks the
        caller gives are dealt as given."""
        if dealer is not None and (not _is_int(dealer) or not 0 <= dealer < self.players):
            raise ValueError(f"dealer {dealer!r} is not a seat (0..{self.players - 1})")
        table = suit_map(suit_permutation)  # checks it
        state = self.state_class.__new__(self.state_class)
        # Set before __init__: the engines deal their first deal in their constructor. The text,
        # not the table: clone() copies a string for nothing.
        state._suit_permutation = None if table is None else suit_permutation
        self.state_class.__init__(state, self, seed, decks, dealer, **kwargs)
        return state

    def sample_state(self, observation: dict[str, Any], rng: random.Random) -> StateT:
        """A full state that the observing seat cannot tell from the real one: a world for a
        search bot to play out.

        Its hidden cards (the other hands, the stock, the cards set aside) are drawn uniformly
        among the deals consistent with everything the seat has seen (see each game's
        ``sample_state`` for what that is, and :mod:`atout.games.sampling`): the current
        deal's public history (``observation["deal_history"]``) replays legally from the
        drawn deal, so a seat that did not follow suit holds none of that suit, and
        ``sampled.observation(observation["seat"]) == observation``. What lies beyond the
        current deal (later deals, the order of a stock) is drawn at random too. Raises
        ``ValueError`` when the observation is not one of this game with these options, or
        :class:`atout.games.sampling.Inconsistent` when no deal fits it."""
        raise NotImplementedError(f"{self.id} cannot sample states yet")  # pragma: no cover

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"new_game({self.id!r}, {opts})"


# -- State.clone(): a copy that knows the engines' kinds of data -----------------------------

# Types whose values never change: a clone shares them. Enum types join when first met.
_IMMUTABLE: set[type] = {int, str, bool, float, complex, bytes, range, type(None), type}
_IMMUTABLE.update((types.FunctionType, types.BuiltinFunctionType))
_NESTED = frozenset((tuple, frozenset))  # immutable when their items are
_MUTABLE = frozenset((list, dict, set, bytearray))


def _immutable(items: Collection[Any], depth: int = 3) -> bool:
    """Whether every one of ``items`` is immutable: a value of an :data:`_IMMUTABLE` type or an
    Enum member, or a tuple or frozenset of such (nested up to ``depth`` levels). The type checks
    run in C (``map(type, ...)``), so a list of a hundred cards or history pairs costs little."""
    kinds = set(map(type, items))
    if kinds <= _IMMUTABLE:
        return True
    nested = kinds - _IMMUTABLE
    if not nested <= _NESTED:
        if not nested.isdisjoint(_MUTABLE):
            return False
        for kind in list(nested):
            if kind not in _NESTED and issubclass(kind, Enum):  # members are singletons
                _IMMUTABLE.add(kind)
                nested.discard(kind)
        if not nested:
            return True
        if not nested <= _NESTED:
            return False
    if depth == 0:
        return False
    inner = items if kinds == nested else [x for x in items if type(x) in _NESTED]
    return _immutable(list(chain.from_iterable(inner)), depth - 1)


def _clone_value(value: Any, memo: dict[int, Any]) -> Any:
    """A copy of ``value`` for :meth:`State.clone`, as independent as ``copy.deepcopy``'s and
    sharing what ``memo`` (``id -> copy``, deepcopy's own protocol) already copied, so that two
    attributes holding one list still hold one list in the clone."""
    kind = type(value)
    if kind in _IMMUTABLE:
        return value
    found = memo.get(id(value))
    if found is not None:
        return found
    copier = _COPIERS.get(kind)
    if copier is not None:
        return copier(value, memo)
    if issubclass(kind, Enum):
        _IMMUTABLE.add(kind)
        return value
    return copy.deepcopy(value, memo)  # a kind the engines do not use (yet): the slow, sure way


def _flat_copies(values: Collection[Any], memo: dict[int, Any]) -> list[Any] | None:
    """Copies of ``values`` when they are all lists of immutable values (a hand, a hand's
    suits), each copied flat or taken from ``memo``; None when they are not."""
    if set(map(type, values)) != _LIST or not _immutable(list(chain.from_iterable(values))):
        return None
    copies = []
    for value in values:
        new = memo.get(id(value))
        if new is None:
            new = memo[id(value)] = value.copy()
        copies.append(new)
    return copies


_LIST = {list}


def _clone_list(value: list[Any], memo: dict[int, Any]) -> list[Any]:
    if _immutable(value):
        new = memo[id(value)] = value.copy()
        return new
    new = memo[id(value)] = []
    copies = _flat_copies(value, memo)  # lists of lists (hands): one level deeper
    new.extend([_clone_value(x, memo) for x in value] if copies is None else copies)
    return new


def _clone_dict(value: dict[Any, Any], memo: dict[int, Any]) -> dict[Any, Any]:
    values = value.values()
    if _immutable(values) and _immutable(value):
        new = memo[id(value)] = value.copy()
        return new
    new = memo[id(value)] = {}
    copies = _flat_copies(values, memo) if _immutable(value) else None
    if copies is not None:  # a hand by suit: one level deeper
        new.update(zip(value, copies))  # noqa: B905 - the dict's own keys and values
    else:
        for key, item in value.items():
            new[_clone_value(key, memo)] = _clone_value(item, memo)
    return new


def _clone_set(value: set[Any], memo: dict[int, Any]) -> set[Any]:
    new = value.copy() if _immutable(value) else copy.deepcopy(value, memo)
    memo[id(value)] = new
    return new


def _clone_tuple(value: tuple[Any, ...], memo: dict[int, Any]) -> tuple[Any, ...]:
    if _immutable(value):
        return value
    new = memo[id(value)] = tuple([_clone_value(x, memo) for x in value])
    return new


def _clone_frozenset(value: frozenset[Any], memo: dict[int, Any]) -> frozenset[Any]:
    return value if _immutable(value) else copy.deepcopy(value, memo)


class _LazyRandom(random.Random):
    """A copy of a generator that takes its state only when first drawn from.

    An engine draws from its generator only to shuffle the next deal, and most clones a search
    plays out never get there: so a clone holds the original's state (the tuple ``getstate()``
    gave, shared by every clone of it) and becomes a plain ``random.Random`` with that state at
    its first draw. It draws exactly what the original would have."""

    __slots__ = ()  # the layout of random.Random, so that its class can become that one

    _snapshot: tuple[Any, ...]
    gauss_next: float | None

    @classmethod
    def of(cls, snapshot: tuple[Any, ...]) -> _LazyRandom:
        new = cls.__new__(cls)  # not __init__, which would seed it
        new._snapshot = snapshot
        new.gauss_next = snapshot[2]
        return new

    def _wake(self) -> None:
        if type(self) is _LazyRandom:
            gauss_next = self.gauss_next  # gauss() may have used it since
            snapshot = self.__dict__.pop("_snapshot")
            self.__class__ = random.Random  # type: ignore[assignment]
            random.Random.setstate(self, snapshot)
            self.gauss_next = gauss_next

    def random(self) -> float:
        # _LazyRandom._wake, not self._wake: a method bound before the first draw (core.shuffle
        # binds getrandbits) still runs here after it, when self is a plain Random
        _LazyRandom._wake(self)
        return random.Random.random(self)

    def getrandbits(self, k: int, /) -> int:
        _LazyRandom._wake(self)
        return random.Random.getrandbits(self, k)

    def getstate(self) -> tuple[Any, ...]:
        if type(self) is _LazyRandom:
            return (*self._snapshot[:2], self.gauss_next)
        return random.Random.getstate(self)

    def setstate(self, state: tuple[Any, ...]) -> None:
        _LazyRandom._wake(self)
        random.Random.setstate(self, state)

    def seed(self, *args: Any, **kwargs: Any) -> None:
        _LazyRandom._wake(self)
        random.Random.seed(self, *args, **kwargs)

    def __reduce__(self) -> tuple[Any, ...]:
        return random.Random, (), self.getstate()


def _references(value: Any) -> int:
    """CPython's reference count of ``value`` (-1 in a Python without one)."""
    count = getattr(sys, "getrefcount", None)
    return -1 if count is None else count(value)


class _Holder:
    __slots__ = ("held",)
    held: object


def _sole_references() -> int:
    """What :func:`_references` says, called as State.clone calls it, of a value that nothing
    but one attribute holds (the attribute, a variable, the arguments: 4 in CPython 3.11)."""
    holder = _Holder()
    holder.held = object()
    value = holder.held
    return _references(value)


_SOLE_REFERENCES = _sole_references()


def _clone_random(value: random.Random, memo: dict[int, Any]) -> random.Random:
    if type(value) is _LazyRandom:
        new = _LazyRandom.of(value._snapshot)
        new.gauss_next = value.gauss_next
    else:
        new = _LazyRandom.of(value.getstate())
    memo[id(value)] = new
    return new


_COPIERS: dict[type, Callable[[Any, dict[int, Any]], Any]] = {
    list: _clone_list,
    dict: _clone_dict,
    set: _clone_set,
    tuple: _clone_tuple,
    frozenset: _clone_frozenset,
    random.Random: _clone_random,
    _LazyRandom: _clone_random,
}

# Per State class: the names of its slots (None: the class copies itself its own way).
_CLONE_PLANS: dict[type, tuple[str, ...] | None] = {}


def _clone_plan(cls: type) -> tuple[str, ...] | None:
    """The slot attributes of ``cls`` that :meth:`State.clone` copies besides its ``__dict__``,
    or None when ``cls`` customises copying (``__deepcopy__``, ``__reduce_ex__``...): then
    clone() leaves it to ``copy.deepcopy``."""
    if cls in _CLONE_PLANS:
        return _CLONE_PLANS[cls]
    custom = any(
        name in klass.__dict__
        for klass in cls.__mro__[:-1]  # not object
        for name in ("__deepcopy__", "__reduce_ex__", "__reduce__", "__getstate__", "__setstate__")
    )
    names: list[str] = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name in ("__dict__", "__weakref__"):
                continue
            if name.startswith("__") and not name.endswith("__"):  # name-mangled
                name = f"_{klass.__name__.lstrip('_')}{name}"
            names.append(name)
    plan = _CLONE_PLANS[cls] = None if custom else tuple(names)
    return plan


class State:
    """The mutable play of one game. Subclasses implement the rules.

    Subclasses keep ``self.current_player`` up to date, call ``self._game_over()`` when the
    game ends (it sets ``current_player`` to ``None`` and ``is_terminal``), and implement
    ``_legal_actions()``, ``_do(action)``, ``observation(seat)`` and ``scores``.
    ``apply`` is the one checked entry point: an illegal action raises :class:`IllegalAction`
    with a reason and leaves the state as it was.

    The legal actions are cached in ``self._legal``, which ``apply`` empties before calling
    ``_do``; a ``_do`` that already knows the next player's legal actions may put them there,
    exactly what ``_legal_actions()`` would return, to save working them out again. The core
    only reads the cache (``legal_actions()`` returns a copy), so ``_do`` and
    ``_legal_actions()`` may hand over a list the state keeps (a hand, a table of bids),
    provided nothing changes it before the next move.

    For the conformance suite every state also implements ``_locations()``: a dict from place
    name to the cards there, every card of the deck in exactly one place. ``"hand:N"`` is seat
    N's hand, names starting ``"hidden:"`` are face down (stock, cards set aside), any other
    place is face up for everyone (the trick, won tricks, the turned card, the discard). Cards
    that were shown to everyone and then went into a hand (a turned card taken by its opener,
    an announced combination) are kept in ``self._revealed``.
    """

    # The deck of this game; a subclass whose deck depends on options sets it on the
    # instance before calling ``State.__init__``.
    FULL_DECK: tuple[str, ...] = ()
    # The relabelling of the seeded decks (Game.new_state's suit_permutation), None: none.
    _suit_permutation: str | None = None
    # Attributes that only ever hold read-only tables (a module's precomputed ones): clone()
    # shares them instead of copying them.
    _shared_tables: ClassVar[frozenset[str]] = frozenset()

    # Slots only make the hot attributes faster to read (subclasses still get a __dict__).
    __slots__ = (
        "__dict__",
        "_deals_started",
        "_decks",
        "_legal",
        "_revealed",
        "_rng",
        "current_player",
        "first_dealer",
        "game",
        "history",
        "is_terminal",
        "players",
        "seed",
    )

    def __init__(
        self, game: Game[Any], seed: int | None, decks: Sequence[Sequence[str]] | None, dealer: int | None
    ) -> None:
        self.game = game
        self.players = game.players
        self.seed = seed
        self._rng = random.Random(seed)
        self._decks = [self._check_deck(d, i) for i, d in enumerate(decks or ())]
        self._deals_started = 0
        self.history: list[tuple[int, str]] = []
        self.current_player: int | None = None
        # A plain attribute, not a property of current_player: every decision of a playout
        # reads it (bench/engines.py). _game_over() is the one place that sets it.
        self.is_terminal = False
        self._legal: list[str] | None = None
        self._revealed: set[str] = set()
        # The lot is drawn even when the caller fixes the dealer, and _next_deck consumes the
        # generator the same way for a deck the caller gave: so with a seed, the deals beyond
        # the caller's decks are exactly the deals the seed alone would have given.
        lot = self._rng.randrange(self.players)
        self.first_dealer = dealer if dealer is not None else lot

    # -- decks -----------------------------------------------------------------------------

    def _check_deck(self, deck: Sequence[str], index: int) -> list[str]:
        cards = list(deck)
        full = self.FULL_DECK
        if len(cards) != len(full) or set(cards) != set(full):
            missing = sorted(set(full) - set(cards))
            extra = sorted(set(cards) - set(full))
            dupes = sorted({c for c in cards if cards.count(c) > 1})
            raise ValueError(
                f"deck {index} is not a full {self.game.id} deck of {len(full)} cards"
                f" (missing {missing}, unknown {extra}, repeated {dupes})"
            )
        return cards

    @property
    def deals_started(self) -> int:
        """How many deals this state has started (each took the next deck: a given one, else
        the seed's shuffle)."""
        return self._deals_started

    @property
    def decks_given(self) -> int:
        """How many decks the caller has given: ``new_state``'s ``decks``, then :meth:`give_decks`'."""
        return len(self._decks)

    def give_decks(self, decks: Sequence[Sequence[str]]) -> None:
        """Give the decks of the deals after those already given, each checked as
        ``new_state``'s ``decks`` are (a ``ValueError`` naming what is wrong). Deck ``i`` is the
        one of the ``i``-th deal (from 0): a deck given for a deal that has already started is
        never read. A caller that draws each deck itself (``atout.openspiel``'s chance nodes)
        gives the next deal's deck before the action that starts it."""
        start = len(self._decks)
        self._decks.extend(self._check_deck(deck, start + i) for i, deck in enumerate(decks))

    def _next_deck(self, needed: int | None = None) -> list[str]:
        """The deck for the next deal: the caller's, else a seeded shuffle.

        A deal that only uses the top ``needed`` cards may say so: then only those are shuffled
        at random (:func:`shuffle_top`); the rest of the deck is still all the other cards.
        """
        i = self._deals_started
        self._deals_started += 1
        deck = list(self.FULL_DECK)
        if needed is None:
            shuffle(deck, self._rng)
        else:
            shuffle_top(deck, self._rng, needed)
        if i < len(self._decks):
            # The caller's deck. The shuffle above still ran, so that the seeded deals after it
            # do not depend on which decks were given.
            return list(self._decks[i])
        if self._suit_permutation is not None:
            table = suit_map(self._suit_permutation)
            assert table is not None
            return self._relabelled(deck, table)
        return deck

    def _relabelled(self, deck: list[str], table: dict[str, str]) -> list[str]:
        """A seeded ``deck`` relabelled by the suit permutation ``table``. A game whose rules
        treat suits unequally overrides it to relabel only as far as keeps the game the same."""
        return [table[c] for c in deck]

    # -- the public API --------------------------------------------------------------------

    def _game_over(self) -> None:
        """The game has ended: nobody is to act any more."""
        self.current_player = None
        self.is_terminal = True
        self._legal = []

    def legal_actions(self) -> list[str]:
        """The legal actions of the player to act, in a canonical order (empty when over)."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._legal_actions() if self.current_player is not None else []
        return legal.copy()  # a fresh list: the caller may change it (.copy() beats list())

    def apply(self, action: str) -> None:
        """Play ``action`` for the current player; IllegalAction (state unchanged) if not legal."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._legal_actions() if self.current_player is not None else []
        if action not in legal:
            if not isinstance(action, str):
                raise IllegalAction(f"illegal action {action!r}: actions are strings like 'play Th'")
            tidy = normalise_action(action)
            if tidy not in legal:
                if self.current_player is None:
                    raise IllegalAction(f"illegal action {action!r}: the game is over")
                raise IllegalAction(self._why_illegal(tidy, action))
            action = tidy
        seat = self.current_player
        assert seat is not None  # an action is legal only while someone is to act
        self.history.append((seat, action))
        self._legal = None
        self._do(action)

    def _why_illegal(self, action: str, original: str) -> str:
        """A reason for the error message; games override it with rule-specific reasons."""
        return self._generic_reason(original)

    def _generic_reason(self, original: str, why: str = "") -> str:
        legal = self._legal or []
        shown = ", ".join(repr(a) for a in legal[:12]) + (", ..." if len(legal) > 12 else "")
        lead = f"illegal action {original!r} for seat {self.current_player}"
        return f"{lead}: {why or 'not allowed now'}; legal: {shown}"

    @property
    def ranking(self) -> list[int]:
        """Place per seat (1 = best, ties share the better place); final once terminal."""
        return ranking_from_scores(self.scores)

    @property
    def scores(self) -> list[int]:  # pragma: no cover - every game overrides
        raise NotImplementedError

    def observation(self, seat: int) -> dict[str, Any]:  # pragma: no cover - overridden
        raise NotImplementedError

    def _legal_actions(self) -> list[str]:  # pragma: no cover - overridden
        raise NotImplementedError

    def _do(self, action: str) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def _locations(self) -> dict[str, list[str]]:  # pragma: no cover - overridden
        raise NotImplementedError

    def clone(self) -> State:
        """An independent copy (the Game, which is immutable, is shared).

        As independent as ``copy.deepcopy`` and about ten times faster, which a search bot
        playing out thousands of clones a decision needs (bench/search.py): each attribute is
        copied by its kind (immutable values shared, lists, dicts and sets of them copied flat,
        nested ones one level deeper, the random generator lazily, anything else by deepcopy),
        containers that two attributes share stay shared, and the read-only tables a game
        names in ``_shared_tables`` are shared (tests/games/test_clone.py)."""
        cls = type(self)
        memo: dict[int, Any] = {id(self.game): self.game}
        plan = _clone_plan(cls)
        if plan is None:
            return copy.deepcopy(self, memo)
        new = cls.__new__(cls)
        memo[id(self)] = new
        for name in plan:
            try:
                value = getattr(self, name)
            except AttributeError:  # a slot never set
                continue
            if type(value) in _IMMUTABLE:
                setattr(new, name, value)
                continue
            if type(value) is random.Random and _references(value) == _SOLE_REFERENCES != -1:
                # the original's generator, when nothing else holds it, becomes a lazy copy of
                # itself too, so that the next clones of this state share its snapshot
                value = _LazyRandom.of(value.getstate())
                setattr(self, name, value)
            setattr(new, name, _clone_value(value, memo))
        attributes = new.__dict__
        attributes.update(self.__dict__)
        shared = cls._shared_tables
        for name, value in attributes.items():
            if type(value) not in _IMMUTABLE and name not in shared:
                attributes[name] = _clone_value(value, memo)
        return new

    def _check_seat(self, seat: int) -> None:
        if not _is_int(seat) or not 0 <= seat < self.players:
            raise ValueError(f"seat {seat!r} is not a seat of this game (0..{self.players - 1})")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.game!r} seed={self.seed!r} moves={len(self.history)}>"
