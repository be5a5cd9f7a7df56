"""Request and response bodies of the REST API.

``...Create`` models are what a client sends, ``...Public`` (and other response models) what it
gets back; storage models (:mod:`atout_arena.core.models`) never leave the server. Every bound here
(lengths, ranges) is there so that a bad request is a 422 that says what is wrong, never an
error deeper down.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from atout_arena.services.bots import BOT_NAME_REGEX, BOT_REF_REGEX

MAX_ID = 2**62  # ids and seeds are 64-bit integers in the database

# The statuses, as enums in the OpenAPI. Spelled out, as a type checker reads a Literal (one built
# from the vocabulary at run time is no type to it); test_openapi checks they are the vocabulary's
# (core.vocabulary), in its order.
MatchStatusName = Literal["pending", "queued", "running", "finished", "failed", "cancelled"]
TournamentStatusName = Literal["created", "running", "finished", "cancelled"]
TestStatusName = Literal["running", "finished", "cancelled"]
OutcomeName = Literal["finished", "forfeit", "error"]

BotRef = Annotated[
    Annotated[int, Field(ge=1, le=MAX_ID, description="a bot's id")]
    | Annotated[str, StringConstraints(pattern=BOT_REF_REGEX, max_length=64),
                Field(description="a bot's name, or its id as a string of digits")],
    Field(description="a bot: its name, or its id (an integer or a string of digits)"),
]
# The rulesets' ids, as an enum in the OpenAPI (an unknown game is a 422 that lists them); those of
# atout.games.GAMES, in its order (test_openapi checks it).
GameId = Literal["merde", "tiercon", "regicide", "fool"]
Options = Annotated[
    dict[str, Any],
    Field(
        description="game options as keywords (see GET /v1/games); a bad one is a 422 with the engine's "
        "message",
    ),
]
Seed = Annotated[int, Field(ge=0, le=MAX_ID)]


def _integral(value: Any) -> Any:
    """``2.0`` as ``2`` (JSON Schema counts it an integer), in lists too; anything else as is."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


