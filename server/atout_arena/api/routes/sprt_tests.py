"""Tests: is bot A (or version A) stronger than B? Duplicate sets until an SPRT decides."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, status
from sqlalchemy import or_, select

from atout_arena.api.deps import (
    TOKEN_OPTIONAL,
    ArenaDep,
    CallerDep,
    OrganizerDep,
    Responses,
    SessionDep,
    known_id,
)
from atout_arena.api.errors import refused
from atout_arena.api.schemas import TestCreate, TestPublic, TestStatusName
from atout_arena.core.models import SprtTest
from atout_arena.core.relay import is_connected
from atout_arena.services.bots import find_bot
from atout_arena.services.competitions import CompetitionError, CompetitionSpec
from atout_arena.services.sprt import cancel_test, check_tester, create_test, sprt_summary

router = APIRouter(prefix="/v1/tests", tags=["tests"])

NOT_FOUND: Responses = {404: {"description": "no such test"}}


def _summary(arena: ArenaDep, test_id: int, organizer: bool = True) -> TestPublic:
    known_id(test_id, "test")

    def connected(bot_id: int, version: str) -> bool:
        return is_connected(arena.redis, bot_id, version)

    try:
        return TestPublic.model_validate(sprt_summary(
            arena.sessions, test_id, organizer=organizer, connected=connected,
            wait_timeout_s=arena.settings.test_wait_timeout_s))
    except CompetitionError as exc:
        raise refused(exc.kind, str(exc)) from None


@router.post(
    "",
    response_model=TestPublic,
    status_code=status.HTTP_201_CREATED,
    responses={401: {"description": "no token, or an unknown one"},
               403: {"description": "a bot testing another bot, or a disabled bot"},
               404: {"description": "a bot or version named does not exist"},
               409: {"description": "a bot or version cannot play now"},
               429: {"description": "the bot has too many tests running"}},
)
def create(body: TestCreate, arena: ArenaDep, caller: CallerDep) -> TestPublic:
    """Start a test, as fishtest does for chess engines: ``a`` against ``b`` (bots, or versions
    ``name@version`` of one bot, or ``b: house``) in duplicate sets (one seeded deal played in
    every seat rotation, the house bots in the other seats), until the generalized SPRT on the
    set scores accepts H1 (A is ``elo1`` stronger) or H0 (``elo0``), or ``max_games`` is reached.
    The organizer may test any two bots; a bot (its token) may test itself against its own
    versions or the house bot. Test matches are unrated. While A or B is not connected the test
    says so (``waiting``: ``waiting for alice@v9: not connected``) and plays nothing; after
    ``ATOUT_TEST_WAIT_TIMEOUT_S`` (``gives_up_at``) it is cancelled, its ``reason`` saying why."""
    try:
        caller_bot_id = check_tester(organizer=caller.organizer, bot=caller.bot)
        spec = CompetitionSpec.of(game=body.game, players=body.players, options=body.options,
                                  move_ms=body.move_ms, max_faults=body.max_faults)
        test_id = create_test(
            arena.sessions, a=body.a, b=body.b, spec=spec, elo0=body.sprt.elo0, elo1=body.sprt.elo1,
            alpha=body.sprt.alpha, beta=body.sprt.beta, max_games=body.max_games, field=body.field,
            sets_in_flight=body.sets_in_flight, name=body.name,
            caller_bot_id=caller_bot_id,
        )
    except CompetitionError as exc:
        raise refused(exc.kind, str(exc)) from None
    arena.tasks.test_tick(test_id)
    return _summary(arena, test_id, caller.organizer)


@router.get("", response_model=list[TestPublic], openapi_extra=TOKEN_OPTIONAL,
            responses={404: {"description": "no bot by the name or id given in bot"}})
def list_tests(arena: ArenaDep, session: SessionDep, caller: CallerDep,
               status_: Annotated[TestStatusName | None, Query(alias="status")] = None,
               bot: Annotated[str | None, Query(max_length=200, description="its tests, as A or B")] = None,
               limit: Annotated[int, Query(ge=1, le=200)] = 50) -> list[TestPublic]:
    """The latest tests, newest first, with their live statistics; ``status`` and ``bot`` (a
    name or id, as A or B) filter them."""
    query = select(SprtTest.id)
    if status_ is not None:
        query = query.where(SprtTest.status == status_)
    if bot is not None:
        found = find_bot(session, bot)
        if found is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"no bot {bot!r}")
        query = query.where(or_(SprtTest.bot_a_id == found.id, SprtTest.bot_b_id == found.id))
    ids = list(session.scalars(query.order_by(SprtTest.id.desc()).limit(limit)))
    session.close()
    return [_summary(arena, test_id, caller.organizer) for test_id in ids]


@router.get("/{test_id}", response_model=TestPublic, responses=NOT_FOUND, openapi_extra=TOKEN_OPTIONAL)
def show(test_id: int, arena: ArenaDep, caller: CallerDep) -> TestPublic:
    """A test: its games and sets, A's score, Elo ± 95%, LOS, and the SPRT's LLR within its
    bounds (``lower``, ``upper``); ``result`` once it is over. The seed and the deal key are
    shown once it is over and its last match is done (to the organizer, always)."""
    return _summary(arena, test_id, caller.organizer)


@router.post("/{test_id}/cancel", response_model=TestPublic,
             responses={**NOT_FOUND, 401: {}, 403: {}, 409: {"description": "the test is over"}})
def cancel(test_id: int, arena: ArenaDep, _: OrganizerDep) -> TestPublic:
    """Stop a running test: matches not started are cancelled; the statistics so far stay."""
    known_id(test_id, "test")
    try:
        if not cancel_test(arena.sessions, test_id, "cancelled by the organizer",
                           redis_client=arena.redis):
            raise HTTPException(status.HTTP_409_CONFLICT, f"test {test_id} is over already")
    except CompetitionError as exc:
        raise refused(exc.kind, str(exc)) from None
    return _summary(arena, test_id)
