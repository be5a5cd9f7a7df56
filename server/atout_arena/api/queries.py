"""The API's reads that :mod:`atout_arena.services` does not already offer: plain functions (of
a ``Session``, of rows already loaded, or of Redis for who is connected) returning the response
models' data."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, not_, select
from sqlalchemy.orm import Session, selectinload

from atout_arena.api import schemas
from atout_arena.core.match import Step
from atout_arena.core.models import (
    Bot,
    Ladder,
    LadderMember,
    League,
    Match,
    MatchSeat,
    Rating,
    RatingChange,
    Tournament,
)
from atout_arena.core.ratings import fit
from atout_arena.core.relay import connected_bots
from atout_arena.core.standings import sides_of, won
from atout_arena.core.vocabulary import MATCH_DONE, MatchStatus, TournamentStatus
from atout_arena.services.bots import bot_figures, is_house
from atout_arena.services.deals import secret_matches
from atout_arena.services.ladders import standings as ladder_standings
from atout_arena.services.practice import PRACTICE
from atout_arena.services.sprt import test_labels
from atout_arena.services.tournaments import rated_results

RECENT_MATCHES = 20  # listed on a bot's page
RATING_HISTORY = 500  # the latest online ratings drawn per game on a bot's page


def aware(value: datetime | None) -> datetime | None:
    """SQLite gives back naive datetimes: they are UTC."""
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


# -- bots -------------------------------------------------------------------------------------


def bot_public(bot: Bot, connected: set[str]) -> dict[str, Any]:
    return {
        "id": bot.id,
        "name": bot.name,
        "owner": bot.owner,
        "created_at": aware(bot.created_at),
        "disabled": bot.disabled,
        "house": is_house(bot.name),
        "connected": str(bot.id) in connected,
        "kind": bot.kind or "bot",
    }


def connected_set(redis: Any) -> set[str]:
    return set(connected_bots(redis))


def wins_by_version(session: Session, bot_id: int) -> dict[str, int]:
    """The bot's wins (:func:`atout_arena.core.standings.won`: a first place shared with no
    opponent) in its finished matches, by the version it played them with."""
    mine = (
        select(MatchSeat.match_id)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(MatchSeat.bot_id == bot_id, MatchSeat.place == 1, Match.status == MatchStatus.FINISHED)
    )
    seats: dict[int, list[MatchSeat]] = {}
    for seat in session.scalars(select(MatchSeat).where(MatchSeat.match_id.in_(mine))):
        seats.setdefault(seat.match_id, []).append(seat)
    options: dict[int, dict[str, Any]] = dict(
        session.execute(select(Match.id, Match.options).where(Match.id.in_(list(seats)))).all()
    )
    wins: dict[str, int] = {}
    for match_id, match_seats in seats.items():
        match_seats.sort(key=lambda s: s.seat)
        ranking = [s.place or 0 for s in match_seats]
        sides = sides_of(options.get(match_id) or {}, len(match_seats))
        for index, seat in enumerate(match_seats):
            if seat.bot_id == bot_id and won(ranking, index, sides):
                wins[seat.played_version] = wins.get(seat.played_version, 0) + 1
    return wins


def bot_detail(
    session: Session, bot: Bot, connected: set[str], leaderboards: dict[str, schemas.Leaderboard]
) -> dict[str, Any]:
    detail = bot_public(bot, connected)
    ratings = []
    for row in session.scalars(select(Rating).where(Rating.bot_id == bot.id).order_by(Rating.game)):
        board = leaderboards.get(row.game)
        line = next((r for r in board.rows if r.bot_id == bot.id), None) if board else None
        ratings.append(
            {
                "game": row.game,
                "online": row.rating,
                "matches": row.matches,
                "rating": line.rating if line else None,
                "ci_low": line.ci_low if line else None,
                "ci_high": line.ci_high if line else None,
                "rank": line.rank if line else None,
            }
        )
    detail["ratings"] = ratings
    seats = session.execute(
        select(MatchSeat, Match)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(MatchSeat.bot_id == bot.id)
        .order_by(Match.id.desc())
        .limit(RECENT_MATCHES)
    ).all()
    players = dict(
        session.execute(
            select(MatchSeat.match_id, func.count())
            .where(MatchSeat.match_id.in_([m.id for _, m in seats]))
            .group_by(MatchSeat.match_id)
        ).all()
    )
    detail["recent_matches"] = [
        {
            "match_id": m.id,
            "game": m.game,
            "tournament_id": m.tournament_id,
            "status": m.status,
            "seat": s.seat,
            "players": players.get(m.id, 0),
            "place": s.place,
            "score": s.score,
            "faults": s.faults,
            "forfeited": s.forfeited,
            "version": s.played_version,
            "finished_at": aware(m.finished_at),
        }
        for s, m in seats
    ]
    version_wins = wins_by_version(session, bot.id)
    figures = bot_figures(session, bot.id)  # one window (its last finished matches) for every figure
    detail["versions"] = [
        {"version": version, "matches": int(n), "wins": version_wins.get(version, 0),
         "mean_place": None if mean is None else float(mean),
         **figures["versions"].get(version, {"faults": None, "think_time": None})}
        for version, n, mean in session.execute(
            select(MatchSeat.played_version, func.count(), func.avg(MatchSeat.place))
            .join(Match, Match.id == MatchSeat.match_id)
            .where(MatchSeat.bot_id == bot.id, Match.status == MatchStatus.FINISHED)
            .group_by(MatchSeat.played_version).order_by(MatchSeat.played_version)
        ).all()
    ]
    detail["figures_window"] = figures["window"]
    detail["faults"] = figures["faults"]
    detail["think_time"] = figures["think_time"]
    detail["rating_history"] = rating_history(session, bot.id)
    detail["ladders"] = bot_ladders(session, bot.id)
    return detail


def rating_history(session: Session, bot_id: int, limit: int = RATING_HISTORY) -> list[dict[str, Any]]:
    """The bot's online Elo in each game after each of its rated matches, oldest first (the
    latest ``limit`` per game), from the rating history rows: ``[{"game", "start", "points":
    [{"match_id", "at", "rating"}]}]`` (``start``: the rating before the first point shown)."""
    history = []
    games = session.scalars(select(RatingChange.game).where(RatingChange.bot_id == bot_id)
                            .distinct().order_by(RatingChange.game)).all()
    for game in games:
        rows = list(reversed(session.scalars(
            select(RatingChange).where(RatingChange.bot_id == bot_id, RatingChange.game == game)
            .order_by(RatingChange.id.desc()).limit(limit)).all()))
        history.append({
            "game": game,
            "start": rows[0].before,
            "points": [{"match_id": r.match_id, "at": aware(r.at), "rating": r.after} for r in rows],
        })
    return history


def bot_ladders(session: Session, bot_id: int) -> list[dict[str, Any]]:
    """The bot's line of the standings of each ladder it is a member of (newest ladder first),
    with the ladder's name, game, status and member count."""
    found = []
    for ladder in session.scalars(
        select(Ladder).join(LadderMember, LadderMember.ladder_id == Ladder.id)
        .where(LadderMember.bot_id == bot_id).order_by(Ladder.id.desc())
    ):
        table = ladder_standings(session, ladder.id)
        line = next(r for r in table if r["bot_id"] == bot_id)
        found.append({
            "ladder_id": ladder.id, "name": ladder.name, "game": ladder.game, "status": ladder.status,
            "members": len(table), **{k: line[k] for k in (
                "rank", "ordinal", "mu", "sigma", "games", "sets", "provisional")},
        })
    return found


