"""Practice matches: a connected bot against house bots, at once."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, status
from starlette.concurrency import run_in_threadpool

from atout_arena.api.deps import ArenaDep, BotCallerDep
from atout_arena.api.schemas import PracticeCreate, PracticeStarted
from atout_arena.services.practice import PracticeError

router = APIRouter(prefix="/v1/practice", tags=["practice"])

CODES = {
    "invalid": status.HTTP_422_UNPROCESSABLE_CONTENT,
    "not_found": status.HTTP_404_NOT_FOUND,
    "forbidden": status.HTTP_403_FORBIDDEN,
    "not_connected": status.HTTP_409_CONFLICT,
    "busy": status.HTTP_429_TOO_MANY_REQUESTS,
}


@router.post(
    "",
    response_model=PracticeStarted,
    status_code=status.HTTP_202_ACCEPTED,
    responses={
        401: {"description": "no bot token"},
        403: {"description": "the organizer's token, or a disabled bot"},
        404: {"description": "no such game or bot"},
        409: {"description": "the bot is not connected"},
        429: {"description": "too many practice matches in flight"},
    },
)
async def start_practice(body: PracticeCreate, arena: ArenaDep, bot: BotCallerDep) -> PracticeStarted:
    """Start a practice match now: the calling bot (its token) against the arena's house bots
    (``house-<game>-N``, the SDK's heuristic bots, run by the arena; ``house``: a stronger kind,
    ``house-<game>-<kind>-N``, see docs/bosses.md). The bot must be connected
    to a game server: the match's decisions come to it on its stream like any match's. The
    match is unrated, its bot is never forfeited (every decision is asked), and its replay is
    at ``replay_url`` once it is over (``?seat=`` your seat shows your hand)."""
    try:
        started = await run_in_threadpool(
            arena.practice.start, bot.id, body.game, body.players, body.options, body.move_ms, body.seat,
            house=body.house, with_bot=body.with_bot,
        )
    except PracticeError as exc:
        raise HTTPException(CODES.get(exc.kind, status.HTTP_422_UNPROCESSABLE_CONTENT), str(exc)) from None
    base = f"/v1/matches/{started.match_id}"
    return PracticeStarted(
        match_id=started.match_id,
        game=started.game,
        seat=started.seat,
        seats=started.seats,
        match_url=base,
        events_url=f"{base}/events?seat={started.seat}",
        replay_url=f"{base}/replay?seat={started.seat}",
    )
