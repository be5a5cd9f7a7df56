"""One error model for every 4xx, and an OpenAPI that says what is sent.

Every error the API answers is an :class:`ApiError`: ``{"detail": "<one line>", "errors": [...]}``.
``detail`` is always a string (a request that breaks the schema gets one line naming each bad
field; a rule of the arena gets its own sentence); ``errors`` lists the fields of a request that
broke the schema (``loc``, ``msg``, ``type``), and is empty otherwise.

:func:`install` puts the handlers and the HTTP middleware on an app; :func:`document` makes its
OpenAPI list, for every operation, the codes it can answer with this model:

- ``400``: a body that is not UTF-8 (operations with a body);
- ``401`` / ``403``: operations that read the caller's token;
- ``404``: operations with a path parameter or a ``bot`` query (an unknown bot filter is a 404);
- ``405``: a method the path does not have (``Allow`` lists those it has);
- ``422``: a request that breaks the schema (every operation with a parameter or a body), and
  on operations that create something, what only the arena can check (game options, bots
  named twice).

Outages are a ``503`` in the same shape, on every operation: a request that needs the database
(or Redis) while it is unavailable gets one line saying which, and ``Retry-After``; the API logs
one line for it (then at most one every :data:`OUTAGE_NOTE_EVERY_S` with how many were refused),
never a traceback. ``/healthz`` says which part is down.

``OPTIONS`` on any path of the API answers ``204`` with ``Allow`` (no CORS: the API and its
dashboard have one origin). NaN and Infinity, which JSON does not have, are a 422 in any body,
and so are arrays and objects nested more than :data:`MAX_DEPTH` deep (before authentication).
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable
from typing import Any

import redis
from fastapi import FastAPI, HTTPException, Request, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field
from sqlalchemy import exc as db_errors
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from atout_arena.services.competitions import CompetitionError

log = logging.getLogger(__name__)


class FieldError(BaseModel):
    loc: list[str | int] = Field(description="where: 'body', 'query' or 'path', then the field")
    msg: str
    type: str


class ApiError(BaseModel):
    """What every 4xx (and an outage's 503) answer holds."""

    detail: str = Field(description="what is wrong, in one line")
    errors: list[FieldError] = Field(
        default_factory=list, description="the fields that broke the schema (empty for other errors)"
    )


def error_body(detail: str, errors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"detail": detail, "errors": errors or []}


def _field_errors(exc: RequestValidationError) -> list[dict[str, Any]]:
    errors = []
    for e in exc.errors():
        msg = str(e.get("msg", ""))
        given = e.get("input")
        if isinstance(given, str | int) and not isinstance(given, bool) and len(repr(given)) <= 40:
            msg = f"{msg} (got {given!r})"
        errors.append({
            "loc": [part if isinstance(part, int) else str(part) for part in e.get("loc", ())],
            "msg": msg,
            "type": str(e.get("type", "")),
        })
    return errors


def validation_detail(errors: list[dict[str, Any]]) -> str:
    """One line for the fields that broke the schema: ``body.players: Input should be ...``."""
    parts = []
    for e in errors:
        where = ".".join(str(p) for p in e["loc"]) or "request"
        parts.append(f"{where}: {e['msg']}")
    return "; ".join(parts) or "the request does not match the schema"


# -- the middleware: OPTIONS, 405, NaN ---------------------------------------------------------

HTTP_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"}


def _json_error(code: int, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(error_body(detail), status_code=code, headers=headers)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON: numbers must be finite")


class HttpRules:
    """ASGI middleware: ``OPTIONS`` answers 204 with ``Allow``; a method a path lacks is a 405
    whose ``Allow`` lists every method of the path (Starlette names one route's only); a JSON
    body with NaN or Infinity is a 422 before it reaches a route. The paths and their methods
    are the OpenAPI's (``openapi``): what the schema says is what is answered. Paths outside
    the schema (the dashboard, /docs) are left to the app."""

    def __init__(self, app: ASGIApp, openapi: Callable[[], dict[str, Any]]) -> None:
        self.app = app
        self.openapi = openapi
        self._paths: list[tuple[re.Pattern[str], list[str]]] | None = None

    def paths(self) -> list[tuple[re.Pattern[str], list[str]]]:
        if self._paths is None:
            paths = []
            for path, item in self.openapi().get("paths", {}).items():
                regex = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path))
                methods = sorted({m.upper() for m in item if m.upper() in HTTP_METHODS} | {"OPTIONS"})
                paths.append((re.compile(regex), methods))
            self._paths = paths
        return self._paths

    def allowed(self, path: str) -> list[str] | None:
        """The methods of ``path`` (and OPTIONS), or None when the OpenAPI has no such path."""
        for regex, methods in self.paths():
            if regex.fullmatch(path):
                return methods
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        allowed = self.allowed(scope["path"])
        if allowed is not None and method not in allowed:
            await _json_error(
                status.HTTP_405_METHOD_NOT_ALLOWED,
                f"{method} is not a method of {scope['path']}; allowed: {', '.join(allowed)}",
                {"Allow": ", ".join(allowed)},
            )(scope, receive, send)
            return
        if method == "OPTIONS" and allowed is not None:
            headers = {"Allow": ", ".join(allowed)}
            await Response(status_code=status.HTTP_204_NO_CONTENT, headers=headers)(scope, receive, send)
            return
        if method not in ("POST", "PUT", "PATCH") or not _is_json(scope):
            await self.app(scope, receive, send)
            return
        body, more = await _read_body(receive)
        refusal: str | None = None
        try:
            refusal = too_deep(json.loads(body.decode("utf-8"), parse_constant=_refuse_constant))
        except UnicodeDecodeError:
            pass  # FastAPI answers a body it cannot read with a 400
        except RecursionError:  # deeper than the interpreter's stack: deeper than MAX_DEPTH
            refusal = NESTED_TOO_DEEP
        except ValueError as exc:
            if "is not JSON" in str(exc):
                refusal = str(exc)
        if refusal is not None:
            errors = [{"loc": ["body"], "msg": refusal, "type": "json_invalid"}]
            await JSONResponse(error_body(validation_detail(errors), errors),
                               status_code=status.HTTP_422_UNPROCESSABLE_CONTENT)(scope, receive, send)
            return
        await self.app(scope, _replay(body, more, receive), send)