# -- matches ----------------------------------------------------------------------------------


def seat_think(actions: Sequence[Any] | None, players: int) -> list[tuple[float | None, float | None]]:
    """Per seat, from a match's action log: (the bot's own think time summed, the network and
    queueing time over the decisions it reported), or (None, None) when it reported none."""
    told = [0.0] * players
    observed = [0.0] * players
    any_told = [False] * players
    for ply, row in enumerate(actions or []):
        step = Step.from_json(ply, row)
        if step.bot_ms is not None and 0 <= step.seat < players:
            any_told[step.seat] = True
            told[step.seat] += step.bot_ms
            observed[step.seat] += step.think_ms
    return [(round(told[s], 3), round(max(0.0, observed[s] - told[s]), 3)) if any_told[s] else (None, None)
            for s in range(players)]


def match_label(match: Match, tests: dict[int, str]) -> str:
    """What a match is, in words: ``test #3: alice@v2 vs alice@v1`` (``tests``: test labels by
    id, :func:`atout_arena.services.sprt.test_labels`), ``tournament 2, match 5``, ``ladder 1,
    set 4``, ``practice match``."""
    if match.test_id is not None:
        return tests.get(match.test_id, f"test #{match.test_id}")
    if match.tournament_id is not None:
        return f"tournament {match.tournament_id}, match {match.number + 1}"
    if match.ladder_id is not None:
        return f"ladder {match.ladder_id}, set {match.deal_group + 1}"
    return "practice match"


