"""The routes' dependencies, as ``Annotated`` aliases.

Who calls (``Authorization: Bearer <token>``):

- the **organizer**: the token is ``ATOUT_ADMIN_TOKEN``; needed by every mutating endpoint;
- a **bot**: the token is a bot's; sees its own bot's details and its own seat's views;
- **anyone**: no header; reads what spectators may see.

A header with an unknown token is a 401 (never silently anonymous); a known token without the
right is a 403.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from fastapi import Depends, HTTPException, Path, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from atout_arena.api.context import Arena
from atout_arena.api.schemas import MAX_ID
from atout_arena.services.bots import BotInfo

bearer = HTTPBearer(
    auto_error=False,
    description="The organizer token (ATOUT_ADMIN_TOKEN) or a bot's token.",
)


def get_arena(request: Request) -> Arena:
    return request.app.state.arena


ArenaDep = Annotated[Arena, Depends(get_arena)]


def get_session(arena: ArenaDep) -> Iterator[Session]:
    with arena.sessions() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session)]


@dataclass(frozen=True)
class Caller:
    kind: Literal["organizer", "bot", "anyone"]
    bot: BotInfo | None = None

    @property
    def organizer(self) -> bool:
        return self.kind == "organizer"

    @property
    def bot_id(self) -> int | None:
        """The id of the caller's bot (its token), None for the organizer and for anyone."""
        return None if self.bot is None else self.bot.id

    def is_bot(self, bot_id: int) -> bool:
        return self.bot is not None and self.bot.id == bot_id


def _unauthorized(detail: str) -> HTTPException:
    return HTTPException(status.HTTP_401_UNAUTHORIZED, detail, headers={"WWW-Authenticate": "Bearer"})


def get_caller(
    arena: ArenaDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    request: Request,
) -> Caller:
    if credentials is None:
        if request.headers.get("authorization"):
            raise _unauthorized("the Authorization header must be 'Bearer <token>'")
        return Caller("anyone")
    token = credentials.credentials.strip()
    if arena.admin_token and hmac.compare_digest(token.encode(), arena.admin_token.encode()):
        return Caller("organizer")
    bot = arena.registry.verify(token)
    if bot is None:
        raise _unauthorized("unknown token: neither the organizer token nor a bot's token")
    return Caller("bot", bot)


CallerDep = Annotated[Caller, Depends(get_caller)]


def require_organizer(caller: CallerDep, arena: ArenaDep) -> Caller:
    if caller.organizer:
        return caller
    if caller.kind == "anyone":
        if not arena.admin_token:
            raise HTTPException(
                status.HTTP_403_FORBIDDEN,
                "organizer endpoints are off: the arena has no organizer token (set ATOUT_ADMIN_TOKEN)",
            )
        raise _unauthorized(
            "this endpoint needs the organizer token: Authorization: Bearer <ATOUT_ADMIN_TOKEN>"
        )
    raise HTTPException(
        status.HTTP_403_FORBIDDEN, "a bot's token cannot do this: it needs the organizer token"
    )


OrganizerDep = Annotated[Caller, Depends(require_organizer)]

# For the OpenAPI of an operation open to anyone whose answer depends on the token (a seat's
# view): its security also lists "no token" (FastAPI adds this to the bearer's entry).
TOKEN_OPTIONAL: dict[str, Any] = {"security": [{}]}

# A route's documented answers by status code (``responses=``), as FastAPI types them.
Responses = dict[int | str, dict[str, Any]]


def require_bot(caller: CallerDep) -> BotInfo:
    if caller.bot is None:
        if caller.organizer:
            raise HTTPException(
                status.HTTP_403_FORBIDDEN, "this endpoint needs a bot's token, not the organizer's"
            )
        raise _unauthorized("this endpoint needs a bot's token: Authorization: Bearer <bot token>")
    if caller.bot.disabled:
        raise HTTPException(status.HTTP_403_FORBIDDEN, f"bot {caller.bot.name!r} is disabled")
    return caller.bot


BotCallerDep = Annotated[BotInfo, Depends(require_bot)]

# Path parameters. Out-of-range ids are a 404 like any unknown id (see ids()).
MatchIdPath = Annotated[int, Path(description="a match id")]
TournamentIdPath = Annotated[int, Path(description="a tournament id")]
BotPath = Annotated[str, Path(description="a bot's name or id", max_length=200)]
LeaguePath = Annotated[str, Path(description="a league's name or id", max_length=200)]


def _query_names(dependant: Any) -> set[str]:
    names = {param.alias for param in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


def reject_unknown_query(request: Request) -> None:
    """A GET of the ``/v1`` API with a query parameter its route does not declare answers 422,
    naming it (``?ladder=1`` on a route without that filter is a mistake, never ignored). One
    dependency, given to every router in :func:`atout_arena.api.create_app`."""
    if request.method != "GET":
        return
    dependant = getattr(request.scope.get("route"), "dependant", None)
    if dependant is None:
        return
    known = _query_names(dependant)
    unknown = [name for name in dict.fromkeys(request.query_params) if name not in known]
    if unknown:
        allowed = ", ".join(sorted(known)) or "none"
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT,
                            f"unknown query parameter {unknown[0]!r} (this endpoint takes: {allowed})")


def known_id(value: int, what: str) -> int:
    """``value`` when it can be an id, else the 404 an unknown id gets."""
    if not 0 < value <= MAX_ID:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no {what} {value}")
    return value