MAX_DEPTH = 32  # arrays and objects in one another in a body: the arena's deepest takes 4
NESTED_TOO_DEEP = f"arrays and objects are nested more than {MAX_DEPTH} deep"


def too_deep(value: Any, limit: int = MAX_DEPTH) -> str | None:
    """:data:`NESTED_TOO_DEEP` when ``value`` (parsed JSON) nests arrays and objects more than
    ``limit`` deep, else None. Walked without recursion: the validation and error handling
    after it recurse, and a body nested a thousand deep broke them (a 500, RecursionError)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        elif not isinstance(node, list):
            continue
        if depth + 1 > limit:
            return NESTED_TOO_DEEP
        stack.extend((child, depth + 1) for child in node)
    return None


def _is_json(scope: Scope) -> bool:
    """A JSON body: so typed, or untyped (FastAPI reads a body with no Content-Type as JSON)."""
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            kind = value.split(b";")[0].strip().lower()
            return kind == b"application/json" or kind.endswith(b"+json")
    return True


async def _read_body(receive: Receive) -> tuple[bytes, list[Message]]:
    chunks = []
    others: list[Message] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            others.append(message)
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks), others


def _replay(body: bytes, others: list[Message], receive: Receive) -> Receive:
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}, *others]

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


# -- the services' refusals ---------------------------------------------------------------------

# The status code of each ``kind`` a service's error carries (CompetitionError, RegistryError,
# services.deals.ViewError): the service decides, the route only says it in HTTP.
REFUSALS = {
    "invalid": status.HTTP_422_UNPROCESSABLE_CONTENT,
    "unauthorized": status.HTTP_401_UNAUTHORIZED,
    "forbidden": status.HTTP_403_FORBIDDEN,
    "not_found": status.HTTP_404_NOT_FOUND,
    "conflict": status.HTTP_409_CONFLICT,
    "busy": status.HTTP_429_TOO_MANY_REQUESTS,
}


def refused(kind: str, detail: str) -> HTTPException:
    """A service's refusal of ``kind`` as the HTTP error of :data:`REFUSALS` (an unknown kind is
    a 422); an ``unauthorized`` one asks for a token (``WWW-Authenticate: Bearer``)."""
    headers = {"WWW-Authenticate": "Bearer"} if kind == "unauthorized" else None
    return HTTPException(REFUSALS.get(kind, status.HTTP_422_UNPROCESSABLE_CONTENT), detail, headers=headers)


# -- outages: the database or Redis unavailable -------------------------------------------------

RETRY_AFTER_S = 5  # what a refused client is told to wait (a restart of PostgreSQL takes seconds)
OUTAGE_NOTE_EVERY_S = 10.0  # during an outage, at most one log line this often (per part)
# What says that a part is unreachable, rather than that a query is wrong (a bug, still a 500):
# SQLAlchemy's OperationalError (the server is down or restarting, a connection was lost, the
# SQLite file cannot be opened or is locked), InterfaceError (a connection closed under us), and
# its pool's TimeoutError (no connection to be had); Redis's connection and timeout errors.
DATABASE_DOWN = (db_errors.OperationalError, db_errors.InterfaceError, db_errors.TimeoutError)
REDIS_DOWN = (redis.ConnectionError, redis.TimeoutError)


class OutageNotes:
    """The log of requests refused because a part is unavailable: the first of an outage at
    once, then at most one line every ``every_s`` seconds, saying how many were refused since,
    not a traceback each."""

    def __init__(self, every_s: float = OUTAGE_NOTE_EVERY_S) -> None:
        self.every_s = every_s
        self._noted: dict[str, float] = {}  # part -> when its last line was written
        self._refused: dict[str, int] = {}  # part -> refusals since
        self._lock = threading.Lock()

    def refused(self, part: str, request: Request, exc: Exception) -> None:
        now = time.monotonic()
        with self._lock:
            count = self._refused.get(part, 0) + 1
            last = self._noted.get(part)
            if last is not None and now - last < self.every_s:
                self._refused[part] = count
                return
            self._refused[part] = 0
            self._noted[part] = now
        reason = f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:300]
        since = f" ({count} requests refused in the last {now - last:.0f} s)" if last and count > 1 else ""
        log.warning("%s unavailable: %s %s answered 503%s: %s", part, request.method, request.url.path,
                    since, reason)


def unavailable(part: str) -> JSONResponse:
    """The 503 of a request that needs ``part`` while it is unavailable."""
    return JSONResponse(error_body(f"the arena's {part} is unavailable: try again in a few seconds"),
                        status_code=status.HTTP_503_SERVICE_UNAVAILABLE,
                        headers={"Retry-After": str(RETRY_AFTER_S)})


# -- the handlers -------------------------------------------------------------------------------


def install(app: FastAPI) -> None:
    """The error handlers and the middleware of :class:`HttpRules` on ``app``."""

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else json.dumps(exc.detail)
        return JSONResponse(error_body(detail), status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = _field_errors(exc)
        return JSONResponse(error_body(validation_detail(errors), errors),
                            status_code=status.HTTP_422_UNPROCESSABLE_CONTENT)

    @app.exception_handler(CompetitionError)
    async def competition_error(_: Request, exc: CompetitionError) -> JSONResponse:
        return JSONResponse(error_body(str(exc)), status_code=status.HTTP_422_UNPROCESSABLE_CONTENT)

    notes = OutageNotes()

    async def database_down(request: Request, exc: Exception) -> JSONResponse:
        notes.refused("database", request, exc)
        return unavailable("database")

    async def redis_down(request: Request, exc: Exception) -> JSONResponse:
        notes.refused("Redis", request, exc)
        return unavailable("Redis")

    for kind in DATABASE_DOWN:
        app.add_exception_handler(kind, database_down)
    for redis_kind in REDIS_DOWN:
        app.add_exception_handler(redis_kind, redis_down)

    app.add_middleware(HttpRules, openapi=lambda: app.openapi())


# -- the OpenAPI ----------------------------------------------------------------------------------

DESCRIPTIONS = {
    400: "the body is not UTF-8 JSON",
    401: "no token where one is needed, or an unknown token",
    403: "a token without the right",
    404: "no such resource (or no such bot in a filter)",
    405: "a method the path does not have (Allow lists those it has)",
    422: "the request breaks the schema, or a rule of the arena (the detail says which)",
    503: "the arena's database or Redis is unavailable: try again after Retry-After seconds",
}


def _integral_bounds(node: Any) -> None:
    """Integer bounds as integers (FastAPI writes 2**62 as 4.6e18, which reads back as more)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("maximum", "minimum") and isinstance(value, float) and value.is_integer():
                node[key] = int(value)
            else:
                _integral_bounds(value)
    elif isinstance(node, list):
        for value in node:
            _integral_bounds(value)