def match_public(match: Match, names: dict[int, str], *, seed_shown: bool = False,
                 tests: dict[int, str] | None = None, own_ms: dict[int, int] | None = None) -> dict[str, Any]:
    """``own_ms``: the bots' own move times (a person's), by id: a seat waits the longer of it and
    the match's."""
    seats = sorted(match.seats, key=lambda s: s.seat)
    think = seat_think(match.actions, len(seats))
    return {
        "id": match.id,
        "label": match_label(match, tests or {}),
        "tournament_id": match.tournament_id,
        "number": match.number,
        "deal_group": match.deal_group,
        "rotation": match.rotation,
        "practice": match.tournament_id is None and match.test_id is None and match.ladder_id is None,
        "test_id": match.test_id,
        "ladder_id": match.ladder_id,
        "game": match.game,
        "options": match.options or {},
        "players": len(seats),
        "status": match.status,
        "outcome": match.outcome,
        "seed": match.seed if seed_shown else None,
        "suits": match.suits if seed_shown else None,
        "move_ms": match.move_ms,
        "max_faults": match.max_faults,
        "rules_version": match.rules_version,
        "created_at": aware(match.created_at),
        "started_at": aware(match.started_at),
        "finished_at": aware(match.finished_at),
        "scores": match.scores,
        "ranking": match.ranking,
        "error": match.error,
        "seats": [
            {
                "seat": s.seat,
                "bot": names.get(s.bot_id, str(s.bot_id)),
                "bot_id": s.bot_id,
                "score": s.score,
                "place": s.place,
                "faults": s.faults,
                "forfeited": s.forfeited,
                "think_ms": s.think_ms,
                "bot_think_ms": think[i][0],
                "network_ms": think[i][1],
                "version": s.played_version,
                "move_ms": max(match.move_ms, (own_ms or {}).get(s.bot_id, 0)),
            }
            for i, s in enumerate(seats)
        ],
    }


def bot_names(session: Session, ids: Sequence[int]) -> dict[int, str]:
    if not ids:
        return {}
    return dict(session.execute(select(Bot.id, Bot.name).where(Bot.id.in_(set(ids)))).all())


def own_move_ms(session: Session, ids: Sequence[int]) -> dict[int, int]:
    """The bots among ``ids`` with a move time of their own (people): id -> milliseconds."""
    if not ids:
        return {}
    rows = session.execute(select(Bot.id, Bot.move_ms).where(Bot.id.in_(set(ids)), Bot.move_ms.is_not(None)))
    return {bot_id: ms for bot_id, ms in rows.all() if ms is not None}


def matches_public(
    session: Session, matches: Sequence[Match], *, organizer: bool = False
) -> list[dict[str, Any]]:
    """The matches as the API shows them; their seeds only where :mod:`atout_arena.services.deals`
    says so (the ``organizer`` sees every seed)."""
    names = bot_names(session, [s.bot_id for m in matches for s in m.seats])
    secret = set() if organizer else secret_matches(session, matches)
    tests = test_labels(session, [m.test_id for m in matches if m.test_id is not None])
    own_ms = own_move_ms(session, list(names))
    return [match_public(m, names, seed_shown=m.id not in secret, tests=tests, own_ms=own_ms)
            for m in matches]


def get_match(session: Session, match_id: int) -> Match | None:
    return session.get(Match, match_id, options=[selectinload(Match.seats)])


def match_page(
    session: Session,
    *,
    tournament_id: int | None = None,
    status: str | None = None,
    game: str | None = None,
    bot_id: int | None = None,
    practice: bool | None = None,
    test_id: int | None = None,
    limit: int = 50,
    offset: int = 0,
    newest_first: bool = False,
    organizer: bool = False,
    ladder_id: int | None = None,
) -> dict[str, Any]:
    query = select(Match)
    if tournament_id is not None:
        query = query.where(Match.tournament_id == tournament_id)
    if ladder_id is not None:
        query = query.where(Match.ladder_id == ladder_id)
    if test_id is not None:
        query = query.where(Match.test_id == test_id)
    if status is not None:
        query = query.where(Match.status == status)
    if game is not None:
        query = query.where(Match.game == game)
    if practice is not None:
        query = query.where(PRACTICE if practice else not_(PRACTICE))
    if bot_id is not None:
        query = query.where(Match.id.in_(select(MatchSeat.match_id).where(MatchSeat.bot_id == bot_id)))
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    order = Match.id.desc() if newest_first else Match.id
    items = session.scalars(
        query.options(selectinload(Match.seats)).order_by(order).limit(limit).offset(offset)
    )
    items_public = matches_public(session, list(items), organizer=organizer)
    return {"items": items_public, "total": total, "limit": limit, "offset": offset}


# -- tournaments ------------------------------------------------------------------------------


