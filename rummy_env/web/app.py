"""The web table's ASGI app (Starlette): one page, and a JSON API the page plays through (docs/web.md "API").

==========================  =================================================================
``GET /``                   the page (``static/index.html``, plain JavaScript)
``GET /api/meta``           games, table sizes, rule options, the agent specs offered, card names
``POST /api/games``         a new match: ``{game, players, opponents, seed, hint, options}``
``GET /api/games/ID``       the person's view of the match
``POST /api/games/ID/move`` the person's move: ``{"action": ID}`` or ``{"kind": ..., ...}``
``POST …/opponent``         the agent to act plays one move (the page asks, one at a time)
``GET …/hint``              the hint agent's choice for the person's turn
``POST …/next``             the match's next hand, once this one is over
``DELETE /api/games/ID``    forget the game
==========================  =================================================================

Every reply is JSON. A success is ``{"id", "table", "event"}`` (``table``: what the person may
see, ``rummy_env.web.session.WebGame.snapshot``); a refusal is a 4xx ``{"error": reason}``, and a
move the rules forbid also carries ``"refused": true`` and the unchanged ``table``. Game work runs
in a worker thread, one call at a time (``session.ENGINE_LOCK``); ``Server-Timing: game;dur=MS``
says how long a call took at the server.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..ruleset import GAMES, game_spec, make_ruleset
from .errors import WebError
from .opponents import AgentSource
from .session import ENGINE_LOCK, SEAT, WebGame
from .store import GameStore
from .view import card_faces

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = 16_384
"""Bytes in a request body, at most: a move or a new game is a few dozen."""

NEW_GAME_FIELDS = ("game", "players", "opponents", "seed", "hint", "options")


@dataclass
class TableDefaults:
    """What a new game gets for the fields its request leaves out (the command line's settings)."""

    game: str = "romi"
    players: int = 2
    opponents: tuple[str, ...] = ()
    """One spec per other seat, or one for all; empty: the game's shipped policy (else ``rule``)."""
    seed: int = 0
    hint: str = "rule"
    options: dict = field(default_factory=dict)
    delay_ms: int = 600
    """The page's pause before each opponent move, so they can be followed one at a time."""


def create_app(defaults: TableDefaults | None = None, store: GameStore | None = None,
               source: AgentSource | None = None) -> Starlette:
    """The app; ``store`` and ``source`` default to a fresh ``GameStore`` and the built-in agent specs."""
    defaults = defaults or TableDefaults()
    store = store if store is not None else GameStore()
    source = source if source is not None else AgentSource()

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    async def meta(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(_meta, defaults, source))

    async def new_game(request: Request) -> Response:
        body = await _json_object(request)
        started = time.perf_counter()
        game = await run_in_threadpool(_new_game, body, defaults, source)
        game_id = store.add(game)
        return await _answer(game_id, game, None, (), started, status=201)

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
        Route("/api/meta", meta),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{game_id}", show, methods=["GET"]),
        Route("/api/games/{game_id}", forget, methods=["DELETE"]),
        Route("/api/games/{game_id}/move", game_call("play", reads_body=True), methods=["POST"]),
        Route("/api/games/{game_id}/opponent", game_call("opponent_move"), methods=["POST"]),
        Route("/api/games/{game_id}/hint", game_call("hint"), methods=["GET"]),
        Route("/api/games/{game_id}/next", game_call("next_hand"), methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    handlers = {WebError: _web_error, HTTPException: _http_error, Exception: _server_error}
    app = Starlette(routes=routes, exception_handlers=handlers)
    app.state.store = store
    app.state.source = source
    app.state.defaults = defaults
    return app


# ----------------------------------------------------------------------------- the page's facts


def _meta(defaults: TableDefaults, source: AgentSource) -> dict:
    """The games, their table sizes and options, the agent specs offered per table size, and the card names."""
    games = {}
    for name in GAMES:
        spec = game_spec(name)
        sizes = range(spec.players[0], spec.players[1] + 1)
        games[name] = {"title": spec.title, "players": list(spec.players), "options": dict(spec.options),
                       "agents": {n: source.offered(name, n) for n in sizes},
                       "table_melds": spec.table_melds, "declares": spec.declares, "cut_card": spec.cut_card}
    return {"games": games, "cards": card_faces(), "seat": SEAT,
            "defaults": {"game": defaults.game, "players": defaults.players, "opponents": list(defaults.opponents),
                         "seed": defaults.seed, "hint": defaults.hint, "options": defaults.options,
                         "delay_ms": defaults.delay_ms}}


# ----------------------------------------------------------------------------- new games


def _new_game(body: dict, defaults: TableDefaults, source: AgentSource) -> WebGame:
    """The match a new-game request asks for; each bad field is a 400 naming it."""
    unknown = sorted(set(body) - set(NEW_GAME_FIELDS))
    if unknown:
        raise WebError(400, f"unknown field {unknown[0]!r}: a new game takes {', '.join(NEW_GAME_FIELDS)}")
    game = body.get("game", defaults.game)
    if not isinstance(game, str) or game not in GAMES:
        raise WebError(400, f"unknown game {game!r}: expected one of {', '.join(GAMES)}")
    same_game = game == defaults.game
    players = body.get("players", defaults.players if same_game else game_spec(game).players[0])
    options = body.get("options", defaults.options if same_game else {})
    if not isinstance(options, dict) or not all(
            isinstance(v, (bool, int)) or v is None for v in options.values()):
        raise WebError(400, f"options {options!r}: expected an object of rule options, each true, false, null or "
                            f"an int (RULES names them)")
    if isinstance(players, bool) or not isinstance(players, int):
        raise WebError(400, f"players {players!r} is not an int")
    try:
        rules = make_ruleset(game, players, **options)
    except (TypeError, ValueError) as error:
        raise WebError(400, str(error)) from None
    seed = body.get("seed", defaults.seed)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise WebError(400, f"seed {seed!r} is not an int")
    specs = body.get("opponents", list(defaults.opponents) if same_game and defaults.opponents else None)
    if specs is None:
        specs = [source.default(game, players)]
    if isinstance(specs, str):
        specs = [specs]
    if not isinstance(specs, list) or not specs or not all(isinstance(s, str) for s in specs):
        raise WebError(400, f"opponents {specs!r}: expected a list of agent specs, one per other seat or one for all")
    if len(specs) == 1:
        specs = specs * (players - 1)
    if len(specs) != players - 1:
        raise WebError(400, f"{len(specs)} opponents for {players} players: give one spec per other seat "
                            f"({players - 1}), or one for all")
    hint = body.get("hint", defaults.hint)
    if not isinstance(hint, str):
        raise WebError(400, f"hint {hint!r}: expected an agent spec")
    offered = rules.options
    with ENGINE_LOCK:
        agents = [source.make(spec, game, players, seed + i + 1, offered) for i, spec in enumerate(specs)]
        source.make(hint, game, players, seed, offered)  # a hint spec that is not offered fails now, not at the hint
        return WebGame(rules, specs, agents, seed, hint, lambda: source.make(hint, game, players, seed, offered))


# ----------------------------------------------------------------------------- replies


async def _json_object(request: Request) -> dict:
    """The request body as a JSON object; anything else is a 400 (a 413 when too long) naming the problem."""
    body = await request.body()
    if len(body) > MAX_BODY:
        raise WebError(413, f"the request body is {len(body)} bytes: at most {MAX_BODY}")
    if not body.strip():
        return {}
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        raise WebError(400, f"malformed JSON in the request body: {error}") from None
    if not isinstance(data, dict):
        raise WebError(400, f"the request body is a JSON {type(data).__name__}: expected an object")
    return data


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
    return JSONResponse({"error": error.message}, status_code=error.status)


async def _http_error(request: Request, error: HTTPException) -> Response:
    reason = {404: f"no such page or API call: {request.url.path[:100]}",
              405: f"{request.method} is not allowed on {request.url.path[:100]}"}.get(error.status_code, error.detail)
    return JSONResponse({"error": reason}, status_code=error.status_code, headers=getattr(error, "headers", None))


async def _server_error(request: Request, error: Exception) -> Response:
    return JSONResponse({"error": f"the server failed: {type(error).__name__}: {error}"}, status_code=500)
