"""``python -m rummy_apps.web`` (and ``rummy-web``): serve the web table (docs/web.md)."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence

from rummy_env.ruleset import GAMES, make_ruleset, option_argument


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m rummy_apps.web",
        description="Serve a web table for Indian Rummy, Basic Rummy and Indiai römi: play in the browser "
                    "against agents. The page can start a game of any game and table size; these settings "
                    "are its defaults. The server checks every move with the rules engine and sends the "
                    "browser only what your seat may see (docs/web.md).",
        epilog="Examples:\n  python -m rummy_apps.web --game romi --opponents pretrained:romi\n"
               "  python -m rummy_apps.web --game indian --players 3 --opponents rule search\n"
               "  python -m rummy_apps.web --host 0.0.0.0 --allowed-host table.local --no-practice\n"
               "  python -m rummy_apps.web --game basic --opponents onnx:basic.onnx --port 8080\n"
               "  python -m rummy_apps.web --record-dir hands/    # then: python -m rummy_env.records check hands/FILE",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 opens it "
                             "to the network: name the addresses people type with --allowed-host)")
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                        help="a host name (or address) the page may be opened under, besides 127.0.0.1, "
                             "localhost, [::1] and --host; repeatable. Other names are refused (DNS rebinding)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    parser.add_argument("--game", choices=GAMES, default="romi", help="the page's default game (default romi)")
    parser.add_argument("--players", type=int,
                        help="players at the table (default: 2, or one per opponent given + you)")
    parser.add_argument("--opponents", nargs="+", metavar="SPEC", default=[],
                        help="agent specs, one per other seat or one for all: random, rule, search, "
                             "pretrained:GAME, onnx:PATH, ppo:PATH (torch), sb3:PATH.zip (default: the game's "
                             "pretrained policy); specs given here are offered on the page too")
    parser.add_argument("--hint", default="rule", metavar="SPEC",
                        help="the agent the hint button asks (default rule)")
    parser.add_argument("--no-practice", action="store_true",
                        help="refuse practice deals (a seed the person chooses, G10): every deal is then the "
                             "server's secret until its match is over")
    parser.add_argument("--new-games-per-minute", type=float, default=30, metavar="N",
                        help="new games one client address may start a minute (default 30)")
    parser.add_argument("--option", action="append", default=[], type=option_argument, metavar="KEY=VALUE",
                        help="a rule option (RULES) of the default game, e.g. wild_joker=true; repeatable")
    parser.add_argument("--delay", type=int, default=600, metavar="MS",
                        help="pause before each opponent move on the page, in ms (default 600)")
    parser.add_argument("--max-games", type=int, default=1000,
                        help="open games kept at most; a new one then drops its own client's game left alone "
                             "longest, or anyone's when it has none (default 1000)")
    parser.add_argument("--idle-minutes", type=float, default=60.0,
                        help="a game left alone this long expires (default 60)")
    parser.add_argument("--record-dir", metavar="DIR",
                        help="also save every finished hand as a game record (docs/records.md) in DIR, one "
                             "JSON Lines file a match (made if missing)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Check the settings, then serve until interrupted; 2 for a bad command line."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        import uvicorn

        from .app import TableDefaults, create_app
        from .archive import RecordDir
        from .guard import WILDCARD_HOSTS, served_names
        from .opponents import AgentSource
        from .serve import listening_socket
        from .store import GameStore
    except ImportError as error:
        parser.exit(2, f"rummy-web: error: the web table needs the [web] extra (pip install 'rummy-env[web]'): "
                       f"{error}\n")
    specs = list(args.opponents)
    players = args.players if args.players is not None else (len(specs) + 1 if len(specs) > 1 else 2)
    options = dict(args.option)
    try:
        make_ruleset(args.game, players, **options)
    except ValueError as error:
        parser.exit(2, f"rummy-web: error: {error}\n")
    if len(specs) > 1 and len(specs) != players - 1:
        parser.exit(2, f"rummy-web: error: {len(specs)} opponents for {players} players: give one spec for every "
                       f"other seat ({players - 1}), or one for all\n")
    if args.delay < 0 or args.max_games < 1 or not 0 < args.idle_minutes < math.inf:
        parser.exit(2, "rummy-web: error: --delay must be >= 0, --max-games >= 1 and --idle-minutes > 0\n")
    if not 0 < args.new_games_per_minute < math.inf:
        parser.exit(2, "rummy-web: error: --new-games-per-minute must be a positive number\n")
    from .errors import WebError

    source = AgentSource(specs + [args.hint], args.game)
    try:
        for i, spec in enumerate(dict.fromkeys(specs + [args.hint])):
            source.make(spec, args.game, players, i, options)  # a bad spec stops here, named
    except WebError as error:
        parser.exit(2, f"rummy-web: error: {error.message}\n")
    try:
        record_dir = None if args.record_dir is None else RecordDir(args.record_dir)
    except OSError as error:
        parser.exit(2, f"rummy-web: error: --record-dir {args.record_dir}: cannot be written: "
                       f"{error.strerror or error}\n")
    defaults = TableDefaults(game=args.game, players=players, opponents=tuple(specs), hint=args.hint,
                             options=options, delay_ms=args.delay)
    names = served_names(args.host, args.allowed_host)
    app = create_app(defaults, GameStore(args.max_games, args.idle_minutes * 60), source,
                     practice=not args.no_practice, host_names=names, new_games_per_minute=args.new_games_per_minute,
                     record_dir=record_dir)
    try:
        sock = listening_socket(args.host, args.port)
    except OSError as error:
        parser.exit(2, f"rummy-web: error: cannot listen on {args.host}:{args.port}: {error.strerror or error}\n")
    host, port = sock.getsockname()[:2]
    everywhere = host in WILDCARD_HOSTS
    if everywhere:
        host = "127.0.0.1" if "." in host else "::1"
    shown = f"[{host}]" if ":" in host else host
    print(f"rummy-web: serving the table at http://{shown}:{port}/ (Ctrl-C stops)", flush=True)
    if everywhere:
        print(f"rummy-web: listening on every address; the page answers to the names "
              f"{', '.join(sorted(names))} only (add others with --allowed-host NAME)", flush=True)
    if record_dir is not None:
        print(f"rummy-web: each finished hand is saved in {record_dir.path}/, one file a match (docs/records.md)",
              flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
