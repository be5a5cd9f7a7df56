"""Bots: register (the token is shown once), list, show, rotate the token, disable, enable."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, status
from sqlalchemy import select
from sqlalchemy.orm import Session

from atout_arena.api import queries
from atout_arena.api.deps import ArenaDep, BotPath, CallerDep, OrganizerDep, Responses, SessionDep
from atout_arena.api.errors import refused
from atout_arena.api.routes.ratings import cached_leaderboard
from atout_arena.api.schemas import BotCreate, BotCreated, BotDetail, BotPublic, BotToken
from atout_arena.core.models import Bot, Rating
from atout_arena.services.bots import RegistryError, bot_name_problem, check_details_viewer, find_bot
from atout_arena.services.revocation import rotate_token as rotate_bot_token
from atout_arena.services.revocation import set_disabled

router = APIRouter(prefix="/v1/bots", tags=["bots"])

NOT_FOUND: Responses = {404: {"description": "no such bot"}}
AUTH: Responses = {
    401: {"description": "no token, or an unknown one"},
    403: {"description": "a token without the right"},
}


def _bot(session: Session, ref: str) -> Bot:
    bot = find_bot(session, ref)
    if bot is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no bot {ref!r}")
    return bot


@router.post(
    "",
    response_model=BotCreated,
    status_code=status.HTTP_201_CREATED,
    responses={**AUTH, 409: {"description": "the name is taken"}},
)
def register_bot(body: BotCreate, arena: ArenaDep, _: OrganizerDep) -> BotCreated:
    """Register a bot. The answer holds its **token, shown this once** (the arena keeps only
    its hash): give it to the bot's developer, who runs ``atout-bot run ... --token TOKEN``."""
    problem = bot_name_problem(body.name)
    if problem is not None:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, problem)
    try:
        info, token = arena.registry.add(body.name, owner=body.owner, kind=body.kind, move_ms=body.move_ms)
    except RegistryError as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
    return BotCreated(
        id=info.id,
        name=info.name,
        owner=info.owner,
        created_at=info.created_at,
        disabled=info.disabled,
        kind=info.kind,
        house=False,
        connected=False,
        token=token,
    )


@router.get("", response_model=list[BotPublic], responses=AUTH)
def list_bots(arena: ArenaDep, session: SessionDep, _: OrganizerDep) -> list[BotPublic]:
    """Every registered bot (house bots included), with whether it is connected now."""
    connected = queries.connected_set(arena.redis)
    return [
        BotPublic.model_validate(queries.bot_public(b, connected))
        for b in session.scalars(select(Bot).order_by(Bot.id))
    ]


@router.get("/{bot}", response_model=BotDetail, responses={**AUTH, **NOT_FOUND})
def show_bot(bot: BotPath, arena: ArenaDep, session: SessionDep, caller: CallerDep) -> BotDetail:
    """A bot's details: its rating in each game (live Elo, and its line of the game's
    leaderboard), its recent matches, its results by version, and its figures over one window,
    its last 100 finished matches (``figures_window``): faults (total, forfeits, by kind: the
    kinds add up to the total) and think times (observed, as the bot told them, network: p50 /
    p99 of the decisions it answered), for the bot and for each version (``versions``). For the
    organizer, and for the bot itself (its own token)."""
    found = _bot(session, bot)
    try:
        check_details_viewer(found.id, organizer=caller.organizer, caller_bot_id=caller.bot_id)
    except RegistryError as exc:
        raise refused(exc.kind, str(exc)) from None
    games = list(session.scalars(select(Rating.game).where(Rating.bot_id == found.id)))
    boards = {game: cached_leaderboard(arena, session, game) for game in games}
    return BotDetail.model_validate(
        queries.bot_detail(session, found, queries.connected_set(arena.redis), boards)
    )


@router.post("/{bot}/token", response_model=BotToken, responses={**AUTH, **NOT_FOUND, 409: {}})
def rotate_token(bot: BotPath, arena: ArenaDep, session: SessionDep, _: OrganizerDep) -> BotToken:
    """Give the bot a new token, **shown this once**; the old one stops working, and the
    streams opened with it close within a second on every game server (Error ``revoked``)."""
    found = _bot(session, bot)
    try:
        token = rotate_bot_token(arena.sessions, arena.redis, found.id)
    except RegistryError as exc:  # a house bot
        raise refused(exc.kind, str(exc)) from None
    return BotToken(id=found.id, name=found.name, token=token)


def _set_disabled(arena: ArenaDep, session: Session, bot: str, disabled: bool) -> BotPublic:
    found = _bot(session, bot)
    try:
        done = set_disabled(arena.sessions, arena.redis, found.id, disabled)
    except RegistryError as exc:  # a house bot
        raise refused(exc.kind, str(exc)) from None
    for ladder_id in done.ladders:
        arena.tasks.ladder_tick(ladder_id)
    info = done.bot
    return BotPublic(
        id=info.id,
        name=info.name,
        owner=info.owner,
        created_at=info.created_at,
        disabled=info.disabled,
        house=False,
        connected=str(info.id) in queries.connected_set(arena.redis),
        kind=info.kind,
    )


@router.post("/{bot}/disable", response_model=BotPublic, responses={**AUTH, **NOT_FOUND, 409: {}})
def disable_bot(bot: BotPath, arena: ArenaDep, session: SessionDep, _: OrganizerDep) -> BotPublic:
    """Disable a bot: its open streams close within a second on every game server (Error
    ``revoked``), its waiting decisions fault ``disconnected``, its running tests are cancelled,
    its ladders tick at once (which takes it out of their pools and cancels its queued sets); it
    cannot connect any more nor be entered into anything."""
    return _set_disabled(arena, session, bot, True)


@router.post("/{bot}/enable", response_model=BotPublic, responses={**AUTH, **NOT_FOUND, 409: {}})
def enable_bot(bot: BotPath, arena: ArenaDep, session: SessionDep, _: OrganizerDep) -> BotPublic:
    """Let a disabled bot connect again."""
    return _set_disabled(arena, session, bot, False)