def progress(counts: dict[str, int]) -> dict[str, Any]:
    total = sum(counts.values())
    done = sum(counts.get(s, 0) for s in MATCH_DONE)
    return {
        "total": total,
        "done": done,
        "percent": round(100.0 * done / total, 1) if total else 100.0,
        "by_status": dict(sorted(counts.items())),
    }


def status_counts(session: Session, tournament_ids: Sequence[int]) -> dict[int, dict[str, int]]:
    counts: dict[int, dict[str, int]] = {t: {} for t in tournament_ids}
    if not tournament_ids:
        return counts
    rows = session.execute(
        select(Match.tournament_id, Match.status, func.count())
        .where(Match.tournament_id.in_(tournament_ids))
        .group_by(Match.tournament_id, Match.status)
    ).all()
    for tid, status, n in rows:
        assert tid is not None  # one of tournament_ids
        counts[tid][status] = n
    return counts


def tournament_public(t: Tournament, counts: dict[str, int], names: dict[int, str]) -> dict[str, Any]:
    failed = counts.get(MatchStatus.FAILED, 0)
    return {
        "id": t.id,
        "name": t.name,
        "game": t.game,
        "options": t.options or {},
        "players": t.players,
        "games_per_pairing": t.games_per_pairing,
        "duplicate": t.duplicate,
        "move_ms": t.move_ms,
        "time_bank_ms": t.time_bank_ms,
        "max_faults": t.max_faults,
        "status": t.status,
        "league_id": t.league_id,
        "season": t.season,
        "created_at": aware(t.created_at),
        "started_at": aware(t.started_at),
        "finished_at": aware(t.finished_at),
        "entrants": [names.get(e.bot_id, str(e.bot_id)) for e in t.entries],
        "progress": progress(counts),
        "absent_grace_s": t.absent_grace_s,
        "failed_matches": failed,
        "finished_with_failures": t.status == TournamentStatus.FINISHED and failed > 0,
    }


def tournaments_public(session: Session, tournaments: Sequence[Tournament]) -> list[dict[str, Any]]:
    counts = status_counts(session, [t.id for t in tournaments])
    names = bot_names(session, [e.bot_id for t in tournaments for e in t.entries])
    return [tournament_public(t, counts[t.id], names) for t in tournaments]


# -- leagues ----------------------------------------------------------------------------------


def league_public(session: Session, league: League) -> dict[str, Any]:
    seasons = session.execute(
        select(Tournament.season, Tournament.id, Tournament.status)
        .where(Tournament.league_id == league.id)
        .order_by(Tournament.season)
    ).all()
    names = bot_names(session, [m.bot_id for m in league.members])
    return {
        "id": league.id,
        "name": league.name,
        "game": league.game,
        "options": league.options or {},
        "players": league.players,
        "games_per_pairing": league.games_per_pairing,
        "duplicate": league.duplicate,
        "move_ms": league.move_ms,
        "max_faults": league.max_faults,
        "every_s": league.every_s,
        "next_season_at": aware(league.next_season_at),
        "active": league.active,
        "members": [names.get(m.bot_id, str(m.bot_id)) for m in league.members if m.active],
        "seasons": [{"season": s, "tournament_id": t, "status": st} for s, t, st in seasons],
    }


# -- ratings ----------------------------------------------------------------------------------


def rated_matches_key(session: Session, game: str) -> tuple[int, int]:
    """(count, last id) of the game's rated matches: a leaderboard is valid while it holds."""
    count, last = session.execute(
        select(func.count(func.distinct(RatingChange.match_id)), func.max(RatingChange.match_id)).where(
            RatingChange.game == game
        )
    ).one()
    return int(count or 0), int(last or 0)


def leaderboard(session: Session, game: str) -> dict[str, Any]:
    """The batch fit (Bradley-Terry, Elo scale, 95% intervals: :func:`atout_arena.core.ratings.fit`) of
    every rated match of ``game`` (those that moved the online Elo: practice matches do not),
    with each bot's online Elo beside it."""
    # the seats each match rated (not an absent bot's, nor a disabled one's: core.ratings.rated_result)
    results = rated_results(session, game=game)
    fitted = fit(results)
    online = dict(session.execute(select(Rating.bot_id, Rating.rating).where(Rating.game == game)).all())
    names = bot_names(session, list(fitted.bots))
    rows = [
        {
            "rank": rank,
            "bot": names.get(line.bot, str(line.bot)),
            "bot_id": line.bot,
            "rating": line.elo,
            "ci_low": line.ci_low,
            "ci_high": line.ci_high,
            "los_next": line.los,
            "online": online.get(line.bot),
            "matches": line.games,
        }
        for rank, line in enumerate(fitted.ratings, 1)
    ]
    return {"game": game, "rated_matches": len(results), "rows": rows}
