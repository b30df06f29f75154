"""The web table's ASGI app (Starlette): one page, and a JSON API the page plays through (docs/web.md "API").

==========================  =================================================================
``GET /``                   the page (``static/index.html``, plain JavaScript)
``GET /rules``              the rule book (``docs/rules.md``), each rule at ``#ID``: the page links rule ids here
``GET /api/meta``           games, table sizes, rule options, the agent specs offered, card names
``POST /api/games``         a new match: ``{game, players, opponents, practice, seed, hint, options}``
``GET /api/games/ID``       the person's view of the match
``POST /api/games/ID/move`` the person's move: ``{"action": ID}`` or ``{"kind": ..., ...}``
``POST …/opponent``         the agent to act plays one move (the page asks, one at a time)
``GET …/hint``              the hint agent's choice for the person's turn
``POST …/next``             the match's next hand, once this one is over
``GET …/records``           the match's finished hands as game records (JSON Lines), once the match is over
``DELETE /api/games/ID``    forget the game
``GET /replay``             the replay viewer (``static/replay.html``)
``POST /api/replays``       a records file (JSON Lines) in, hand ``?hand=K`` out as face-up steps
==========================  =================================================================

Every API reply is JSON (the records: JSON Lines, an attachment). A game's success is ``{"id",
"table", "event"}`` (``table``: what the person may see, ``rummy_apps.web.session.WebGame.snapshot``);
a refusal is a 4xx ``{"error": reason}``, and a
move the rules forbid also carries ``"refused": true`` and the unchanged ``table``; a bad request is
never a 5xx. Game work runs in a worker thread, one call at a time per game (``WebGame.lock``);
``Server-Timing: game;dur=MS`` says how long a call took at the server.

A deal's seed is a server secret (``secrets``) unless the person asks for a practice deal
(``"seed": N``, or ``"practice": true`` for a fresh seed shown on the page), which the server may
refuse (``practice=False``, ``--no-practice``). ``rummy_apps.web.guard`` refuses other sites and
unknown host names and bounds new games per client (docs/web.md "Safety").
"""

from __future__ import annotations

import json
import math
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from rummy_env.ruleset import GAMES, game_spec, make_ruleset
from .archive import RecordDir
from .errors import WebError, shown
from .guard import LOCAL_NAMES, SECURITY_HEADERS, NewGameLimiter, TableGuard
from .opponents import AgentSource
from .replays import replay_steps
from .rulebook import RULE_BOOK, rule_book_html
from .session import SEAT, WebGame, agent_seed
from .store import GameStore
from .view import card_faces

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = 16_384
"""Bytes in a request body, at most: a move or a new game is a few dozen."""
MAX_RECORDS_BODY = 262_144
"""Bytes in a records file sent to the replay viewer, at most: about a hundred hands."""
MAX_DEPTH = 8
"""Nesting of a request's JSON, at most: a new game's options are two deep."""
MAX_NUMBER = 2**53 - 1
"""The largest whole number a request may hold (and a practice seed may be): a browser's numbers
hold every whole number up to it exactly."""

NEW_GAME_FIELDS = ("game", "players", "opponents", "practice", "seed", "hint", "options")


@dataclass
class TableDefaults:
    """What a new game gets for the fields its request leaves out (the command line's settings)."""

    game: str = "romi"
    players: int = 2
    opponents: tuple[str, ...] = ()
    """One spec per other seat, or one for all; empty: the game's shipped policy (else ``rule``)."""
    hint: str = "rule"
    options: dict = field(default_factory=dict)
    delay_ms: int = 600
    """The page's pause before each opponent move, so they can be followed one at a time."""