class Strict(BaseModel):
    """What a client sends: no unknown field, no bool or string for an integer (``true`` and
    ``"2"`` are refused; ``2.0`` is 2, as JSON Schema has it), finite numbers."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _integral_numbers(cls, value: Any) -> Any:
        return _integral(value)


def _utc(value: datetime | None) -> datetime | None:
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


UtcDatetime = Annotated[datetime, AfterValidator(_utc)]  # stored naive in UTC: sent with its zone


# -- games ------------------------------------------------------------------------------------


class GameOption(BaseModel):
    name: str
    default: Any
    allowed: str = Field(description="the allowed values in words")
    choices: list[Any] = Field(description="the allowed values, when they are a list")
    doc: str


class GamePublic(BaseModel):
    id: str
    name: str
    players: list[int] = Field(description="the player counts the ruleset allows")
    default_players: int
    options: list[GameOption]
    summary: str = Field(description="the rules in a paragraph (RULES.md has them all)")
    rules_version: int = Field(description="the version of these rules; stored with every match played")


# -- bots -------------------------------------------------------------------------------------


class BotCreate(Strict):
    name: Annotated[
        str,
        StringConstraints(min_length=1, max_length=64),
        # The pattern is stated in the schema; the route checks it (services.bots.bot_name_problem)
        # with a message that says which rule the name breaks.
        Field(
            json_schema_extra={"pattern": BOT_NAME_REGEX},
            description="1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit, not "
            "all digits (those are ids); 'house-' is reserved",
            examples=["alice"],
        ),
    ]
    owner: Annotated[str, StringConstraints(max_length=128)] = ""
    kind: Literal["bot", "human"] = Field(
        default="bot", description="human: a person who plays at the dashboard")
    move_ms: Annotated[
        int | None,
        Field(ge=1, le=240_000, description="its own move time, when longer than a match's (human: 60000)"),
    ] = None


class BotPublic(BaseModel):
    id: int
    name: str
    owner: str
    created_at: datetime
    disabled: bool
    house: bool = Field(description="an arena-run house bot (practice opponent)")
    connected: bool = Field(description="has a live stream to a game server now")
    kind: str = Field(default="bot", description="bot, or human (a person at the dashboard)")


class BotCreated(BotPublic):
    token: str = Field(description="the bot's token: shown this once, only its hash is kept")


class BotToken(BaseModel):
    id: int
    name: str
    token: str = Field(description="the new token (the old one stopped working); shown this once")


class GameRating(BaseModel):
    game: str
    online: float = Field(description="the live Elo, updated as each match ends")
    matches: int
    rating: float | None = Field(description="the fitted rating of the game's leaderboard")
    ci_low: float | None
    ci_high: float | None
    rank: int | None


class BotMatch(BaseModel):
    match_id: int
    game: str
    tournament_id: int | None
    status: MatchStatusName
    seat: int
    players: int
    place: int | None
    score: int | None
    faults: int
    forfeited: bool
    version: str = Field(description="the version the bot played this match with (its Hello's label)")
    finished_at: datetime | None


class FaultCounts(BaseModel):
    total: int = Field(description="faults over the matches of the figures' window (figures_window)")
    forfeits: int = Field(description="matches forfeited, over the same matches")
    timeout: int = Field(description="by kind, over the same matches: the kinds add up to total")
    illegal: int
    disconnected: int
    absent: int = Field(default=0, description="not connected when the match started (forfeited as absent)")
    matches_counted: int


class ThinkTime(BaseModel):
    decisions: int = Field(description="decisions the bot answered, over the matches of the figures' window")
    p50_ms: float | None = Field(description="the latency the arena observed, request to answer")
    p99_ms: float | None
    told: int = Field(description="decisions whose think time the bot reported itself")
    bot_p50_ms: float | None = Field(description="the bot's own time to decide, as it reported it")
    bot_p99_ms: float | None
    network_p50_ms: float | None = Field(description="observed minus reported: network and queueing")
    network_p99_ms: float | None
    matches_counted: int


class FiguresWindow(BaseModel):
    matches: int = Field(description="the window: the bot's last this many finished matches")
    counted: int = Field(description="finished matches in it (fewer when the bot has played fewer)")
    description: str


class VersionResults(BaseModel):
    version: str = Field(description='the Hello\'s version label ("" for a stream that gave none)')
    matches: int = Field(description="finished matches played with this version (all of them)")
    wins: int = Field(description="matches it won: first, with no opponent sharing first place (all of them)")
    mean_place: float | None
    faults: FaultCounts | None = Field(
        default=None, description="its faults over its matches in the figures' window (null: none)")
    think_time: ThinkTime | None = Field(
        default=None, description="its think times over its matches in the figures' window (null: none)")


class RatingPoint(BaseModel):
    match_id: int
    at: datetime
    rating: float = Field(description="the online Elo after this match")


class RatingHistory(BaseModel):
    game: str
    start: float = Field(description="the online Elo before the first point")
    points: list[RatingPoint] = Field(description="after each rated match, oldest first (the latest 500)")


class BotLadder(BaseModel):
    ladder_id: int
    name: str
    game: str
    status: str = Field(description="running or paused")
    members: int
    rank: int
    ordinal: float = Field(description="mu - 3 sigma")
    mu: float
    sigma: float
    games: int
    sets: int
    provisional: bool


class BotDetail(BotPublic):
    ratings: list[GameRating]
    recent_matches: list[BotMatch]
    figures_window: FiguresWindow = Field(description=(
        "the one window of every figure (faults, their kinds, forfeits, think times; the bot's and "
        "each version's): its last finished matches"))
    faults: FaultCounts
    think_time: ThinkTime
    versions: list[VersionResults] = Field(description="results and figures by the version it played with")
    rating_history: list[RatingHistory] = Field(default_factory=list, description=(
        "its online Elo in each game after each of its rated matches, oldest first"))
    ladders: list[BotLadder] = Field(
        default_factory=list, description="its line in each ladder it is a member of")


# -- competitions -----------------------------------------------------------------------------


class CompetitionCreate(Strict):
    game: GameId
    players: Annotated[int | None, Field(ge=2, le=7, description="seats per match (default: the game's)")] = (
        None
    )
    options: Options = Field(default_factory=dict)
    games_per_pairing: Annotated[int, Field(ge=1, le=100)] = 1
    duplicate: bool = Field(default=False, description="play each seeded deal in every seat rotation")
    move_ms: Annotated[int, Field(ge=1, le=300_000, description="time per move, milliseconds")] = 1000
    time_bank_ms: Annotated[int, Field(ge=0, le=300_000)] = 0
    max_faults: Annotated[int, Field(ge=0, le=1000, description="faults before a forfeit (0: never)")] = 3

    def competition(self) -> dict[str, Any]:
        """The fields tournaments and leagues share, as ``create_tournament`` and
        ``create_league`` take them."""
        return {
            "game": self.game,
            "players": self.players,
            "options": self.options,
            "games_per_pairing": self.games_per_pairing,
            "duplicate": self.duplicate,
            "move_ms": self.move_ms,
            "time_bank_ms": self.time_bank_ms,
            "max_faults": self.max_faults,
        }


class TournamentCreate(CompetitionCreate):
    name: Annotated[str, StringConstraints(min_length=1, max_length=128), Field(examples=["spring cup"])]
    bots: Annotated[list[BotRef], Field(min_length=2, max_length=64)]
    seed: Seed | None = Field(default=None, description="the schedule's seed (default: random, stored)")
    start: bool = Field(default=False, description="start it at once")
    absent_grace_s: Annotated[float, Field(
        ge=0, le=3600, allow_inf_nan=False,
        description="how long a match waits at its start for an entrant that is not connected, "
                    "before forfeiting its seat as 'absent' (seconds)")] = 10.0

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "name": "spring cup", "game": "merde", "players": 4, "options": {"deals": 5},
        "bots": ["alice", "bob", "carol", "dave", 5], "games_per_pairing": 2, "duplicate": True,
        "move_ms": 1000, "max_faults": 3, "start": True,
    }]})


class Progress(BaseModel):
    total: int
    done: int = Field(description="finished, failed or cancelled")
    percent: float
    by_status: dict[str, int]


class StandingRow(BaseModel):
    rank: int
    bot: str
    bot_id: int
    matches: int
    points: float
    wins: int = Field(description="first places shared with no opponent (partners in a team game do share)")
    places: dict[str, int] = Field(description="matches by place (a first place shared with an opponent: 1)")
    mean_place: float | None
    faults: int
    forfeits: int
    direct: float
    absent: bool = Field(
        default=False, description="never connected: each of its seats forfeited as absent, unrated")


class FittedRating(BaseModel):
    rank: int
    bot: str
    rating: float
    ci_low: float | None
    ci_high: float | None
    los_next: float | None = Field(description="likelihood of superiority over the next bot")
    games: int


class TournamentPublic(BaseModel):
    id: int
    name: str
    game: str
    options: dict[str, Any]
    players: int
    games_per_pairing: int
    duplicate: bool
    move_ms: int
    time_bank_ms: int
    max_faults: int
    status: TournamentStatusName
    league_id: int | None
    season: int | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    entrants: list[str]
    progress: Progress
    absent_grace_s: float = Field(
        default=10.0, description="how long a match waits for an entrant not connected")
    failed_matches: int = Field(default=0, description="matches that failed (an organizer can retry them)")
    finished_with_failures: bool = Field(
        default=False,
        description="finished, but some matches failed: POST /v1/matches/{id}/retry plays them again")


class TournamentDetail(TournamentPublic):
    absent: list[str] = Field(
        default_factory=list,
        description="on create and start: the entrants not connected now (their matches wait "
                    "absent_grace_s for them, then forfeit their seats as 'absent')")
    seed: int | None = Field(description="the schedule's seed: the organizer's until the tournament is over")
    deal_key: str | None = Field(
        default=None,
        description="the secret its match seeds derive from (hex): shown once the tournament is over")
    deal_commitment: str | None = Field(
        default=None, description="SHA-256 of deal_key (hex), shown from the start")
    deals_public: bool = Field(default=True, description="whether the seeds and the deal key are public yet")
    standings: list[StandingRow]
    ratings: list[FittedRating]


class Standings(BaseModel):
    tournament_id: int
    status: TournamentStatusName
    final: bool = Field(description="false while matches are still to be played")
    standings: list[StandingRow]
    ratings: list[FittedRating] = Field(description="the batch fit, once the tournament is finished")


class LeagueCreate(CompetitionCreate):
    name: Annotated[str, StringConstraints(min_length=1, max_length=128), Field(examples=["weekly"])]
    bots: Annotated[list[BotRef], Field(max_length=256)] = Field(default_factory=list)
    every_s: Annotated[int | None, Field(ge=1, le=10**8, description="a season every so many seconds")] = None

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "name": "weekly", "game": "tiercon", "bots": ["alice", "bob", "carol"], "every_s": 604800,
    }]})


# -- tests (SPRT) -------------------------------------------------------------------------------

ContenderRef = Annotated[
    str,
    StringConstraints(min_length=1, max_length=130, strip_whitespace=True),
    Field(description="a bot's name or id, optionally @version (e.g. alice@v2); for b also 'house'"),
]


class SprtBounds(Strict):
    elo0: float = Field(default=0.0, ge=-1000, le=1000, description="H0: A is at most this much stronger")
    elo1: float = Field(default=5.0, ge=-1000, le=1000, description="H1: A is at least this much stronger")
    alpha: float = Field(default=0.05, gt=0, lt=1, description="the chance of accepting H1 when H0 holds")
    beta: float = Field(default=0.05, gt=0, lt=1, description="the chance of accepting H0 when H1 holds")


class TestCreate(Strict):
    game: GameId
    players: Annotated[int | None, Field(ge=2, le=7, description="seats per match (default: the game's)")] = (
        None
    )
    options: Options = Field(default_factory=dict)
    a: ContenderRef = Field(description="the bot (or version) under test", examples=["alice@v2"])
    b: ContenderRef = Field(description="its opponent: another bot or version, 'house' (the heuristic), "
                            "or a house bot of the game by name (house-tiercon-pimc-small-1)",
                            examples=["alice@v1"])
    field: Annotated[str, StringConstraints(min_length=1, max_length=32)] = Field(
        default="heuristic", description="who fills the other seats: house bots of this kind "
        "(heuristic, pimc-small, pimc-large, ismcts)")
    sprt: SprtBounds = Field(default_factory=SprtBounds)
    max_games: Annotated[int, Field(ge=1, le=100_000)] = 20_000
    sets_in_flight: Annotated[int | None, Field(ge=1, le=64, description=(
        "duplicate sets played at once, exactly; left out: 8 at first, then as many as are "
        "complete, up to 64 (the workers kept busy, few games wasted when it decides)"))] = None
    move_ms: Annotated[int, Field(ge=1, le=300_000, description="time per move, milliseconds")] = 1000
    max_faults: Annotated[int, Field(ge=0, le=1000, description="faults before a forfeit (0: never)")] = 3
    name: Annotated[str | None, StringConstraints(min_length=1, max_length=128)] = None


class TestPublic(BaseModel):
    id: int
    name: str
    game: str
    players: int
    options: dict[str, Any]
    a: str
    b: str
    field: str
    status: TestStatusName
    result: str | None = Field(description="H1 (A is stronger by elo1), H0 (by elo0 at most) or inconclusive")
    reason: str | None = Field(default=None, description=(
        "why it ended: the SPRT's verdict, max_games reached, cancelled, or given up waiting for a bot"))
    waiting: str | None = Field(default=None, description=(
        "while A or B has no live stream: 'waiting for alice@v9: not connected' (nothing is scheduled)"))
    waiting_since: UtcDatetime | None = Field(default=None, description=(
        "since when it has waited with nothing in flight (its creation or its last match's end)"))
    gives_up_at: UtcDatetime | None = Field(default=None, description=(
        "when it is cancelled if still waiting (waiting_since + ATOUT_TEST_WAIT_TIMEOUT_S)"))
    sprt: dict[str, float]
    max_games: int
    move_ms: int
    max_faults: int
    sets_in_flight: int = Field(description="the sets it keeps in flight now")
    sets_in_flight_auto: bool = Field(description="true: no sets_in_flight was given; they grow with "
                                      "the sets complete, 8 to 64")
    matches: dict[str, int] = Field(description="the test's matches by status")
    seed: int | None = Field(description="shown once the test is over")
    deal_key: str | None = Field(
        default=None, description="the secret its match seeds derive from, once it is over")
    deal_commitment: str | None = Field(
        default=None, description="SHA-256 of deal_key (hex), shown from the start")
    created_by: str
    created_at: UtcDatetime
    finished_at: UtcDatetime | None
    games: int = Field(description="games of the complete sets counted")
    sets: int
    score: float | None = Field(description="A's mean pairwise score against B per game")
    elo: float | None
    elo_ci95: list[float | None]
    los: float | None = Field(description="likelihood of superiority of A")
    llr: float | None = Field(description="the SPRT log-likelihood ratio, within its bounds while it runs")
    lower: float | None
    upper: float | None


class MembersUpdate(Strict):
    join: Annotated[list[BotRef], Field(max_length=256)] = Field(default_factory=list)
    leave: Annotated[list[BotRef], Field(max_length=256)] = Field(default_factory=list)

    @model_validator(mode="after")
    def _distinct(self) -> MembersUpdate:
        both = sorted(str(bot) for bot in set(self.join) & set(self.leave))  # ids are ints
        if both:
            raise ValueError(f"a bot cannot both join and leave: {', '.join(both)}")
        return self


class Season(BaseModel):
    season: int
    tournament_id: int
    status: TournamentStatusName


class LeaguePublic(BaseModel):
    id: int
    name: str
    game: str
    options: dict[str, Any]
    players: int
    games_per_pairing: int
    duplicate: bool
    move_ms: int
    max_faults: int
    every_s: int | None
    next_season_at: datetime | None
    active: bool
    members: list[str]
    seasons: list[Season]


class LeagueMembers(BaseModel):
    league_id: int
    members: list[str]


class SeasonStarted(BaseModel):
    league_id: int
    season: int
    tournament_id: int
    matches: int


class LeagueStandings(BaseModel):
    league_id: int
    name: str
    seasons: list[Season]
    standings: list[StandingRow]


# -- matches ----------------------------------------------------------------------------------


class SeatPublic(BaseModel):
    seat: int
    bot: str
    bot_id: int
    score: int | None
    place: int | None
    faults: int
    forfeited: bool
    think_ms: float = Field(description="the latency the arena observed, summed over the seat's decisions")
    bot_think_ms: float | None = Field(
        description="the bot's own think time as it reported it, summed (null: it reported none)"
    )
    network_ms: float | None = Field(description="observed minus reported, over the decisions it reported")
    version: str = Field(description="the version the seat was played with")
    move_ms: int = Field(description="the seat's time per move: the match's, or its bot's own when longer "
                                     "(a person's: 60000 unless registered with another)")


class MatchPublic(BaseModel):
    id: int
    label: str = Field(default="", description=(
        "what it is: 'test #3: alice@v2 vs alice@v1', 'tournament 2, match 5', 'ladder 1, set 4', "
        "'practice match'"))
    tournament_id: int | None
    number: int
    deal_group: int = Field(
        default=0, description="matches of one deal group share their deal (duplicate rotations)")
    rotation: int = Field(default=0, description="its seat rotation within the deal group")
    practice: bool
    test_id: int | None = Field(
        default=None, description="the test it belongs to (a bot against a bot, SPRT)")
    ladder_id: int | None = Field(default=None, description="the ladder it belongs to")
    game: str
    options: dict[str, Any]
    players: int
    status: MatchStatusName
    outcome: OutcomeName | None
    seed: int | None = Field(
        description="shown once nothing sharing its deals is still to be played (it deals every card)")
    suits: str | None = Field(default=None, description=(
        "the suit permutation disguising its deal (a duplicate rotation's; the seed's c d h s become "
        "these), shown with the seed"))
    move_ms: int
    max_faults: int
    rules_version: int = Field(description="the version of the game's rules it was played under")
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    scores: list[int] | None
    ranking: list[int] | None
    error: str | None
    seats: list[SeatPublic]


class MatchPage(BaseModel):
    items: list[MatchPublic]
    total: int
    limit: int
    offset: int


class Replay(BaseModel):
    match: MatchPublic
    viewer: Literal["public", "seat", "full"]
    seat: int | None
    events: list[dict[str, Any]] = Field(
        description="a 'start' event, then one 'step' event per action; 'view' is what the viewer saw "
        "after it (full replays add 'hands', 'observations' and the fault 'detail'); a step carries the "
        "bot's 'note' for whom may read it (docs/protocol.md, Notes)"
    )


# -- ratings ----------------------------------------------------------------------------------


class LeaderboardRow(BaseModel):
    rank: int
    bot: str
    bot_id: int
    rating: float = Field(description="fitted over every rated match of the game (Elo scale)")
    ci_low: float
    ci_high: float
    los_next: float | None
    online: float | None = Field(description="the live Elo")
    matches: int


class Leaderboard(BaseModel):
    game: str
    rated_matches: int
    rows: list[LeaderboardRow]


# -- practice ---------------------------------------------------------------------------------


class PracticeCreate(Strict):
    game: GameId
    players: Annotated[int | None, Field(ge=2, le=7)] = None
    options: Options = Field(default_factory=dict)
    move_ms: Annotated[int | None, Field(ge=1, le=60_000, description="default 2000")] = None
    seat: Annotated[int | None, Field(ge=0, le=6, description="your seat (default: drawn)")] = None
    house: Annotated[str, StringConstraints(min_length=1, max_length=32)] = Field(
        default="heuristic",
        description="the kind of the house bots: heuristic, pimc-small, pimc-large, ismcts")
    with_bot: bool = Field(default=True, description="POST /v1/play/practice: seat your bot too (false: you "
                           "against house bots alone)")


class PracticeStarted(BaseModel):
    match_id: int
    game: str
    seat: int
    seats: list[str]
    match_url: str
    events_url: str
    replay_url: str


# -- system -----------------------------------------------------------------------------------


class Health(BaseModel):
    status: Literal["ok", "degraded"]
    database: str
    redis: str


class ReplayCheck(BaseModel):
    """A finished match re-run from its seed and actions, compared with what was stored."""

    match_id: int
    ok: bool = Field(description="the replay reproduces the stored scores and ranking")
    plies: int = Field(description="actions replayed")
    scores: list[int] | None
    ranking: list[int] | None
    divergence: str | None = Field(description="where and how the replay differs (when not ok)")
    summary: str


# -- ladders ---------------------------------------------------------------------------------------


class LadderCreate(Strict):
    name: Annotated[str, StringConstraints(min_length=1, max_length=128, strip_whitespace=True),
                    Field(examples=["tiercon ladder"])]
    game: GameId
    players: Annotated[int | None, Field(ge=2, le=7, description="seats per match (default: the game's)")] = (
        None
    )
    options: Options = Field(default_factory=dict)
    bots: Annotated[list[BotRef] | None, Field(max_length=256, description=(
        "its members; omitted or null: any registered bot that connects joins"))] = None
    target_in_flight: Annotated[int, Field(ge=1, le=256, description=(
        "matches kept in flight (whole duplicate sets: at least one set)"))] = 4
    move_ms: Annotated[int, Field(ge=1, le=300_000, description="time per move, milliseconds")] = 1000
    time_bank_ms: Annotated[int, Field(ge=0, le=300_000)] = 0
    max_faults: Annotated[int, Field(ge=0, le=1000, description="faults before a forfeit (0: never)")] = 3


class LadderStanding(BaseModel):
    rank: int
    bot: str
    bot_id: int
    mu: float = Field(description="OpenSkill (Plackett-Luce) mean")
    sigma: float = Field(description="its uncertainty; a new bot starts at 25/3")
    ordinal: float = Field(description="mu - 3 sigma: what the table is sorted on")
    games: int = Field(description="games of its rated sets")
    sets: int = Field(description="duplicate sets rated")
    sets_in_flight: int
    connected: bool | None
    disabled: bool
    joined_at: UtcDatetime
    provisional: bool = Field(description="fewer than 5 rated sets, or sigma above 4: listed after "
                                          "the established members (docs/ladders.md)")


class LadderPoint(BaseModel):
    set: int = Field(description="the set's number in the ladder")
    rated_at: UtcDatetime
    mu: float
    sigma: float
    ordinal: float


class LadderHistory(BaseModel):
    bot: str
    bot_id: int
    points: list[LadderPoint] = Field(description="its rating after each of its rated sets, oldest first")


class LadderMatch(BaseModel):
    id: int
    status: str
    set: int
    bots: list[str] = Field(description="the seats' bots, seat 0 first")


class LadderPublic(BaseModel):
    id: int
    name: str
    game: str
    players: int
    options: dict[str, Any]
    move_ms: int
    time_bank_ms: int
    max_faults: int
    open: bool = Field(description="any registered bot that connects joins")
    target_in_flight: int
    status: str = Field(description="running or paused")
    created_at: UtcDatetime
    matches: dict[str, int] = Field(description="the ladder's matches by status")
    sets: dict[str, int] = Field(description="its duplicate sets by status: running, rated, void")
    in_flight: list[LadderMatch]
    standings: list[LadderStanding]
