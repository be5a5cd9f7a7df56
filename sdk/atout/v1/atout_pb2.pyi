from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BotMessage(_message.Message):
    __slots__ = ("hello", "action", "ping", "pong", "actions")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    PING_FIELD_NUMBER: _ClassVar[int]
    PONG_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    action: Action
    ping: Ping
    pong: Pong
    actions: ActionBatch
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., action: _Optional[_Union[Action, _Mapping]] = ..., ping: _Optional[_Union[Ping, _Mapping]] = ..., pong: _Optional[_Union[Pong, _Mapping]] = ..., actions: _Optional[_Union[ActionBatch, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("protocol_version", "client", "version", "features")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    FEATURES_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    client: str
    version: str
    features: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, protocol_version: _Optional[int] = ..., client: _Optional[str] = ..., version: _Optional[str] = ..., features: _Optional[_Iterable[str]] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("request_id", "match_id", "action", "think_ms", "note")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    THINK_MS_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    match_id: str
    action: str
    think_ms: float
    note: bytes
    def __init__(self, request_id: _Optional[str] = ..., match_id: _Optional[str] = ..., action: _Optional[str] = ..., think_ms: _Optional[float] = ..., note: _Optional[bytes] = ...) -> None: ...

class ActionBatch(_message.Message):
    __slots__ = ("actions",)
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    actions: _containers.RepeatedCompositeFieldContainer[Action]
    def __init__(self, actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ...) -> None: ...

class Ping(_message.Message):
    __slots__ = ("nonce",)
    NONCE_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    def __init__(self, nonce: _Optional[int] = ...) -> None: ...

class Pong(_message.Message):
    __slots__ = ("nonce",)
    NONCE_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    def __init__(self, nonce: _Optional[int] = ...) -> None: ...

class ArenaMessage(_message.Message):
    __slots__ = ("welcome", "decision", "rejection", "match_start", "match_end", "ping", "pong", "error", "decisions", "bundle")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    REJECTION_FIELD_NUMBER: _ClassVar[int]
    MATCH_START_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    PING_FIELD_NUMBER: _ClassVar[int]
    PONG_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    BUNDLE_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    decision: DecisionRequest
    rejection: Rejection
    match_start: MatchStart
    match_end: MatchEnd
    ping: Ping
    pong: Pong
    error: Error
    decisions: DecisionBatch
    bundle: ArenaBundle
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., decision: _Optional[_Union[DecisionRequest, _Mapping]] = ..., rejection: _Optional[_Union[Rejection, _Mapping]] = ..., match_start: _Optional[_Union[MatchStart, _Mapping]] = ..., match_end: _Optional[_Union[MatchEnd, _Mapping]] = ..., ping: _Optional[_Union[Ping, _Mapping]] = ..., pong: _Optional[_Union[Pong, _Mapping]] = ..., error: _Optional[_Union[Error, _Mapping]] = ..., decisions: _Optional[_Union[DecisionBatch, _Mapping]] = ..., bundle: _Optional[_Union[ArenaBundle, _Mapping]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("protocol_version", "bot_id", "bot_name", "server_id", "keepalive_ms", "features")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    SERVER_ID_FIELD_NUMBER: _ClassVar[int]
    KEEPALIVE_MS_FIELD_NUMBER: _ClassVar[int]
    FEATURES_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    bot_id: str
    bot_name: str
    server_id: str
    keepalive_ms: int
    features: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, protocol_version: _Optional[int] = ..., bot_id: _Optional[str] = ..., bot_name: _Optional[str] = ..., server_id: _Optional[str] = ..., keepalive_ms: _Optional[int] = ..., features: _Optional[_Iterable[str]] = ...) -> None: ...

class DecisionBatch(_message.Message):
    __slots__ = ("requests",)
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[DecisionRequest]
    def __init__(self, requests: _Optional[_Iterable[_Union[DecisionRequest, _Mapping]]] = ...) -> None: ...

class ArenaBundle(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[ArenaMessage]
    def __init__(self, messages: _Optional[_Iterable[_Union[ArenaMessage, _Mapping]]] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "match_id", "game", "seat", "observation_json", "legal_actions", "deadline_ms", "deadline_unix_ms")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_JSON_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    match_id: str
    game: str
    seat: int
    observation_json: str
    legal_actions: _containers.RepeatedScalarFieldContainer[str]
    deadline_ms: int
    deadline_unix_ms: int
    def __init__(self, request_id: _Optional[str] = ..., match_id: _Optional[str] = ..., game: _Optional[str] = ..., seat: _Optional[int] = ..., observation_json: _Optional[str] = ..., legal_actions: _Optional[_Iterable[str]] = ..., deadline_ms: _Optional[int] = ..., deadline_unix_ms: _Optional[int] = ...) -> None: ...

class Rejection(_message.Message):
    __slots__ = ("request_id", "match_id", "action", "reason", "code", "final")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    FINAL_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    match_id: str
    action: str
    reason: str
    code: str
    final: bool
    def __init__(self, request_id: _Optional[str] = ..., match_id: _Optional[str] = ..., action: _Optional[str] = ..., reason: _Optional[str] = ..., code: _Optional[str] = ..., final: _Optional[bool] = ...) -> None: ...

class MatchStart(_message.Message):
    __slots__ = ("match_id", "game", "seat", "players", "options_json", "seat_names", "seat_versions")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_JSON_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    SEAT_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    game: str
    seat: int
    players: int
    options_json: str
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    seat_versions: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, match_id: _Optional[str] = ..., game: _Optional[str] = ..., seat: _Optional[int] = ..., players: _Optional[int] = ..., options_json: _Optional[str] = ..., seat_names: _Optional[_Iterable[str]] = ..., seat_versions: _Optional[_Iterable[str]] = ...) -> None: ...

class MatchEnd(_message.Message):
    __slots__ = ("match_id", "seat", "scores", "ranking", "reason", "faults")
    class FaultsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    RANKING_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    ranking: _containers.RepeatedScalarFieldContainer[int]
    reason: str
    faults: _containers.ScalarMap[str, int]
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., ranking: _Optional[_Iterable[int]] = ..., reason: _Optional[str] = ..., faults: _Optional[_Mapping[str, int]] = ...) -> None: ...

class Error(_message.Message):
    __slots__ = ("code", "message", "closes")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    CLOSES_FIELD_NUMBER: _ClassVar[int]
    code: str
    message: str
    closes: bool
    def __init__(self, code: _Optional[str] = ..., message: _Optional[str] = ..., closes: _Optional[bool] = ...) -> None: ...

class ListGamesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GameOption(_message.Message):
    __slots__ = ("name", "default_json", "choices_json", "allowed", "doc")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_JSON_FIELD_NUMBER: _ClassVar[int]
    CHOICES_JSON_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_FIELD_NUMBER: _ClassVar[int]
    DOC_FIELD_NUMBER: _ClassVar[int]
    name: str
    default_json: str
    choices_json: _containers.RepeatedScalarFieldContainer[str]
    allowed: str
    doc: str
    def __init__(self, name: _Optional[str] = ..., default_json: _Optional[str] = ..., choices_json: _Optional[_Iterable[str]] = ..., allowed: _Optional[str] = ..., doc: _Optional[str] = ...) -> None: ...

class GameInfo(_message.Message):
    __slots__ = ("id", "name", "players", "default_players", "options", "summary", "rules_version")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    RULES_VERSION_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    players: _containers.RepeatedScalarFieldContainer[int]
    default_players: int
    options: _containers.RepeatedCompositeFieldContainer[GameOption]
    summary: str
    rules_version: int
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., players: _Optional[_Iterable[int]] = ..., default_players: _Optional[int] = ..., options: _Optional[_Iterable[_Union[GameOption, _Mapping]]] = ..., summary: _Optional[str] = ..., rules_version: _Optional[int] = ...) -> None: ...

class ListGamesResponse(_message.Message):
    __slots__ = ("games",)
    GAMES_FIELD_NUMBER: _ClassVar[int]
    games: _containers.RepeatedCompositeFieldContainer[GameInfo]
    def __init__(self, games: _Optional[_Iterable[_Union[GameInfo, _Mapping]]] = ...) -> None: ...

class PracticeRequest(_message.Message):
    __slots__ = ("game", "players", "options_json", "move_time_ms", "house")
    GAME_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_JSON_FIELD_NUMBER: _ClassVar[int]
    MOVE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    HOUSE_FIELD_NUMBER: _ClassVar[int]
    game: str
    players: int
    options_json: str
    move_time_ms: int
    house: str
    def __init__(self, game: _Optional[str] = ..., players: _Optional[int] = ..., options_json: _Optional[str] = ..., move_time_ms: _Optional[int] = ..., house: _Optional[str] = ...) -> None: ...

class PracticeResponse(_message.Message):
    __slots__ = ("match_id", "replay_url")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REPLAY_URL_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    replay_url: str
    def __init__(self, match_id: _Optional[str] = ..., replay_url: _Optional[str] = ...) -> None: ...