def create_app(defaults: TableDefaults | None = None, store: GameStore | None = None,
               source: AgentSource | None = None, *, practice: bool = True, host_names: Iterable[str] = LOCAL_NAMES,
               new_games_per_minute: float = 30, clock: Callable[[], float] = time.monotonic,
               record_dir: RecordDir | None = None) -> Starlette:
    """The app; ``store`` and ``source`` default to a fresh ``GameStore`` and the built-in agent specs.

    ``practice``: whether a person may ask for a seeded deal; ``host_names``: the ``Host`` names it
    answers to (``guard.served_names``); ``new_games_per_minute``: each client's bound on new games,
    and on replays apart (``clock`` times it); ``record_dir``: where every finished hand is also
    appended (``--record-dir``)."""
    defaults = defaults or TableDefaults()
    store = store if store is not None else GameStore()
    source = source if source is not None else AgentSource()
    limiter = NewGameLimiter(new_games_per_minute, clock)
    replay_limiter = NewGameLimiter(new_games_per_minute, clock)

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    async def rules(request: Request) -> Response:
        book = rule_book_html()
        if book is None:
            raise WebError(404, f"this installation has no rule book to serve: it is {RULE_BOOK.name} in the "
                                f"repository's docs/ folder")
        return HTMLResponse(book)

    async def replay_page(request: Request) -> Response:
        return FileResponse(STATIC / "replay.html", media_type="text/html")

    async def meta(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(_meta, defaults, source, practice))

    async def new_game(request: Request) -> Response:
        body = await _json_object(request)
        started = time.perf_counter()
        client = _client(request)
        _take_token(limiter, client, "new games", new_games_per_minute)
        game = await run_in_threadpool(_new_game, body, defaults, source, practice, record_dir)
        game_id = store.add(game, client)
        return await _answer(game_id, game, None, (), started, status=201)

    async def records(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        game = store.get(game_id)
        text = await run_in_threadpool(game.records_text)
        name = f"{game.rules.game}-match-{game.seed}.jsonl"
        return Response(text, media_type="application/x-ndjson; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    async def replays(request: Request) -> Response:
        hand = request.query_params.get("hand", "1")
        if not hand.isdigit() or len(hand) > 6:
            raise WebError(400, f"hand {shown(hand)}: expected a hand's number in the file, counted from 1")
        lines = _json_lines(await _body(request, MAX_RECORDS_BODY))
        started = time.perf_counter()
        _take_token(replay_limiter, _client(request), "replays", new_games_per_minute)
        reply = await run_in_threadpool(replay_steps, lines, int(hand))
        return JSONResponse(reply, headers={"Server-Timing": f"game;dur={(time.perf_counter() - started) * 1000:.2f}"})

    async def show(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        return await _answer(game_id, store.get(game_id), None, (), time.perf_counter())

    def game_call(method: str, reads_body: bool = False):
        async def endpoint(request: Request) -> Response:
            game_id = request.path_params["game_id"]
            game = store.get(game_id)
            args = (await _json_object(request),) if reads_body else ()
            return await _answer(game_id, game, method, args, time.perf_counter())
        return endpoint

    async def forget(request: Request) -> Response:
        store.remove(request.path_params["game_id"])
        return Response(status_code=204)

    routes = [
        Route("/", page),
        Route("/rules", rules),
        Route("/replay", replay_page),
        Route("/api/meta", meta),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{game_id}", show, methods=["GET"]),
        Route("/api/games/{game_id}", forget, methods=["DELETE"]),
        Route("/api/games/{game_id}/move", game_call("play", reads_body=True), methods=["POST"]),
        Route("/api/games/{game_id}/opponent", game_call("opponent_move"), methods=["POST"]),
        Route("/api/games/{game_id}/hint", game_call("hint"), methods=["GET"]),
        Route("/api/games/{game_id}/next", game_call("next_hand"), methods=["POST"]),
        Route("/api/games/{game_id}/records", records, methods=["GET"]),
        Route("/api/replays", replays, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    handlers = {WebError: _web_error, HTTPException: _http_error, Exception: _server_error}
    app = Starlette(routes=routes, exception_handlers=handlers, middleware=[Middleware(TableGuard, names=host_names)])
    app.state.store = store
    app.state.source = source
    app.state.defaults = defaults
    return app


# ----------------------------------------------------------------------------- the page's facts


def _meta(defaults: TableDefaults, source: AgentSource, practice: bool) -> dict:
    """The games, their table sizes and options, the agent specs offered per table size, and the card names."""
    games = {}
    for name in GAMES:
        spec = game_spec(name)
        sizes = range(spec.players[0], spec.players[1] + 1)
        games[name] = {"title": spec.title, "players": list(spec.players), "options": dict(spec.options),
                       "agents": {n: source.offered(name, n) for n in sizes},
                       "table_melds": spec.table_melds, "declares": spec.declares, "cut_card": spec.cut_card}
    return {"games": games, "cards": card_faces(), "seat": SEAT, "practice": practice, "max_seed": MAX_NUMBER,
            "defaults": {"game": defaults.game, "players": defaults.players, "opponents": list(defaults.opponents),
                         "hint": defaults.hint, "options": defaults.options, "delay_ms": defaults.delay_ms}}


# ----------------------------------------------------------------------------- new games


def _new_game(body: dict, defaults: TableDefaults, source: AgentSource, practice_allowed: bool,
              record_dir: RecordDir | None) -> WebGame:
    """The match a new-game request asks for; each bad field is a 400 naming it."""
    unknown = sorted(set(body) - set(NEW_GAME_FIELDS))
    if unknown:
        raise WebError(400, f"unknown field {shown(unknown[0])}: a new game takes {', '.join(NEW_GAME_FIELDS)}")
    game = body.get("game", defaults.game)
    if not isinstance(game, str) or game not in GAMES:
        raise WebError(400, f"unknown game {shown(game)}: expected one of {', '.join(GAMES)}")
    same_game = game == defaults.game
    players = body.get("players", defaults.players if same_game else game_spec(game).players[0])
    options = body.get("options", defaults.options if same_game else {})
    if not isinstance(options, dict) or not all(
            isinstance(v, (bool, int)) or v is None for v in options.values()):
        raise WebError(400, f"options {shown(options)}: expected an object of rule options, each true, false, "
                            f"null or an int (RULES names them)")
    if isinstance(players, bool) or not isinstance(players, int):
        raise WebError(400, f"players {shown(players)} is not an int")
    try:
        rules = make_ruleset(game, players, **options)
    except (TypeError, ValueError, OverflowError) as error:
        raise WebError(400, str(error)[:300]) from None
    seed, practice = _deal_seed(body, practice_allowed)
    specs = body.get("opponents", list(defaults.opponents) if same_game and defaults.opponents else None)
    if specs is None:
        specs = [source.default(game, players)]
    if isinstance(specs, str):
        specs = [specs]
    if not isinstance(specs, list) or not specs or not all(isinstance(s, str) for s in specs):
        raise WebError(400, f"opponents {shown(specs)}: expected a list of agent specs, one per other seat or one "
                            f"for all")
    if len(specs) == 1:
        specs = specs * (players - 1)
    if len(specs) != players - 1:
        raise WebError(400, f"{len(specs)} opponents for {players} players: give one spec per other seat "
                            f"({players - 1}), or one for all")
    hint = body.get("hint", defaults.hint)
    if not isinstance(hint, str):
        raise WebError(400, f"hint {shown(hint)}: expected an agent spec")
    offered = rules.options
    agents = [source.make(spec, game, players, agent_seed(seed, 0, p), offered) for p, spec in enumerate(specs, 1)]
    hint_seed = agent_seed(seed, 0, SEAT)
    source.make(hint, game, players, hint_seed, offered)  # a hint spec that is not offered fails now, not at the hint
    return WebGame(rules, specs, agents, seed, practice, hint,
                   lambda: source.make(hint, game, players, hint_seed, offered),
                   None if record_dir is None else record_dir.match_file(game))


def _deal_seed(body: dict, practice_allowed: bool) -> tuple[int, bool]:
    """The deal's seed and whether it is a practice deal: the request's seed, else a fresh secret one."""
    practice = body.get("practice")
    seed = body.get("seed")
    if practice is not None and not isinstance(practice, bool):
        raise WebError(400, f"practice {shown(practice)}: expected true or false")
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_NUMBER:
            raise WebError(400, f"seed {shown(seed)}: expected a whole number from 0 to {MAX_NUMBER}")
        if practice is False:
            raise WebError(400, "a seed chooses a practice deal: leave it out, or say \"practice\": true")
        practice = True
    if practice and not practice_allowed:
        raise WebError(403, "practice deals (a chosen seed) are off on this server (--no-practice): "
                            "leave out \"seed\" and \"practice\"")
    return (secrets.randbelow(MAX_NUMBER + 1) if seed is None else seed), bool(practice)


# ----------------------------------------------------------------------------- replies


def _client(request: Request) -> str:
    return request.client.host if request.client else ""


def _take_token(limiter: NewGameLimiter, client: str, what: str, per_minute: float) -> None:
    """Take one of ``client``'s tokens, or refuse with a 429 that says when to try again."""
    wait = limiter.wait(client)
    if wait:
        raise WebError(429, f"too many {what} from {client}: at most {per_minute:g} a minute; "
                            f"try again in {math.ceil(wait)} s", headers={"Retry-After": str(math.ceil(wait))})


async def _body(request: Request, limit: int) -> bytes:
    """The request body, at most ``limit`` bytes (else a 413): refused from its ``Content-Length``, or,
    sent in chunks, as soon as it passes the limit; it is never read whole."""
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > limit):
        raise WebError(413, f"the request body is {length[:30]} bytes: at most {limit}")
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise WebError(413, f"the request body is over {limit} bytes: at most {limit}")
    except ClientDisconnect:
        raise WebError(400, "the request body ended early: the client went away") from None
    return bytes(body)


async def _json_object(request: Request) -> dict:
    """The request body as a JSON object of at most ``MAX_BODY`` bytes; anything else is a 400 (a 413
    when too long) naming the problem."""
    return parse_object(await _body(request, MAX_BODY))


def _json_lines(body: bytes) -> list[tuple[int, dict]]:
    """A records file (JSON Lines) as (line number, object) for each non-blank line; a line that is not
    a JSON object is a 400 naming it."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise WebError(400, f"the records file is not UTF-8 text: {error.reason} at byte {error.start}") from None
    lines = []
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            lines.append((number, parse_object(line.encode())))
        except WebError as error:
            raise WebError(400, f"line {number}: {error.message}") from None
    return lines


def parse_object(body: bytes) -> dict:
    """A request body as a JSON object of at most ``MAX_DEPTH`` levels and whole numbers up to ``MAX_NUMBER``."""
    if not body.strip():
        return {}
    try:
        data = json.loads(body.decode("utf-8"), parse_int=_whole_number, parse_float=_finite_number,
                          parse_constant=_no_constant)
    except RecursionError:
        raise WebError(400, f"the request's JSON is nested too deeply: at most {MAX_DEPTH} levels") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise WebError(400, f"malformed JSON in the request body: {str(error)[:200]}") from None
    if not isinstance(data, dict):
        raise WebError(400, f"the request body is a JSON {type(data).__name__}: expected an object")
    if _depth(data) > MAX_DEPTH:
        raise WebError(400, f"the request's JSON is nested too deeply: at most {MAX_DEPTH} levels")
    return data


def _whole_number(text: str) -> int:
    if len(text) > 17 or abs(int(text)) > MAX_NUMBER:
        raise WebError(400, f"the number {text[:20]}{'...' if len(text) > 20 else ''} is too large: "
                            f"at most {MAX_NUMBER} either way")
    return int(text)


def _finite_number(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise WebError(400, f"the number {text[:20]} is too large for a request")
    return value


def _no_constant(text: str):
    raise WebError(400, f"{text} is not JSON: a request's numbers are finite")


def _depth(data) -> int:
    """How deeply ``data`` (parsed JSON) nests lists and objects, counted without recursion."""
    deepest, todo = 0, [(data, 1)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, level)
            todo.extend((x, level + 1) for x in (item.values() if isinstance(item, dict) else item))
    return deepest



async def _answer(game_id: str, game: WebGame, method: str | None, args: tuple, started: float,
                  status: int = 200) -> Response:
    """Run ``game.method(*args)`` (if any) in a worker thread and reply with what the person may now see."""
    def work() -> tuple[int, dict]:
        with game.lock:  # the move and the view it leads to, with no other call between them
            try:
                event = getattr(game, method)(*args) if method is not None else None
            except WebError as error:
                if not error.refused:
                    raise
                return error.status, {"error": error.message, "refused": True, "id": game_id,
                                      "table": game.snapshot()}
            if method == "hint":
                return status, {"id": game_id, "hint": event}
            return status, {"id": game_id, "table": game.snapshot(), "event": event}

    code, body = await run_in_threadpool(work)
    response = JSONResponse(body, status_code=code)
    response.headers["Server-Timing"] = f"game;dur={(time.perf_counter() - started) * 1000:.2f}"
    return response


async def _web_error(request: Request, error: WebError) -> Response:
    return JSONResponse({"error": error.message}, status_code=error.status, headers=error.headers)


async def _http_error(request: Request, error: HTTPException) -> Response:
    reason = {404: f"no such page or API call: {request.url.path[:100]}",
              405: f"{request.method} is not allowed on {request.url.path[:100]}"}.get(error.status_code, error.detail)
    return JSONResponse({"error": reason}, status_code=error.status_code, headers=getattr(error, "headers", None))


async def _server_error(request: Request, error: Exception) -> Response:
    """A server bug (bad requests are 4xx before they get here): named, its details left to the server's log."""
    return JSONResponse({"error": f"the server failed ({type(error).__name__}): a bug, its details are in the "
                                  f"server's log"}, status_code=500, headers=SECURITY_HEADERS)