def document(app: FastAPI) -> None:
    """Make ``app.openapi()`` declare :class:`ApiError` for every 4xx of every operation, and the
    codes each operation can answer (401 and 403 where it reads a token: its ``security``)."""
    original = app.openapi
    done: list[dict[str, Any]] = []

    def openapi() -> dict[str, Any]:
        if done:
            return done[0]
        schema = original()
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        components.pop("HTTPValidationError", None)
        components.pop("ValidationError", None)
        components["ApiError"] = ApiError.model_json_schema(ref_template="#/components/schemas/{model}")
        components["FieldError"] = components["ApiError"].pop("$defs")["FieldError"]
        ref = {"application/json": {"schema": {"$ref": "#/components/schemas/ApiError"}}}
        for item in schema.get("paths", {}).values():
            for operation in item.values():
                responses = operation.setdefault("responses", {})
                params = operation.get("parameters", [])
                codes = {405, 503}
                if params or "requestBody" in operation:
                    codes.add(422)
                if "requestBody" in operation:
                    codes.add(400)
                if operation.get("security"):
                    codes |= {401, 403}
                if any(p.get("in") == "path" or p.get("name") == "bot" for p in params):
                    codes.add(404)
                for code in codes:
                    responses.setdefault(str(code), {"description": DESCRIPTIONS[code]})
                for code, response in responses.items():
                    if code.startswith("4") or (code == "503" and "content" not in response):
                        response["content"] = ref
                        if response.get("description") in (None, "", "Validation Error"):
                            response["description"] = DESCRIPTIONS.get(int(code), "an error")
        _integral_bounds(schema)
        done.append(schema)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
